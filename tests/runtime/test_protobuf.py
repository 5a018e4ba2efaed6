"""
Tests for L{kubetwist.runtime.protobuf}: decoding the bodies real C{kubectl} sends (recorded in
C{fixtures/}), byte-exact re-encoding, the special types, and upstream's error texts.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import protobuf as pb
from kubetwist.runtime.errors import StatusError

FIXTURES = Path(__file__).parent / "fixtures"


def fixture(name: str) -> bytes:
    """The body C{kubectl <name>} sent, as recorded by L{tests.runtime.kubectl_capture}."""
    return (FIXTURES / f"kubectl-{name}.pb").read_bytes()


#: What Go's JSON encoder prints for each recorded typed object (kube-apiserver v1.32).
EXPECTED = {
    "create-namespace": {
        "kind": "Namespace", "apiVersion": "v1",
        "metadata": {"name": "x", "creationTimestamp": None},
        "spec": {}, "status": {},
    },
    "create-configmap": {
        "kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": "c", "namespace": "default", "creationTimestamp": None},
        "data": {"a": "b"},
    },
    "create-secret": {
        "kind": "Secret", "apiVersion": "v1",
        "metadata": {"name": "s", "namespace": "default", "creationTimestamp": None},
        "data": {"k": "dg=="},
    },
    "create-secret-utf8": {
        "kind": "Secret", "apiVersion": "v1",
        "metadata": {"name": "bin", "namespace": "default", "creationTimestamp": None},
        "data": {"a": base64.b64encode("\u00e9\u00ff".encode()).decode()},
        "type": "Opaque",
    },
    "create-deployment": {
        "kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": "d", "namespace": "default", "creationTimestamp": None,
                     "labels": {"app": "d"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "d"}},
            "template": {
                "metadata": {"creationTimestamp": None, "labels": {"app": "d"}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx",
                                         "ports": [{"containerPort": 80}], "resources": {}}]},
            },
            "strategy": {},
        },
        "status": {},
    },
    "create-service-clusterip": {
        "kind": "Service", "apiVersion": "v1",
        "metadata": {"name": "s", "namespace": "default", "creationTimestamp": None,
                     "labels": {"app": "s"}},
        "spec": {"ports": [{"name": "80-8080", "protocol": "TCP", "port": 80,
                            "targetPort": 8080}],
                 "selector": {"app": "s"}, "type": "ClusterIP"},
        "status": {"loadBalancer": {}},
    },
    "create-service-nodeport": {
        "kind": "Service", "apiVersion": "v1",
        "metadata": {"name": "np", "namespace": "default", "creationTimestamp": None,
                     "labels": {"app": "np"}},
        "spec": {"ports": [{"name": "5678-8080", "protocol": "TCP", "port": 5678,
                            "targetPort": 8080, "nodePort": 30001}],
                 "selector": {"app": "np"}, "type": "NodePort"},
        "status": {"loadBalancer": {}},
    },
    "create-serviceaccount": {
        "kind": "ServiceAccount", "apiVersion": "v1",
        "metadata": {"name": "sa", "namespace": "default", "creationTimestamp": None},
    },
    "create-pdb": {
        "kind": "PodDisruptionBudget", "apiVersion": "policy/v1",
        "metadata": {"name": "pdb", "namespace": "default", "creationTimestamp": None},
        "spec": {"minAvailable": "50%", "selector": {"matchLabels": {"app": "rails"}}},
        "status": {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0,
                   "expectedPods": 0},
    },
}


def dumps(obj: object) -> str:
    """JSON text keeping key order, so that tests also check Go's field order."""
    return json.dumps(obj, sort_keys=False)


class KubectlFixtureTests(SynchronousTestCase):
    """The bodies kubectl 1.37 sends from its typed clients."""

    def test_decode(self) -> None:
        """
        Each recorded body decodes to exactly the dict Go's JSON encoder prints for the typed
        object, keys in Go's field order.
        """
        for name, expected in EXPECTED.items():
            self.assertEqual(dumps(pb.decode(fixture(name))), dumps(expected), name)

    def test_reencode_identical(self) -> None:
        """Re-encoding a decoded body gives kubectl's bytes back, byte for byte."""
        for name in EXPECTED:
            body = fixture(name)
            self.assertEqual(pb.encode(pb.decode(body)), body, name)

    def test_encode_from_json(self) -> None:
        """Encoding the JSON form (as it would come from storage) gives Go's bytes."""
        for name, expected in EXPECTED.items():
            self.assertEqual(pb.encode(expected), fixture(name), name)

    def test_envelope(self) -> None:
        """The envelope carries the type meta, the raw message and two empty strings."""
        api_version, kind, raw, encoding, ctype = pb.split_envelope(
            fixture("create-namespace"))
        self.assertEqual((api_version, kind, encoding, ctype), ("v1", "Namespace", "", ""))
        # Every non-pointer string and int of ObjectMeta is written, even when empty.
        self.assertEqual(
            raw, b'\n\x11\n\x01x\x12\x00\x1a\x00"\x00*\x002\x008\x00B\x00\x12\x00\x1a\x02\n\x00')


def ld(number: int, payload: bytes) -> bytes:
    """One length-delimited field (lengths under 128)."""
    return bytes([number << 3 | 2, len(payload)]) + payload


def ns_body(raw: bytes, api_version: bytes = b"v1", kind: bytes = b"Namespace") -> bytes:
    """A protobuf body around a hand-written raw message."""
    tm = b"\n" + bytes([len(api_version)]) + api_version + b"\x12" + bytes([len(kind)]) + kind
    return pb.MAGIC + b"\n" + bytes([len(tm)]) + tm + b"\x12" + bytes([len(raw)]) + raw + \
        b"\x1a\x00\x22\x00"


class DecodeErrorTests(SynchronousTestCase):
    """Malformed bodies are 400 BadRequest with upstream's texts."""

    def assertBadRequest(self, body: bytes, message: str, **kw) -> None:
        with self.assertRaises(pb.ProtobufDecodeError) as ctx:
            pb.decode(body, **kw)
        self.assertEqual((ctx.exception.code, ctx.exception.reason), (400, "BadRequest"))
        self.assertEqual(ctx.exception.message, message)
        self.assertIsInstance(ctx.exception, StatusError)

    def test_empty(self) -> None:
        """An empty body is C{empty data}."""
        self.assertBadRequest(
            b"", "the object provided is unrecognized (must be of type Namespace): "
            "empty data ()", default_gvk=("", "v1", "Namespace"))

    def test_wrong_prefix(self) -> None:
        """A body without the magic names the expected prefix."""
        self.assertBadRequest(
            b'{"kind":"x"}', "the object provided is unrecognized (must be of type Unknown): "
            "provided data does not appear to be a protobuf message, expected prefix "
            '[107 56 115 0] ({"kind":"x"})')

    def test_magic_only(self) -> None:
        """The magic alone is C{empty body}."""
        self.assertBadRequest(
            pb.MAGIC, "the object provided is unrecognized (must be of type Unknown): "
            "empty body (k8s\x00)")

    def test_truncated_object(self) -> None:
        """A raw message cut short is C{unexpected EOF}, named after the envelope's kind."""
        self.assertBadRequest(
            ns_body(b"\n\x05\n\x01"),
            'Namespace in version "v1" cannot be handled as a Namespace: unexpected EOF')

    def test_wrong_wire_type(self) -> None:
        """A known field with the wrong wire type names the Go field."""
        self.assertBadRequest(
            ns_body(b"\x08\x01"),
            'Namespace in version "v1" cannot be handled as a Namespace: '
            "proto: wrong wireType = 0 for field Metadata")

    def test_illegal_tag(self) -> None:
        """Field number 0 is an illegal tag of the message being read."""
        self.assertBadRequest(
            ns_body(b"\n\x02\x00\x00"),
            'Namespace in version "v1" cannot be handled as a Namespace: '
            "proto: ObjectMeta: illegal tag 0 (wire type 0)")

    def test_integer_overflow(self) -> None:
        """A varint longer than ten bytes is C{proto: integer overflow}."""
        self.assertBadRequest(
            ns_body(b"\n\x0d\x38" + b"\xff" * 11 + b"\x01"),
            'Namespace in version "v1" cannot be handled as a Namespace: '
            "proto: integer overflow")

    def test_missing_kind(self) -> None:
        """An envelope without a kind, and no default, is a missing-kind error."""
        self.assertBadRequest(
            ns_body(b"", kind=b""),
            "the object provided is unrecognized (must be of type Unknown): Object 'Kind' is "
            "missing in 'runtime.TypeMeta{APIVersion:\"v1\", Kind:\"\"}' "
            "(k8s\x00\n\x06\n\x02v1\x12\x00\x12\x00\x1a\x00\"\x00)")

    def test_defaults_fill_envelope(self) -> None:
        """The endpoint's kind and version fill in a missing kind and version."""
        obj = pb.decode(ns_body(b"", api_version=b"", kind=b""),
                        default_gvk=("", "v1", "Namespace"))
        self.assertEqual(obj["kind"], "Namespace")
        self.assertEqual(obj["apiVersion"], "v1")

    def test_unsupported_kind(self) -> None:
        """A kind without tables is a 415 carrying the group, version and kind."""
        with self.assertRaises(pb.UnsupportedKindError) as ctx:
            pb.decode(ns_body(b"", api_version=b"example.com/v1", kind=b"Widget"))
        self.assertEqual(ctx.exception.code, 415)
        self.assertEqual(ctx.exception.reason, "UnsupportedMediaType")
        self.assertEqual(ctx.exception.gvk, ("example.com", "v1", "Widget"))

    def test_unknown_fields_skipped(self) -> None:
        """Unknown field numbers, of every wire type, are skipped."""
        raw = b"\n\x05\n\x01xB\x00" + b"\xa0\x06\x07" + b"\xaa\x06\x02hi" + b"\xa9\x06" + \
            b"\x00" * 8 + b"\x12\x00\x1a\x00"
        self.assertEqual(pb.decode(ns_body(raw)), EXPECTED["create-namespace"])


class SpecialTypeTests(SynchronousTestCase):
    """Time, MicroTime, Quantity, IntOrString, RawExtension and friends."""

    def test_time(self) -> None:
        """Time is whole seconds, RFC 3339 in UTC; nanoseconds are not written."""
        obj = {"kind": "ConfigMap", "apiVersion": "v1",
               "metadata": {"name": "c", "creationTimestamp": "2024-01-02T03:04:05Z"}}
        body = pb.encode(obj)
        # creationTimestamp (8) {seconds: 1704164645, nanos: 0}
        self.assertIn(b"B\x08\x08\xa5\xfa\xcd\xac\x06\x10\x00", body)
        self.assertEqual(pb.decode(body)["metadata"]["creationTimestamp"],
                         "2024-01-02T03:04:05Z")

    def test_time_with_offset(self) -> None:
        """An offset time is written as its instant and printed in UTC."""
        obj = {"kind": "ConfigMap", "apiVersion": "v1",
               "metadata": {"creationTimestamp": "2024-01-02T05:04:05+02:00"}}
        self.assertEqual(pb.decode(pb.encode(obj))["metadata"]["creationTimestamp"],
                         "2024-01-02T03:04:05Z")

    def test_microtime(self) -> None:
        """MicroTime keeps microseconds and always prints six fractional digits."""
        lease = {"kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
                 "metadata": {"name": "l", "creationTimestamp": None},
                 "spec": {"holderIdentity": "me", "acquireTime": "2024-01-02T03:04:05.000001Z",
                          "renewTime": "2024-01-02T03:04:05.120000Z"}}
        out = pb.decode(pb.encode(lease))
        self.assertEqual(dumps(out), dumps(lease))

    def test_quantity_map(self) -> None:
        """A ResourceList is a map of Quantity messages, written sorted by key."""
        pod = {"kind": "Pod", "apiVersion": "v1",
               "metadata": {"creationTimestamp": None},
               "spec": {"containers": [{"name": "c", "resources": {
                   "limits": {"memory": "1Gi", "cpu": "500m"}}}]},
               "status": {}}
        body = pb.encode(pod)
        self.assertLess(body.index(b"cpu"), body.index(b"memory"))
        out = pb.decode(body)
        self.assertEqual(out["spec"]["containers"][0]["resources"],
                         {"limits": {"cpu": "500m", "memory": "1Gi"}})

    def test_bad_quantity(self) -> None:
        """A quantity that does not parse is a decode error."""
        # Pod.spec.containers[0].resources.limits["cpu"] = Quantity{string: ""}
        entry = ld(1, b"cpu") + ld(2, ld(1, b""))
        container = ld(1, b"c") + ld(8, ld(1, entry))
        body = ns_body(ld(2, ld(2, container)), kind=b"Pod")
        with self.assertRaises(pb.ProtobufDecodeError) as ctx:
            pb.decode(body)
        self.assertIn("quantities must match the regular expression", ctx.exception.message)

    def test_int_or_string(self) -> None:
        """IntOrString is an int or a string in JSON, a three-field message on the wire."""
        dep = {"kind": "Deployment", "apiVersion": "apps/v1",
               "metadata": {"creationTimestamp": None},
               "spec": {"selector": None, "template": {"metadata": {"creationTimestamp": None},
                                                       "spec": {"containers": None}},
                        "strategy": {"type": "RollingUpdate", "rollingUpdate": {
                            "maxUnavailable": 1, "maxSurge": "25%"}}},
               "status": {}}
        self.assertEqual(dumps(pb.decode(pb.encode(dep))), dumps(dep))

    def test_negative_int32(self) -> None:
        """A negative int32 is a ten-byte varint and decodes back to the negative value."""
        svc = {"kind": "Service", "apiVersion": "v1",
               "metadata": {"creationTimestamp": None},
               "spec": {"ports": [{"port": -1, "targetPort": 0}]},
               "status": {"loadBalancer": {}}}
        body = pb.encode(svc)
        self.assertIn(b"\x18" + b"\xff" * 9 + b"\x01", body)
        self.assertEqual(pb.decode(body)["spec"]["ports"][0]["port"], -1)

    def test_packed_repeated(self) -> None:
        """Packed repeated scalars are accepted as well as unpacked ones."""
        # PodSpec.securityContext (14) { supplementalGroups (4) packed [1, 300] }
        sc = b"\x22\x03\x01\xac\x02"
        spec = b"\x72" + bytes([len(sc)]) + sc
        out = pb.decode(ns_body(b"\x12" + bytes([len(spec)]) + spec, kind=b"Pod"))
        self.assertEqual(out["spec"]["securityContext"], {"supplementalGroups": [1, 300]})

    def test_zero_values(self) -> None:
        """Absent non-omitempty fields print Go's zero values: null lists, "" strings."""
        out = pb.decode(ns_body(b"", kind=b"Pod"))
        self.assertEqual(dumps(out), dumps({
            "kind": "Pod", "apiVersion": "v1", "metadata": {"creationTimestamp": None},
            "spec": {"containers": None}, "status": {}}))

    def test_inline_volume_source(self) -> None:
        """An inline embed (Volume.VolumeSource) is flat in JSON, nested on the wire."""
        pod = {"kind": "Pod", "apiVersion": "v1", "metadata": {"creationTimestamp": None},
               "spec": {"volumes": [{"name": "v", "emptyDir": {"sizeLimit": "1Gi"}}],
                        "containers": None},
               "status": {}}
        body = pb.encode(pod)
        # Volume {name: "v", volumeSource (2) {emptyDir (2) {medium: "", sizeLimit {"1Gi"}}}}
        self.assertIn(b"\n\x01v\x12\x0b\x12\t\n\x00\x12\x05\n\x031Gi", body)
        self.assertEqual(dumps(pb.decode(body)), dumps(pod))

    def test_raw_extension_json(self) -> None:
        """A RawExtension without a known kind is written as compact JSON bytes."""
        rev = {"kind": "ControllerRevision", "apiVersion": "apps/v1",
               "metadata": {"creationTimestamp": None},
               "data": {"spec": {"template": {"$patch": "replace"}}}, "revision": 3}
        body = pb.encode(rev)
        self.assertIn(b'{"spec":{"template":{"$patch":"replace"}}}', body)
        self.assertEqual(dumps(pb.decode(body)), dumps(rev))

    def test_watch_event_nested_protobuf(self) -> None:
        """A WatchEvent's object of a known kind is a nested protobuf body."""
        event = {"kind": "WatchEvent", "apiVersion": "v1", "type": "ADDED",
                 "object": EXPECTED["create-configmap"]}
        body = pb.encode(event)
        self.assertIn(fixture("create-configmap"), body)
        self.assertEqual(pb.decode(body), event)

    def test_managed_fields(self) -> None:
        """FieldsV1 is the raw JSON object; Time in managed fields is RFC 3339."""
        cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {
            "name": "c", "creationTimestamp": None,
            "managedFields": [{"manager": "kubectl", "operation": "Update",
                               "apiVersion": "v1", "time": "2024-01-02T03:04:05Z",
                               "fieldsType": "FieldsV1",
                               "fieldsV1": {"f:data": {".": {}, "f:a": {}}}}]}}
        body = pb.encode(cm)
        self.assertIn(b'{"f:data":{".":{},"f:a":{}}}', body)
        self.assertEqual(dumps(pb.decode(body)), dumps(cm))

    def test_status(self) -> None:
        """Status (a meta kind) is accepted under any group version."""
        status = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                  "message": "m", "reason": "NotFound",
                  "details": {"name": "x", "kind": "pods"}, "code": 404}
        self.assertEqual(dumps(pb.decode(pb.encode(status))), dumps(status))
        self.assertTrue(pb.can_encode("apps", "v1", "DeleteOptions"))


class CanEncodeTests(SynchronousTestCase):
    """L{pb.can_encode} knows the built-in kinds only."""

    def test_kinds(self) -> None:
        """Built-in kinds and their lists are encodable; custom kinds are not."""
        self.assertTrue(pb.can_encode("", "v1", "Pod"))
        self.assertTrue(pb.can_encode("apps", "v1", "DeploymentList"))
        self.assertTrue(pb.can_encode("coordination.k8s.io", "v1", "Lease"))
        self.assertTrue(pb.can_encode("autoscaling", "v1", "Scale"))
        self.assertTrue(pb.can_encode("policy", "v1", "Eviction"))
        self.assertFalse(pb.can_encode("apps", "v1beta1", "Deployment"))
        self.assertFalse(pb.can_encode("example.com", "v1", "Widget"))

    def test_encode_unsupported(self) -> None:
        """Encoding a kind without tables raises the 415 error."""
        with self.assertRaises(pb.UnsupportedKindError):
            pb.encode({"kind": "Widget", "apiVersion": "example.com/v1"})


class FormatTests(SynchronousTestCase):
    """Go's text forms of durations and times."""

    def test_duration(self) -> None:
        """C{time.Duration.String()} forms."""
        cases = {0: "0s", 1: "1ns", 1500: "1.5\u00b5s", 300 * 10**6: "300ms",
                 1_500_000_000: "1.5s", 3600 * 10**9: "1h0m0s", 90 * 10**9: "1m30s",
                 -(10**9): "-1s"}
        for ns, text in cases.items():
            self.assertEqual(pb.format_duration(ns), text)
            self.assertEqual(pb.parse_duration(text), ns)

    def test_zero_time(self) -> None:
        """Go's zero time prints as null and is written as an empty message."""
        self.assertIsNone(pb.format_time(-62135596800))
        self.assertEqual(pb.format_time(-62135596800 + 86400), "0001-01-02T00:00:00Z")
        self.assertEqual(pb.parse_time(None), (-62135596800, 0))
