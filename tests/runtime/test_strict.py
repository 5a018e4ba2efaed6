"""
Tests for L{kubetwist.runtime.strict}: unknown and duplicate fields as upstream's strict
decoders report them, over the built-in type tables.
"""

from __future__ import annotations

import json
import os

import yaml
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import codec, strict
from kubetwist.runtime import types as typetables
from tests.support import shared_dir

POD = "io.k8s.api.core.v1.Pod"
DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"
PV = "io.k8s.api.core.v1.PersistentVolume"


def _errs(text: str, type_name: str = POD) -> list[str]:
    return strict.strict_errors(strict.parse_json_pairs(text.encode()), type_name)


class UnknownFieldTests(SynchronousTestCase):
    def test_known_object(self) -> None:
        """A pod using nested structs, lists, maps and TypeMeta has no error."""
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": "p", "labels": {"any-key": "x"},
                            "annotations": {"a": "b"}},
               "spec": {"containers": [{"name": "c", "image": "i",
                                        "resources": {"limits": {"cpu": "1"}},
                                        "ports": [{"containerPort": 80}]}],
                        "nodeSelector": {"k": "v"}}}
        self.assertEqual(_errs(json.dumps(pod)), [])

    def test_extra_value_lists(self) -> None:
        """C{map[string]ExtraValue} fields (CSR C{spec.extra}) take JSON lists of strings."""
        csr = {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
               "metadata": {"name": "c"},
               "spec": {"request": "", "signerName": "example.com/x",
                        "extra": {"scopes": ["a", "b"]}, "nope": 1}}
        self.assertEqual(
            strict.strict_errors(strict.parse_json_pairs(json.dumps(csr).encode()),
                                 "io.k8s.api.certificates.v1.CertificateSigningRequest"),
            ['unknown field "spec.nope"'])

    def test_paths(self) -> None:
        """Unknown fields are named by their JSON path, list indexes in brackets, in document
        order."""
        self.assertEqual(
            _errs('{"foo": 1, "spec": {"containers": [{"name": "a"}, {"name": "b", '
                  '"imagePullPolicyy": "x", "ports": [{"protocl": "TCP"}]}], "bar": {}}}'),
            ['unknown field "foo"',
             'unknown field "spec.containers[1].imagePullPolicyy"',
             'unknown field "spec.containers[1].ports[0].protocl"',
             'unknown field "spec.bar"'])

    def test_unknown_value_not_descended(self) -> None:
        """The value of an unknown field is skipped whole; the same error is reported once."""
        self.assertEqual(_errs('{"spec": {"x": {"y": 1}, "x": 2}}'),
                         ['unknown field "spec.x"'])

    def test_case_sensitive(self) -> None:
        """Field names are case-sensitive (Kubernetes decodes case-sensitively)."""
        self.assertEqual(_errs('{"Spec": {}, "metadata": {"Name": "x"}}'),
                         ['unknown field "Spec"', 'unknown field "metadata.Name"'])

    def test_inline_struct(self) -> None:
        """Fields of an inline embed are known (C{Volume.VolumeSource},
        C{PersistentVolumeSpec.PersistentVolumeSource}); others are not."""
        self.assertEqual(
            _errs('{"spec": {"volumes": [{"name": "v", "emptyDir": {}, "hostPth": {}}]}}'),
            ['unknown field "spec.volumes[0].hostPth"'])
        self.assertEqual(
            _errs('{"spec": {"nfs": {"server": "s", "path": "/"}, "capacity": {"storage": "1Gi"},'
                  ' "storageos": {"volumeName": "v", "secretName": "s"}}}', PV),
            ['unknown field "spec.storageos.secretName"'])

    def test_special_types(self) -> None:
        """Quantity, IntOrString, Time and RawExtension/FieldsV1 take any JSON form: nothing
        inside them is checked."""
        dep = {"spec": {"strategy": {"rollingUpdate": {"maxSurge": 1, "maxUnavailable": "25%"}},
                        "template": {"spec": {"containers": [
                            {"name": "c", "resources": {"requests": {"memory": 1024}}}]}}},
               "metadata": {"creationTimestamp": None, "managedFields": [
                   {"manager": "m", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {"f:anything": {}}}}]}}
        self.assertEqual(strict.strict_errors(dep, DEPLOYMENT), [])
        event = {"apiVersion": "v1", "kind": "List", "items": [{"whatever": {"a": 1}}]}
        self.assertEqual(strict.strict_errors(event, typetables.lookup_kind("", "v1", "List")),
                         [])

    def test_map_keys_free(self) -> None:
        """A map's keys are free, whatever they are named."""
        self.assertEqual(_errs('{"metadata": {"labels": {"spec": "x", "foo": "y"}}}'), [])

    def test_type_meta_top_level_only(self) -> None:
        """C{apiVersion} and C{kind} are known at the top, not inside the spec."""
        self.assertEqual(_errs('{"apiVersion": "v1", "kind": "Pod", "spec": {"kind": "x"}}'),
                         ['unknown field "spec.kind"'])

    def test_prune(self) -> None:
        """Pruning removes unknown keys at every level (Go's decoder drops them)."""
        obj = {"apiVersion": "v1", "kind": "Pod", "junk": 1,
               "spec": {"containers": [{"name": "c", "bogus": True}]}}
        strict.prune_unknown(obj, POD)
        self.assertEqual(obj, {"apiVersion": "v1", "kind": "Pod",
                               "spec": {"containers": [{"name": "c"}]}})

    def test_limit(self) -> None:
        """At most 100 errors are reported."""
        body = "{" + ", ".join(f'"f{i}": 1' for i in range(150)) + "}"
        errs = _errs(body)
        self.assertEqual((len(errs), errs[-1]), (100, 'unknown field "f99"'))

    def test_go_quoting(self) -> None:
        """Paths are quoted as Go's strconv.Quote does."""
        self.assertEqual(_errs('{"a\\"b\\n": 1}'), ['unknown field "a\\"b\\n"'])


class DuplicateFieldTests(SynchronousTestCase):
    def test_struct_and_map_duplicates(self) -> None:
        """A repeated struct field or map key is a duplicate field, in document order with
        the unknown fields; map keys are part of the path."""
        self.assertEqual(
            _errs('{"metadata": {"name": "a", "labels": {"x": "1", "x": "2"}, "name": "b"},'
                  ' "foo": 1, "spec": {"containers": [{"name": "c", "name": "d"}]}}'),
            ['duplicate field "metadata.labels.x"', 'duplicate field "metadata.name"',
             'unknown field "foo"', 'duplicate field "spec.containers[0].name"'])

    def test_duplicate_descends_again(self) -> None:
        """Both occurrences of a duplicated struct are checked."""
        self.assertEqual(_errs('{"spec": {"hostname": "a"}, "spec": {"bogus": 1}}'),
                         ['duplicate field "spec"', 'unknown field "spec.bogus"'])

    def test_any_value(self) -> None:
        """In a free-form value (a patch), only duplicates are found."""
        doc = strict.parse_json_pairs(b'{"spec": {"a": 1, "a": 2, "l": [{"b": 1, "b": 1}]}}')
        self.assertEqual(strict.strict_errors(doc, strict.ANY),
                         ['duplicate field "spec.a"', 'duplicate field "spec.l[0].b"'])

    def test_json_patch(self) -> None:
        """A JSON patch's operations know op/path/from/value only; errors are prefixed."""
        doc = strict.parse_json_pairs(
            b'[{"op": "add", "path": "/a", "value": {"x": 1, "x": 2}, "foo": 1},'
            b' {"op": "remove", "op": "remove", "path": "/b"}]')
        self.assertEqual(strict.json_patch_errors(doc), [
            'json patch duplicate field "[0].value.x"', 'json patch unknown field "[0].foo"',
            'json patch duplicate field "[1].op"'])

    def test_yaml_duplicates(self) -> None:
        """A repeated YAML key is go-yaml's strict error, with the value's line (1-based)."""
        body = b"apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n  name: b\nspec:\n  x: 1\n"
        self.assertEqual(
            strict.yaml_strict_error(body, codec._Loader),
            'yaml: unmarshal errors:\n  line 5: key "name" already set in map')
        nested = b"a:\n  b: 1\na:\n  c: 2\n"
        self.assertEqual(strict.yaml_duplicate_keys(nested, codec._Loader),
                         ['line 4: key "a" already set in map'])
        self.assertEqual(strict.yaml_duplicate_keys(b"1: a\n1: b\n", codec._Loader),
                         ["line 2: key 1 already set in map"])

    def test_yaml_body_errors(self) -> None:
        """A YAML body: the YAML duplicate error first, then the unknown fields of the
        converted JSON in sorted key order."""
        body = b"kind: Pod\nzeta: 1\nalpha: 2\nmetadata:\n  name: a\n  name: b\n"
        self.assertEqual(codec.strict_body_errors(body, codec.YAML, POD), [
            'yaml: unmarshal errors:\n  line 6: key "name" already set in map',
            'unknown field "alpha"', 'unknown field "zeta"'])

    def test_yaml_non_string_keys(self) -> None:
        """A YAML document with non-string keys is walked without error."""
        self.assertEqual(codec.strict_body_errors(b"kind: Pod\n1: a\n", codec.YAML, POD),
                         ['unknown field "1"'])

    def test_json_body_errors(self) -> None:
        """A JSON body: unknown and duplicate fields in document order."""
        body = b'{"kind": "Pod", "zeta": 1, "alpha": 2, "kind": "Pod"}'
        self.assertEqual(codec.strict_body_errors(body, codec.JSON, POD), [
            'unknown field "zeta"', 'unknown field "alpha"', 'duplicate field "kind"'])

    def test_warnings_of(self) -> None:
        """Under Warn a YAML error becomes one warning per line, its prefix dropped."""
        self.assertEqual(strict.warnings_of([
            'yaml: unmarshal errors:\n  line 5: key "a" already set in map\n'
            '  line 7: key "b" already set in map', 'unknown field "x"']),
            ['line 5: key "a" already set in map', 'line 7: key "b" already set in map',
             'unknown field "x"'])


class UnstructuredTests(SynchronousTestCase):
    def test_converter_paths(self) -> None:
        """The unstructured converter's unknown fields: sorted, unquoted."""
        obj = {"kind": "Pod", "zz": 1, "spec": {"containers": [{"name": "c", "b": 1, "a": 2}]}}
        self.assertEqual(strict.unstructured_unknown_fields(obj, POD, prune=True), [
            'unknown field "spec.containers[0].a"', 'unknown field "spec.containers[0].b"',
            'unknown field "zz"'])
        self.assertEqual(obj, {"kind": "Pod", "spec": {"containers": [{"name": "c"}]}})

    def test_go_sprint(self) -> None:
        """Go's %+v of a decoded patch: maps with sorted keys, space-separated lists."""
        self.assertEqual(
            strict.go_sprint({"spec": {"b": [1, "x", None], "a": True, "f": 1.5, "g": 2.0}}),
            "map[spec:map[a:true b:[1 x <nil>] f:1.5 g:2]]")

    def test_go_json(self) -> None:
        """Go's JSON of a map: sorted keys, HTML characters escaped."""
        self.assertEqual(strict.go_json({"b": "<&>", "a": 1}),
                         '{"a":1,"b":"\\u003c\\u0026\\u003e"}')


def _manifests_root() -> str:
    return str(shared_dir("manifests"))


def _golden_path() -> str:
    return str(shared_dir("golden", "dry-run-kubernetes-examples.jsonl"))


class FalsePositiveGuardTests(SynchronousTestCase):
    """
    kubectl sends C{fieldValidation=Strict} by default: every built-in object of the shared
    manifests must pass the walker, except those kube-apiserver really refused as unknown.
    """

    def test_manifests(self) -> None:
        """Every built-in object in ../shared/manifests (all subfolders) has no unknown or
        duplicate field, except the one PersistentVolume kube-apiserver refuses."""
        checked, reported = 0, {}
        for dirpath, _, names in sorted(os.walk(_manifests_root())):
            for name in sorted(names):
                if not name.endswith((".yaml", ".yml", ".json")):
                    continue
                path = os.path.join(dirpath, name)
                with open(path, "rb") as f:
                    data = f.read()
                try:
                    docs = list(yaml.load_all(data, Loader=codec._Loader))
                except yaml.YAMLError:
                    continue
                for i, doc in enumerate(docs):
                    if not isinstance(doc, dict) or not isinstance(doc.get("kind"), str):
                        continue
                    group, _, version = str(doc.get("apiVersion", "")).rpartition("/")
                    type_name = typetables.KINDS.get((group, version, doc["kind"]))
                    if type_name is None:
                        continue
                    checked += 1
                    errs = strict.strict_errors(doc, type_name)
                    if errs:
                        reported[f"{name}#{i}"] = errs
        self.assertGreater(checked, 150)
        self.assertEqual(reported, {
            "_archived_volumes_storageos_storageos-pv.yaml#0":
                ['unknown field "spec.storageos.secretName"'],
        })

    def test_golden_accepted(self) -> None:
        """Every object kube-apiserver accepted under kubectl's default Strict passes the
        walker; every strict refusal in the recording is found with the same text."""
        accepted = refused = 0
        with open(_golden_path()) as f:
            for line in f:
                rec = json.loads(line)
                obj = rec["object"]
                group, _, version = obj["apiVersion"].rpartition("/")
                type_name = typetables.KINDS.get((group, version, obj["kind"]))
                if type_name is None:
                    continue
                errs = strict.strict_errors(strict.parse_json_pairs(json.dumps(obj).encode()),
                                            type_name)
                error = rec.get("error") or ""
                if "strict decoding error" in error:
                    refused += 1
                    self.assertIn(strict.strict_decoding_message(errs), error)
                elif rec["accepted"]:
                    accepted += 1
                    self.assertEqual((rec["file"], errs), (rec["file"], []))
        self.assertEqual(refused, 1)
        self.assertGreater(accepted, 150)
