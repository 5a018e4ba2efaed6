"""
A small kopf operator: a Greeting (crd.yaml) gets a ConfigMap holding its message, a status,
a finalizer that deletes the ConfigMap when the Greeting goes, and a timer counting ticks.

Run it against any cluster (or a kubetwist fixture): ``kopf run --standalone -A greeter.py``.
"""

import os

import kopf
import kubernetes

GROUP, VERSION, PLURAL = "demo.kubetwist.dev", "v1", "greetings"
FINALIZER = "demo.kubetwist.dev/cleanup"


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_):
    settings.persistence.finalizer = FINALIZER
    settings.posting.enabled = False  # no Events: keep the example's traffic small
    # the file named by $KUBECONFIG now (the client's default is read once, at its import)
    kubernetes.config.load_kube_config(config_file=os.environ.get("KUBECONFIG"))


@kopf.on.login()
def login(**kwargs):
    return kopf.login_with_kubeconfig(**kwargs)


def _configmap_name(name: str) -> str:
    return f"{name}-greeting"


@kopf.on.create(GROUP, VERSION, PLURAL)
def create_configmap(spec, name, namespace, body, patch, **_):
    configmap = {"metadata": {"name": _configmap_name(name)},
                 "data": {"message": spec["message"]}}
    kopf.adopt(configmap, owner=body)
    kubernetes.client.CoreV1Api().create_namespaced_config_map(namespace, configmap)
    patch.status["phase"] = "Ready"
    return {"configmap": _configmap_name(name)}


@kopf.on.update(GROUP, VERSION, PLURAL, field="spec.message")
def update_configmap(new, name, namespace, **_):
    kubernetes.client.CoreV1Api().patch_namespaced_config_map(
        _configmap_name(name), namespace, {"data": {"message": new}})


@kopf.on.delete(GROUP, VERSION, PLURAL)
def delete_configmap(name, namespace, **_):
    try:
        kubernetes.client.CoreV1Api().delete_namespaced_config_map(
            _configmap_name(name), namespace)
    except kubernetes.client.ApiException as e:
        if e.status != 404:
            raise


@kopf.timer(GROUP, VERSION, PLURAL, interval=0.5, initial_delay=0.5)
def tick(status, patch, **_):
    patch.status["ticks"] = (status.get("ticks") or 0) + 1
