# -*- test-case-name: tests.apiextensions.test_schema_crds -*-
"""
The schema engine over the real CRDs of cert-manager and prometheus-operator (the shared
manifests): all are structural, their defaults are valid, and realistic
ServiceMonitor and Certificate objects validate, prune and default as upstream would.
"""

import copy
import os

import yaml
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions.schema import (
    CompiledSchema,
    prune,
    prune_non_nullable_nulls,
    structural_errors,
    validate_schema_defaults,
)
from tests.support import shared_dir

_LOADED: list = []


def _crds():
    """The CRDs, parsed once per test run (libyaml when available)."""
    if _LOADED:
        return _LOADED
    crd_dir = shared_dir("manifests", "crds")
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    for name in sorted(os.listdir(crd_dir)):
        if name.endswith(".yaml"):
            with open(crd_dir / name) as f:
                _LOADED.extend(d for d in yaml.load_all(f, Loader=loader) if d)
    return _LOADED


def _schema(crds, plural):
    for crd in crds:
        if crd["spec"]["names"]["plural"] == plural:
            return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    raise KeyError(plural)


class RealCRDTests(SynchronousTestCase):
    """
    The engine over the large real CRDs.
    """

    def setUp(self):
        self.crds = _crds()
        self.assertTrue(self.crds, "no CRD in shared/manifests/crds")

    def test_all_structural(self):
        """
        Every version schema of every CRD is structural and has valid, pruned defaults.
        """
        problems = []
        for crd in self.crds:
            for i, v in enumerate(crd["spec"]["versions"]):
                p = f"spec.versions[{i}].schema.openAPIV3Schema"
                s = v["schema"]["openAPIV3Schema"]
                problems += [(crd["metadata"]["name"], e.error())
                             for e in structural_errors(s, p) + validate_schema_defaults(s, p)]
        self.assertEqual((len(self.crds), problems), (7, []))

    def test_service_monitor(self):
        """
        A ServiceMonitor with unknown fields, a bad enum value and a wrong type is pruned
        and refused with upstream's messages; a good one passes.
        """
        c = CompiledSchema(_schema(self.crds, "servicemonitors"))
        good = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor",
                "metadata": {"name": "web", "namespace": "default"},
                "spec": {"selector": {"matchLabels": {"app": "web"}},
                         "endpoints": [{"port": "http", "interval": "30s"}]}}
        self.assertEqual(c.validate(good), [])
        bad = copy.deepcopy(good)
        bad["metadata"]["bogus"] = 1
        bad["spec"]["endpoints"][0].update(
            {"scheme": "ftp", "extra": True, "interval": "30 seconds"})
        bad["spec"]["jobLabel"] = 3
        self.assertEqual(c.prune(bad), ["metadata.bogus", "spec.endpoints[0].extra"])
        c.prune_nulls(bad)
        c.default(bad)
        self.assertEqual([e.error() for e in c.validate(bad)], [
            ('spec.endpoints[0].interval: Invalid value: "30 seconds": spec.endpoints[0].interval '
            "in body should match '^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?"
            "(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$'"),
            ('spec.endpoints[0].scheme: Unsupported value: "ftp": supported values: "http", '
            '"https", "HTTP", "HTTPS"'),
            ('spec.jobLabel: Invalid value: "integer": spec.jobLabel in body must be of type '
            'string: "integer"'),
        ])

    def test_certificate(self):
        """
        A Certificate missing its required fields is refused; a complete one passes.
        """
        c = CompiledSchema(_schema(self.crds, "certificates"))
        good = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
                "metadata": {"name": "tls", "namespace": "default"},
                "spec": {"secretName": "tls", "dnsNames": ["example.com"],
                         "issuerRef": {"name": "letsencrypt", "kind": "ClusterIssuer"},
                         "duration": "2160h", "usages": ["digital signature"],
                         "privateKey": {"algorithm": "ECDSA", "size": 256}}}
        self.assertEqual(c.validate(good), [])
        bad = {"apiVersion": "cert-manager.io/v1", "kind": "Certificate",
               "metadata": {"name": "tls"},
               "spec": {"dnsNames": "example.com", "issuerRef": {},
                        "privateKey": {"algorithm": "DSA"}, "usages": ["flying"]}}
        self.assertEqual([e.error() for e in c.validate(bad)], [
            ('spec.dnsNames: Invalid value: "string": spec.dnsNames in body must be of type '
            'array: "string"'),
            "spec.issuerRef.name: Required value",
            ('spec.privateKey.algorithm: Unsupported value: "DSA": supported values: "RSA", '
            '"ECDSA", "Ed25519"'),
            ('spec.usages[0]: Unsupported value: "flying": supported values: "signing", '
            '"digital signature", "content commitment", "key encipherment", "key agreement", '
            '"data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", '
            '"any", "server auth", "client auth", "code signing", "email protection", '
            '"s/mime", "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", '
            '"ocsp signing", "microsoft sgc", "netscape sgc"'),
            "spec.secretName: Required value",
        ])

    def test_prometheus_defaults(self):
        """
        Defaulting a Prometheus fills the operator's defaults, inside array items too.
        """
        schema = _schema(self.crds, "prometheuses")
        obj = {"apiVersion": "monitoring.coreos.com/v1", "kind": "Prometheus",
               "metadata": {"name": "k8s"},
               "spec": {"replicas": 1, "containers": [{"name": "c", "ports": [
                   {"containerPort": 80}]}], "unknown": None}}
        self.assertEqual(prune(obj, schema), ["spec.unknown"])
        prune_non_nullable_nulls(obj, schema)
        c = CompiledSchema(schema)
        c.default(obj)
        self.assertEqual(obj["spec"]["containers"][0]["ports"][0]["protocol"], "TCP")
        self.assertEqual(c.validate(obj), [])
