"""The operator's tests, against a kubetwist server from the pytest fixture."""

import os
import time

import kubernetes
import pytest
from kopf.testing import KopfRunner

HERE = os.path.dirname(os.path.abspath(__file__))
OPERATOR = os.path.join(HERE, "..", "greeter.py")
GROUP, VERSION, PLURAL = "demo.kubetwist.dev", "v1", "greetings"


def eventually(check, timeout=30.0):
    """Poll check() until it returns a true value (returned) or the timeout passes."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


@pytest.fixture
def operator(kubetwist_server, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", kubetwist_server.kubeconfig)
    with KopfRunner(["run", "-A", "--standalone", "--verbose", OPERATOR]) as runner:
        yield runner
    print(runner.output)  # shown by pytest when the test fails
    assert runner.exit_code == 0, runner.output
    assert runner.exception is None


@pytest.mark.kubetwist_crds("../crd.yaml")
def test_greeting_lifecycle(kubetwist_client, operator):
    core = kubernetes.client.CoreV1Api(kubetwist_client)
    custom = kubernetes.client.CustomObjectsApi(kubetwist_client)
    args = (GROUP, VERSION, "default", PLURAL)
    custom.create_namespaced_custom_object(*args, {
        "apiVersion": f"{GROUP}/{VERSION}", "kind": "Greeting",
        "metadata": {"name": "hello"}, "spec": {"message": "hi"}})

    def configmap():
        try:
            return core.read_namespaced_config_map("hello-greeting", "default")
        except kubernetes.client.ApiException as e:
            assert e.status == 404
            return None

    cm = eventually(configmap)
    assert cm is not None
    assert cm.data == {"message": "hi"}
    assert cm.metadata.owner_references[0].name == "hello"

    def status(predicate):
        obj = custom.get_namespaced_custom_object(*args, "hello")
        return obj if predicate(obj.get("status") or {}) else None

    obj = eventually(lambda: status(lambda s: s.get("phase") == "Ready"
                                    and s.get("create_configmap")))
    assert obj is not None
    assert obj["status"]["create_configmap"] == {"configmap": "hello-greeting"}
    assert "demo.kubetwist.dev/cleanup" in obj["metadata"]["finalizers"]
    # the timer ticks, at least twice
    assert eventually(lambda: status(lambda s: (s.get("ticks") or 0) >= 2))

    custom.patch_namespaced_custom_object(*args, "hello", {"spec": {"message": "hello"}})
    assert eventually(lambda: (configmap().data or {}).get("message") == "hello")

    custom.delete_namespaced_custom_object(*args, "hello")

    def gone():
        try:
            custom.get_namespaced_custom_object(*args, "hello")
        except kubernetes.client.ApiException as e:
            return e.status == 404
        return False

    assert eventually(gone)
    assert configmap() is None  # deleted by the finalizer's handler
