"""
Tests for L{kubetwist.runtime.protobuf} over every kind with protobuf tables: a round trip of a
fully populated object of each kind, upstream's own bytes for apiextensions.k8s.io and
apiregistration.k8s.io (recorded from kube-apiserver v1.32 in C{fixtures/upstream-*}), the
C{JSONSchemaProps} special forms, every served built-in kind having tables, and a
CustomResourceDefinition created over HTTP in protobuf.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import protobuf as pb
from kubetwist.runtime import types as typetables
from tests.support import KubeTestCase

FIXTURES = Path(__file__).parent / "fixtures"
PROTOBUF = "application/vnd.kubernetes.protobuf"

#: One non-zero JSON value per scalar and special type.
_SAMPLES: dict[str, Any] = {
    "string": "s", "bytes": "AQI=", "int32": -7, "int64": 1 << 40, "bool": True,
    "double": 1.5, "Quantity": "1500m", "IntOrString": "http", "Time": "2024-01-02T03:04:05Z",
    "MicroTime": "2024-01-02T03:04:05.123456Z", "Duration": "1m30s",
    "FieldsV1": {"f:a": {}}, "RawExtension": {"a": [1, "b"]}, "ExtraValue": ["x", "y"],
    "JSON": {"k": [1, "<b>", None]}, "JSONSchemaPropsOrArray": [{"type": "string"}],
    "JSONSchemaPropsOrBool": False, "JSONSchemaPropsOrStringArray": ["p"],
}


def sample(type_name: str, depth: int = 0) -> Any:
    """A JSON value of C{type_name} with every field set (messages nested 3 deep at most)."""
    if type_name in _SAMPLES:
        return _SAMPLES[type_name]
    out: dict[str, Any] = {}
    if depth > 3:
        return out
    for f in typetables.TYPES[type_name].fields:
        value = sample(f.type, depth + 1)
        if f.inline:
            out.update(value)
            continue
        if f.container == "list":
            value = [value]
        elif f.container == "map":
            value = {"k": value}
        out[f.json_name] = value
    return out


def all_kinds() -> dict[tuple[str, str, str], str]:
    """Every kind with protobuf tables, the meta/v1 kinds under core/v1 included."""
    kinds = dict(typetables.KINDS)
    # (the discovery documents written without an apiVersion are tested with a version)
    kinds.update((gvk, t) for gvk, t in typetables.PROTOBUF_KINDS.items() if gvk[1])
    for kind in typetables.META_KINDS:
        kinds[("", "v1", kind)] = f"{typetables.meta_v1.PACKAGE}.{kind}"
    return kinds


def assert_contains(case: SynchronousTestCase, expected: Any, actual: Any, path: str) -> None:
    """Every value of C{expected} (C{None} values and empty messages aside) is in C{actual}."""
    if isinstance(expected, dict):
        case.assertIsInstance(actual, dict, path)
        for key, value in expected.items():
            if value is None or value == {}:
                continue
            case.assertIn(key, actual, f"{path}.{key}")
            assert_contains(case, value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        case.assertEqual(len(expected), len(actual or ()), path)
        for i, (e, a) in enumerate(zip(expected, actual or (), strict=True)):
            assert_contains(case, e, a, f"{path}[{i}]")
    else:
        case.assertEqual(expected, actual, path)


class RoundTripTests(SynchronousTestCase):
    """decode(encode(x)) keeps every field of every kind; encode(decode(b)) == b."""

    def test_every_kind(self):
        kinds = all_kinds()
        self.assertGreater(len(kinds), 120)
        for (group, version, kind), type_name in sorted(kinds.items()):
            with self.subTest(kind=f"{group}/{version}/{kind}"):
                obj = {"kind": kind, "apiVersion": f"{group}/{version}" if group else version}
                obj.update(sample(type_name))
                body = pb.encode(obj)
                decoded = pb.decode(body)
                assert_contains(self, obj, decoded, kind)
                self.assertEqual(pb.encode(decoded), body)

    def test_every_kind_empty(self):
        """An object with no fields decodes to Go's zero values and re-encodes the same."""
        for (group, version, kind), _ in sorted(all_kinds().items()):
            with self.subTest(kind=f"{group}/{version}/{kind}"):
                obj = {"kind": kind, "apiVersion": f"{group}/{version}" if group else version}
                body = pb.encode(obj)
                self.assertEqual(pb.encode(pb.decode(body)), body)


class UpstreamBytesTests(SynchronousTestCase):
    """Bodies kube-apiserver v1.32 answered, with the JSON it answered for the same object."""

    def check(self, name: str) -> dict:
        body = (FIXTURES / f"upstream-{name}.pb").read_bytes()
        expected = json.loads((FIXTURES / f"upstream-{name}.json").read_bytes())
        decoded = pb.decode(body)
        self.assertEqual(decoded, expected)
        # Go's field order too
        self.assertEqual(json.dumps(decoded), json.dumps(expected))
        self.assertEqual(pb.encode(decoded), body)
        return decoded

    def test_crd(self):
        """A CRD using every JSONSchemaProps form: default/enum/example (JSON raw values,
        escaped and key-sorted as Go marshals them), items, additionalProperties, validations,
        printer columns, scale subresource, conversion."""
        crd = self.check("get-crd")
        schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
        spec = schema["properties"]["spec"]["properties"]
        self.assertEqual(spec["a"]["maximum"], 5)
        self.assertIsInstance(spec["a"]["maximum"], int)
        self.assertEqual(spec["s"]["default"], "a<b")
        self.assertEqual(spec["m"]["additionalProperties"], {"type": "string"})
        self.assertEqual(crd["status"]["acceptedNames"]["kind"], "Gadget")

    def test_apiservices(self):
        lst = self.check("list-apiservices")
        self.assertEqual(lst["kind"], "APIServiceList")
        self.assertTrue(lst["items"])


class SchemaFormTests(SynchronousTestCase):
    """The JSON forms of upstream's C{apiextensions/v1/marshal.go}."""

    def roundtrip(self, props: dict) -> dict:
        crd = {"kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1",
               "spec": {"versions": [{"name": "v1", "schema": {"openAPIV3Schema": props}}]}}
        out = pb.decode(pb.encode(crd))
        return out["spec"]["versions"][0]["schema"]["openAPIV3Schema"]

    def test_or_bool(self):
        self.assertEqual(self.roundtrip({"additionalProperties": False}),
                         {"additionalProperties": False})
        self.assertEqual(self.roundtrip({"additionalProperties": True}),
                         {"additionalProperties": True})
        self.assertEqual(self.roundtrip({"additionalItems": {"type": "string"}}),
                         {"additionalItems": {"type": "string"}})

    def test_or_array(self):
        self.assertEqual(self.roundtrip({"items": {"type": "string"}}),
                         {"items": {"type": "string"}})
        self.assertEqual(self.roundtrip({"items": [{"type": "string"}, {"type": "integer"}]}),
                         {"items": [{"type": "string"}, {"type": "integer"}]})

    def test_or_string_array(self):
        deps = {"a": ["b", "c"], "d": {"required": ["e"]}}
        self.assertEqual(self.roundtrip({"dependencies": deps}), {"dependencies": deps})

    def test_json_values(self):
        """C{default}/C{example}/C{enum} hold any JSON; an C{enum} null survives as null."""
        props = {"default": {"b": 1, "a": [True, None]}, "enum": ["x", 2, None, {"k": "v"}],
                 "example": 3.25}
        self.assertEqual(self.roundtrip(props), props)

    def test_json_raw_is_go_marshalled(self):
        """The raw bytes are json.Marshal's: keys sorted, HTML characters escaped."""
        msg = pb._encode_special("JSON", {"b": "<", "a": 1})
        self.assertEqual(msg, b'\n\x14{"a":1,"b":"\\u003c"}')

    def test_integral_double(self):
        """Go prints an integral float64 without a fraction."""
        out = self.roundtrip({"maximum": 5.0, "minimum": 0.5})
        self.assertEqual(out, {"maximum": 5, "minimum": 0.5})
        self.assertIsInstance(out["maximum"], int)


class WatchFrameTests(SynchronousTestCase):
    def test_frame(self):
        """4-byte big-endian length, then WatchEvent{type, object{raw: enveloped object}}."""
        obj = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "x"}}
        frame = pb.encode_watch_frame("ADDED", obj)
        length = int.from_bytes(frame[:4], "big")
        self.assertEqual(length, len(frame) - 4)
        fields = list(pb.iter_fields(frame[4:]))
        self.assertEqual(fields[0], (1, 2, b"ADDED"))
        raw = dict((n, v) for n, _, v in pb.iter_fields(fields[1][2]))[1]
        self.assertEqual(pb.decode(raw)["metadata"]["name"], "x")


class ServedKindsTests(KubeTestCase):
    """Every kind a built-in endpoint answers with has protobuf tables."""

    #: Options kinds of connect subresources (query parameters, never bodies).
    CONNECT_OPTIONS = {"NodeProxyOptions", "PodAttachOptions", "PodExecOptions",
                       "PodPortForwardOptions", "PodProxyOptions", "ServiceProxyOptions"}

    def test_served_kinds(self):
        seen = set()
        for path in ("/api", "/apis"):
            code, doc, _ = self.request("GET", path, headers={
                "Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
            self.assertEqual(code, 200)
            for group in doc["items"]:
                name = group["metadata"].get("name", "")
                for version in group["versions"]:
                    for res in version["resources"]:
                        kinds = [res["responseKind"]] + [
                            s["responseKind"] for s in res.get("subresources") or ()]
                        for k in kinds:
                            gvk = (k.get("group") or name, k.get("version") or version["version"],
                                   k["kind"])
                            if gvk[2] not in self.CONNECT_OPTIONS:
                                seen.add(gvk)
        self.assertIn(("apiextensions.k8s.io", "v1", "CustomResourceDefinition"), seen)
        self.assertIn(("apiregistration.k8s.io", "v1", "APIService"), seen)
        missing = sorted(gvk for gvk in seen if not pb.can_encode(*gvk))
        self.assertEqual(missing, [])


class CRDOverProtobufTests(KubeTestCase):
    """C{kubectl}/client-go's apiextensions clientset creates CRDs in protobuf."""

    CRD = {
        "kind": "CustomResourceDefinition", "apiVersion": "apiextensions.k8s.io/v1",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                      "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                "openAPIV3Schema": {"type": "object", "properties": {"spec": {
                    "type": "object", "additionalProperties": {"type": "string"},
                    "properties": {"size": {"type": "integer", "maximum": 10, "default": 1}},
                }}}}}],
        },
    }

    def test_create_protobuf(self):
        code, _, response = self.request(
            "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            pb.encode(self.CRD), content_type=PROTOBUF,
            headers={"Accept": f"{PROTOBUF}, */*"})
        self.assertEqual(code, 201)
        self.assertEqual(response.headers.getRawHeaders("content-type"), [PROTOBUF])
        body = self.successResultOf(response.content())
        created = pb.decode(body)
        self.assertEqual(created["kind"], "CustomResourceDefinition")
        props = created["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
        self.assertEqual(props["spec"]["additionalProperties"], {"type": "string"})
        self.assertEqual(props["spec"]["properties"]["size"],
                         {"type": "integer", "default": 1, "maximum": 10})
        # and it reads back in JSON the same
        code, got, _ = self.request(
            "GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        self.assertEqual(code, 200)
        self.assertEqual(got["spec"], created["spec"])

    def test_custom_resource_refuses_protobuf(self):
        """Custom resources answer JSON and YAML only: protobuf alone is 406 (its Status in
        protobuf), protobuf then */* falls back to JSON."""
        self.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", self.CRD)
        for _ in range(5):
            self.clock.advance(0)  # let the controllers establish it
        path = "/apis/example.com/v1/namespaces/default/widgets"
        code, _, response = self.request("GET", path, headers={"Accept": PROTOBUF})
        self.assertEqual(code, 406)
        status = pb.decode(self.successResultOf(response.content()))
        self.assertEqual(status["message"], "only the following media types are accepted: "
                         "application/json, application/yaml, application/vnd.kubernetes.protobuf")
        code, lst, response = self.request("GET", path, headers={"Accept": f"{PROTOBUF}, */*"})
        self.assertEqual((code, lst["kind"]), (200, "WidgetList"))
        code, _, response = self.request("GET", path, headers={
            "Accept": f"{PROTOBUF};as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"})
        self.assertEqual(code, 200)
        self.assertEqual(pb.decode(self.successResultOf(response.content()))["kind"],
                         "PartialObjectMetadataList")
