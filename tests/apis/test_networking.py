"""
Tests for L{kubetwist.apis.networking}: Ingress, IngressClass and NetworkPolicy defaulting,
validation messages and paths as kube-apiserver v1.32 writes them, printer rows, and the HTTP
round trip through the installed networking.k8s.io/v1 group.
"""

from __future__ import annotations

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.networking import validation as v
from kubetwist.apis.networking.printers import (
    INGRESS_CLASS_TABLE,
    INGRESS_TABLE,
    NETWORK_POLICY_TABLE,
)
from tests.support import KubeTestCase


def _ing(name="web", paths=None, **spec) -> dict:
    if paths is None:
        paths = [{"path": "/", "pathType": "Prefix",
                  "backend": {"service": {"name": "web", "port": {"number": 80}}}}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"rules": [{"host": "example.com", "http": {"paths": paths}}], **spec}}


def _messages(errs) -> list[str]:
    return [e.error() for e in errs]


class NetworkPolicyTests(SynchronousTestCase):
    def test_policy_types_default(self):
        """policyTypes is [Ingress], plus Egress when egress rules exist; ports get TCP."""
        np = {"metadata": {"name": "a", "namespace": "default"},
              "spec": {"egress": [{"ports": [{"port": 53}]}]}}
        v.default_network_policy(np)
        self.assertEqual(np["spec"]["policyTypes"], ["Ingress", "Egress"])
        self.assertEqual(np["spec"]["egress"][0]["ports"], [{"port": 53, "protocol": "TCP"}])
        self.assertEqual(np["spec"]["podSelector"], {})
        other = {"metadata": {"name": "b"}, "spec": {"podSelector": {}}}
        v.default_network_policy(other)
        self.assertEqual(other["spec"]["policyTypes"], ["Ingress"])

    def test_port_and_peer_errors(self):
        """endPort with a named port, an empty peer and a bad except CIDR are reported."""
        np = {"metadata": {"name": "a", "namespace": "default"},
              "spec": {"podSelector": {}, "ingress": [{
                  "ports": [{"port": "http", "endPort": 90, "protocol": "TCP"}],
                  "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/8",
                                            "except": ["192.168.0.0/16"]}}]}]}}
        self.assertEqual(_messages(v.validate_network_policy(np)), [
            "spec.ingress[0].ports[0].endPort: Invalid value: 90: may not be specified when "
            "`port` is non-numeric",
            "spec.ingress[0].from[0]: Required value: must specify a peer",
            'spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: "192.168.0.0/16": must '
            "be a strict subset of `cidr`",
        ])

    def test_table_row(self):
        """The printer shows the pod selector, <none> when empty."""
        np = {"metadata": {"name": "a"}, "spec": {"podSelector": {"matchLabels": {"app": "x"}}}}
        self.assertEqual(NETWORK_POLICY_TABLE.row(np)[:2], ["a", "app=x"])
        self.assertEqual(NETWORK_POLICY_TABLE.row({"metadata": {"name": "b"},
                                                   "spec": {"podSelector": {}}})[1], "<none>")


class IngressTests(SynchronousTestCase):
    def test_path_type_required(self):
        """A path without pathType is refused with upstream's message, nothing else checked."""
        ing = _ing(paths=[{"path": "/", "backend": {"service": {"name": "web",
                                                                 "port": {"number": 80}}}}])
        self.assertEqual(_messages(v.validate_ingress(ing)), [
            "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified"])

    def test_backend_port_rules(self):
        """Both port name and number, or neither, are refused at the backend path."""
        both = _ing(paths=[{"path": "/", "pathType": "Exact", "backend": {"service": {
            "name": "web", "port": {"number": 80, "name": "http"}}}}])
        self.assertEqual(_messages(v.validate_ingress(both)), [
            'spec.rules[0].http.paths[0].backend: Invalid value: "": cannot set both port name '
            "& port number"])
        neither = _ing(paths=[{"path": "/", "pathType": "Exact",
                               "backend": {"service": {"name": "web"}}}])
        self.assertEqual(_messages(v.validate_ingress(neither)), [
            "spec.rules[0].http.paths[0].backend: Required value: port name or number is "
            "required"])

    def test_prefix_path_shape(self):
        """Prefix paths must be absolute and free of '//'."""
        ing = _ing(paths=[{"path": "a//b", "pathType": "Prefix",
                           "backend": {"service": {"name": "web", "port": {"number": 80}}}}])
        self.assertEqual(_messages(v.validate_ingress(ing)), [
            'spec.rules[0].http.paths[0].path: Invalid value: "a//b": must be an absolute path',
            "spec.rules[0].http.paths[0].path: Invalid value: \"a//b\": must not contain '//'"])

    def test_rules_or_default_backend(self):
        """An empty spec needs rules or a default backend."""
        ing = {"metadata": {"name": "x", "namespace": "default"}, "spec": {}}
        self.assertEqual(_messages(v.validate_ingress(ing)), [
            "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or "
            "`rules` must be specified"])

    def test_class_annotation_must_match(self):
        """The legacy class annotation must equal ingressClassName."""
        ing = _ing(ingressClassName="nginx")
        ing["metadata"]["annotations"] = {"kubernetes.io/ingress.class": "traefik"}
        self.assertEqual(_messages(v.validate_ingress(ing)), [
            'annotations.kubernetes.io/ingress.class: Invalid value: "traefik": must match '
            "`ingressClassName` when both are specified"])

    def test_table_row(self):
        """Class, hosts, address and ports columns as printIngress writes them."""
        ing = _ing(ingressClassName="nginx", tls=[{"hosts": ["example.com"]}])
        ing["status"] = {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}
        self.assertEqual(INGRESS_TABLE.row(ing)[:5],
                         ["web", "nginx", "example.com", "1.2.3.4", "80, 443"])
        self.assertEqual([c["name"] for c in INGRESS_TABLE.columns],
                         ["Name", "Class", "Hosts", "Address", "Ports", "Age"])


class IngressClassTests(SynchronousTestCase):
    def test_scope_default_and_namespace_rule(self):
        """parameters.scope defaults to Cluster, which forbids a namespace."""
        ic = {"metadata": {"name": "nginx"}, "spec": {"controller": "k8s.io/ingress-nginx",
              "parameters": {"kind": "Cfg", "name": "c", "namespace": "x"}}}
        v.default_ingress_class(ic)
        self.assertEqual(ic["spec"]["parameters"]["scope"], "Cluster")
        self.assertEqual(_messages(v.validate_ingress_class(ic)), [
            "spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"])
        self.assertEqual(INGRESS_CLASS_TABLE.row(ic)[:3],
                         ["nginx", "k8s.io/ingress-nginx", "Cfg/c"])

    def test_controller_immutable(self):
        """Changing spec.controller is refused."""
        old = {"metadata": {"name": "n", "resourceVersion": "1"}, "spec": {"controller": "a/b"}}
        new = {"metadata": {"name": "n", "resourceVersion": "1"}, "spec": {"controller": "a/c"}}
        self.assertEqual(_messages(v.validate_ingress_class_update(new, old)), [
            'spec.controller: Invalid value: "a/c": field is immutable'])


class NetworkingHTTPTests(KubeTestCase):
    def test_create_ingress(self):
        """POST an Ingress: generation 1 and an empty load-balancer status."""
        code, body, _ = self.request(
            "POST", "/apis/networking.k8s.io/v1/namespaces/default/ingresses", _ing())
        self.assertEqual(code, 201)
        self.assertEqual((body["metadata"]["generation"], body["status"]),
                         (1, {"loadBalancer": {}}))

    def test_invalid_ingress(self):
        """A path without pathType gets kube-apiserver's 422."""
        ing = _ing("bad", paths=[{"path": "/", "backend": {"service": {
            "name": "web", "port": {"number": 80}}}}])
        code, body, _ = self.request(
            "POST", "/apis/networking.k8s.io/v1/namespaces/default/ingresses", ing)
        self.assertEqual((code, body["message"]), (422, (
            'Ingress.networking.k8s.io "bad" is invalid: spec.rules[0].http.paths[0].pathType: '
            "Required value: pathType must be specified")))

    def test_discovery(self):
        """Discovery lists ing/netpol short names, ingresses/status and cluster-scoped classes."""
        code, body, _ = self.request("GET", "/apis/networking.k8s.io/v1")
        self.assertEqual(code, 200)
        names = {r["name"]: r for r in body["resources"]}
        self.assertEqual(names["ingresses"]["shortNames"], ["ing"])
        self.assertEqual(names["networkpolicies"]["shortNames"], ["netpol"])
        self.assertIn("ingresses/status", names)
        self.assertFalse(names["ingressclasses"]["namespaced"])

    def test_create_network_policy(self):
        """POST a NetworkPolicy: defaulted policyTypes come back."""
        np = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
              "metadata": {"name": "deny"}, "spec": {"podSelector": {}}}
        code, body, _ = self.request(
            "POST", "/apis/networking.k8s.io/v1/namespaces/default/networkpolicies", np)
        self.assertEqual((code, body["spec"]["policyTypes"]), (201, ["Ingress"]))


class NetworkingProtobufTests(KubeTestCase):
    def test_protobuf_ingress(self):
        """An Ingress sent as protobuf (as kubectl's typed client does) decodes and is stored."""
        from kubetwist.runtime import protobuf as pb

        raw = pb.encode(_ing("proto"))
        code, body, _ = self.request(
            "POST", "/apis/networking.k8s.io/v1/namespaces/default/ingresses", raw,
            content_type="application/vnd.kubernetes.protobuf",
            headers={"Accept": "application/json"})
        self.assertEqual(code, 201)
        self.assertEqual(body["spec"]["rules"][0]["http"]["paths"][0]["backend"],
                         {"service": {"name": "web", "port": {"number": 80}}})
