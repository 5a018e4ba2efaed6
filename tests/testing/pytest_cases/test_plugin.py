"""
The pytest plugin's fixtures (run by tests/testing/test_pytest_plugin.py in a pytest
subprocess; this directory has no __init__.py, so trial does not collect it).
"""

import os

import pytest

CRD = os.path.join("..", "widgets-crd.yaml")
SEEN = []


def served(server, group="example.kubetwist.dev"):
    code, body = server.request("GET", f"/apis/{group}/v1")
    return code == 200 and "widgets" in [r["name"] for r in body["resources"]]


def test_session_server_shared(kubetwist_server, kubetwist_kubeconfig):
    SEEN.append(kubetwist_server)
    assert kubetwist_kubeconfig == kubetwist_server.kubeconfig
    assert kubetwist_server.request("GET", "/readyz") == (200, "ok")


def test_session_server_is_the_same(kubetwist_server):
    SEEN.append(kubetwist_server)
    assert len(set(map(id, SEEN))) == 1


@pytest.mark.kubetwist_crds(CRD)
def test_marker_installs_crds_in_the_session_server(kubetwist_server):
    assert served(kubetwist_server)


@pytest.mark.kubetwist_crds(CRD)
def test_function_server_marker(kubetwist_function_server, kubetwist_server):
    assert kubetwist_function_server is not kubetwist_server
    assert served(kubetwist_function_server)


@pytest.mark.parametrize("kubetwist_function_server", [[os.path.join(
    os.path.dirname(os.path.abspath(__file__)), CRD)]], indirect=True)
def test_function_server_param(kubetwist_function_server):
    assert served(kubetwist_function_server)


def test_client(kubetwist_client):
    from kubernetes import client

    names = [n.metadata.name for n in client.CoreV1Api(kubetwist_client).list_namespace().items]
    assert "default" in names
