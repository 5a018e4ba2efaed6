"""
Golden vectors: every Service, Namespace, Secret, ConfigMap, ServiceAccount and Endpoints of
the shared kube-apiserver dry-run answers, run through default -> registry defaults (Services)
-> prepare_for_create -> validate, and compared to what kube-apiserver returned.

The request handler's part (the namespace from the URL) and the service registry's allocation
are simulated: allocated values are written as C{<allocated>}, as the golden file normalises
them.
"""

from __future__ import annotations

import copy

import orjson
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.core import register
from kubetwist.apis.core.services import default_service_registry_fields
from kubetwist.runtime.field import aggregate_message
from tests.support import shared_dir

KINDS = {
    "Service": "services",
    "Namespace": "namespaces",
    "Secret": "secrets",
    "ConfigMap": "configmaps",
    "ServiceAccount": "serviceaccounts",
    "Endpoints": "endpoints",
}


def _vectors() -> list[dict]:
    out = []
    with open(shared_dir("golden", "dry-run-kubernetes-examples.jsonl"), "rb") as f:
        for line in f:
            vector = orjson.loads(line)
            if (vector.get("object") or {}).get("kind") in KINDS:
                out.append(vector)
    return out


def _simulate_allocation(svc: dict) -> None:
    """What the service registry's allocators would add, as the golden file prints it."""
    spec = svc["spec"]
    if spec.get("type") == "ExternalName":
        return
    spec["clusterIP"] = "<allocated>"
    spec["clusterIPs"] = "<allocated>"
    needs_node_port = spec.get("type") == "NodePort" or (
        spec.get("type") == "LoadBalancer"
        and spec.get("allocateLoadBalancerNodePorts") is not False
    )
    if needs_node_port:
        for port in spec.get("ports") or []:
            port["nodePort"] = "<allocated>"
    if spec.get("type") == "LoadBalancer" and spec.get("externalTrafficPolicy") == "Local":
        spec["healthCheckNodePort"] = "<allocated>"


def run_create(obj: dict) -> tuple[dict, list]:
    """
    The create path for one golden object: namespace from the request, default, registry
    defaults (Services), prepare_for_create, validate, allocation.
    """
    obj = copy.deepcopy(obj)
    kind = obj["kind"]
    strategy = register.STRATEGIES[KINDS[kind]]
    if strategy.namespaced:
        obj.setdefault("metadata", {})["namespace"] = "fidelity"
    strategy.default(obj)
    errors = []
    if kind == "Service":
        errors.extend(default_service_registry_fields(obj))
        if errors:
            return obj, errors
    strategy.prepare_for_create(obj)
    errors.extend(strategy.validate(obj))
    if kind == "Service" and not errors:
        _simulate_allocation(obj)
    return obj, errors


class GoldenCoreTests(SynchronousTestCase):
    """One test per golden vector of a core kind this package owns."""

    def test_vectors_present(self) -> None:
        """The golden file holds the 69 vectors of these kinds that the tests below check."""
        self.assertEqual(len(_vectors()), 69)


def _make_test(vector: dict):
    def test(self: SynchronousTestCase) -> None:
        result, errors = run_create(vector["object"])
        if vector["accepted"]:
            self.assertEqual(errors, [], aggregate_message(errors) if errors else "")
            self.assertEqual(result, vector["response"])
        else:
            self.assertNotEqual(errors, [])
            self.assertIn(aggregate_message(errors), vector["error"])

    kind = vector["object"]["kind"]
    name = vector["object"].get("metadata", {}).get("name", "")
    verdict = "accepts" if vector["accepted"] else "refuses"
    test.__doc__ = (
        f"kube-apiserver {verdict} {kind} {name!r} ({vector['file']}#{vector['index']}); "
        "kubetwist returns the same object."
    )
    return test


for _i, _vector in enumerate(_vectors()):
    _kind = _vector["object"]["kind"]
    _name = (_vector["object"].get("metadata", {}).get("name") or "x").replace("-", "_")
    setattr(GoldenCoreTests, f"test_{_i:03d}_{_kind.lower()}_{_name}", _make_test(_vector))
