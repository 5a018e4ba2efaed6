# -*- test-case-name: tests.endpoints.test_decode -*-
"""
The request body decoder over HTTP: typed conversion of create, update and patch bodies
(JSON, YAML, every patch type) with kube-apiserver v1.32's answers, recorded from the real
server; deep nesting.
"""

from __future__ import annotations

from tests.support import KubeTestCase

CM = "/api/v1/namespaces/default/configmaps"
PODS = "/api/v1/namespaces/default/pods"
DEPLOY = "/apis/apps/v1/namespaces/default/deployments"


def _deployment(name: str = "d") -> dict:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}},
                                  "spec": {"containers": [{"name": "c", "image": "i"}]}}}}


def _pod_with_lun(lun: str) -> bytes:
    return (b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":'
            b'[{"name":"c","image":"i"}],"volumes":[{"name":"v","fc":{"lun":%s}}]}}'
            % lun.encode())


class CreateTests(KubeTestCase):
    """Recorded from kube-apiserver v1.32 (dry-run creates)."""

    def assertBadRequest(self, path: str, body, message: str,
                         content_type: str = "application/json") -> None:
        code, obj, response = self.request("POST", path, body, content_type=content_type)
        self.assertEqual((code, obj.get("reason"), obj.get("message")),
                         (400, "BadRequest", message))
        self.assertEqual(response.headers.getRawHeaders("warning"), None)

    def test_lun(self) -> None:
        for literal, what in (('"<ADD LUN ID Here>"', "string"), ("1.5", "number 1.5"),
                              ("1.0", "number 1.0"), ("1e3", "number 1e3"),
                              ("3000000000", "number 3000000000"), ("[]", "array"),
                              ("{}", "object"), ("true", "bool"),
                              ("-1.5e400", "number -1.5e400")):
            self.assertBadRequest(
                PODS + "?dryRun=All", _pod_with_lun(literal),
                'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal '
                f"{what} into Go struct field FCVolumeSource.spec.volumes.fc.lun of type int32")

    def test_yaml(self) -> None:
        """YAML is JSON to the decoder: the same messages; whole floats are integers."""
        template = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  containers: "
                    "[{name: c, image: i}]\n  volumes:\n  - name: v\n    fc:\n      lun: %s\n")
        for literal, what in (('"x"', "string"), ("1.5", "number 1.5"),
                              ("3000000000", "number 3000000000"), ("yes", "bool"),
                              ('"1"', "string")):
            self.assertBadRequest(
                PODS + "?dryRun=All", template % literal,
                'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal '
                f"{what} into Go struct field FCVolumeSource.spec.volumes.fc.lun of type int32",
                "application/yaml")
        for literal in ("1.0", "1e3", "0x10", "010", "1_000", "~"):
            code, obj, _ = self.request("POST", PODS + "?dryRun=All", template % literal,
                                        content_type="application/yaml")
            self.assertNotEqual(code, 400, (literal, obj))

    def test_configmap(self) -> None:
        prefix = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: '
        for extra, message in (
            ({"metadata": {"name": "p", "labels": {"a": ["x"]}}},
             "json: cannot unmarshal array into Go struct field ObjectMeta.metadata.labels of "
             "type string"),
            ({"metadata": {"name": "p", "finalizers": "x"}},
             "json: cannot unmarshal string into Go struct field ObjectMeta.metadata.finalizers "
             "of type []string"),
            ({"immutable": "yes"},
             "json: cannot unmarshal string into Go struct field ConfigMap.immutable of type "
             "bool"),
            ({"data": {"k": ["a"]}},
             "json: cannot unmarshal array into Go struct field ConfigMap.data of type string"),
            ({"binaryData": {"k": ["a"]}},
             "json: cannot unmarshal string into Go struct field ConfigMap.binaryData of type "
             "uint8"),
            ({"binaryData": {"k": "!!"}}, "illegal base64 data at input byte 0"),
            ({"binaryData": {"k": 1}},
             "json: cannot unmarshal number into Go struct field ConfigMap.binaryData of type "
             "[]uint8"),
            ({"data": []},
             "json: cannot unmarshal array into Go struct field ConfigMap.data of type "
             "map[string]string"),
            ({"metadata": {"name": "p", "creationTimestamp": 5}},
             "json: cannot unmarshal number into Go struct field ObjectMeta.metadata."
             "creationTimestamp of type string"),
            ({"metadata": {"name": "p", "creationTimestamp": "x"}},
             'parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"'),
            ({"metadata": {"name": "p", "uid": 5}},
             "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.uid of "
             "type types.UID"),
            ({"metadata": {"name": "p", "ownerReferences": [{"controller": "x"}]}},
             "json: cannot unmarshal string into Go struct field OwnerReference.metadata."
             "ownerReferences.controller of type bool"),
            ({"metadata": "x"},
             "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type "
             "v1.ObjectMeta"),
            ({"metadata": []},
             "json: cannot unmarshal array into Go struct field ConfigMap.metadata of type "
             "v1.ObjectMeta"),
            ({"metadata": {"name": "p", "labels": {"a": 5}}, "data": {"k": 1}},
             "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of "
             "type string"),
        ):
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"}, **extra}
            self.assertBadRequest(CM, body, prefix + message)
        code, obj, _ = self.request("GET", CM)
        self.assertEqual([i["metadata"]["name"] for i in obj["items"]], ["kube-root-ca.crt"])

    def test_managed_fields_free_form(self) -> None:
        """fieldsV1 takes any JSON (upstream answers 201)."""
        body = {"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "p", "managedFields": [{"fieldsV1": 5}]}}
        code, obj, _ = self.request("POST", CM + "?dryRun=All", body)
        self.assertEqual(code, 201, obj)

    def test_deep_nesting(self) -> None:
        """Up to 10000 levels (the object included) is JSON: an unknown field is dropped with
        a warning; beyond, upstream's scanner refuses it."""
        for n in (500, 990, 2000, 9999):
            body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"foo":'
                    + "[" * n + "]" * n + "}")
            code, obj, response = self.request("POST", CM + "?dryRun=All", body)
            self.assertEqual((code, response.headers.getRawHeaders("warning")),
                             (201, ['299 - "unknown field \\"foo\\""']), n)
            n -= 2 if n > 9000 else 0  # metadata and annotations are two levels
            body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p",'
                    '"annotations":{"x":' + "[" * n + "]" * n + "}}}")
            self.assertBadRequest(
                CM + "?dryRun=All", body,
                'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot '
                "unmarshal array into Go struct field ObjectMeta.metadata.annotations of type "
                "string")
        body = ('{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"p"},"foo":'
                + "[" * 10000 + "]" * 10000 + "}")
        self.assertBadRequest(
            CM + "?dryRun=All", body,
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
            "version/kind; json parse error: exceeded max depth "
            '({"apiVersion":"v1","kind":"Con ...)')


class CreateResourceVersionTests(KubeTestCase):
    """A create with a resourceVersion (recorded from kube-apiserver v1.32): one that parses
    as a non-zero unsigned integer is etcd3 store's plain error, a 500 without reason; any
    other is ignored."""

    def test_resource_version(self) -> None:
        for i, rv in enumerate((" ", "abc", "0", "00", "+5", "-1")):
            body = {"metadata": {"name": f"rv{i}", "resourceVersion": rv}}
            code, obj, _ = self.request("POST", CM, body)
            self.assertEqual(code, 201, (rv, obj))
        code, obj, _ = self.request("POST", CM,
                                    {"metadata": {"name": "rv", "resourceVersion": "5"}})
        self.assertEqual((code, obj), (500, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "resourceVersion should not be set on objects to be created",
            "code": 500}))


class SurrogateTests(KubeTestCase):
    """A JSON escape of a lone UTF-16 surrogate decodes to U+FFFD, as Go's decoder does
    (recorded from kube-apiserver v1.32: a merge patch of C{"\\ud800"} stores C{"\ufffd"});
    Python keeps the surrogate, which no UTF-8 encoder takes (it answered 500)."""

    def test_create_and_patch(self) -> None:
        code, obj, _ = self.request(
            "POST", CM, b'{"metadata":{"name":"s","labels":{"a":"b"}},"data":{"x":"\\ud800",'
                        b'"p":"\\ud83d\\ude00"},"\\udc00":1}')
        self.assertEqual((code, obj.get("data")), (201, {"x": "\ufffd", "p": "\U0001f600"}))
        for ctype, body in (
            ("application/merge-patch+json", b'{"data":{"m":"a\\udfffb"}}'),
            ("application/json-patch+json", b'[{"op":"add","path":"/data/j","value":"\\ud800"}]'),
            ("application/strategic-merge-patch+json", b'{"data":{"s":"\\udbff"}}'),
        ):
            code, obj, _ = self.request("PATCH", CM + "/s", body, content_type=ctype)
            self.assertEqual(code, 200, (ctype, obj))
            self.assertIn("\ufffd", "".join(obj["data"].values()), ctype)
        # YAML refuses the escape, as go-yaml does
        code, obj, _ = self.request("PUT", CM + "/s", b'metadata:\n  name: s\ndata:\n  y: '
                                    b'"\\ud800"\n', content_type="application/yaml")
        self.assertEqual((code, obj["message"].rsplit(" (", 1)[0]), (
            400, "the object provided is unrecognized (must be of type ConfigMap): yaml: line 4: "
                 "found invalid Unicode character escape code"))


class NullElementTests(KubeTestCase):
    """A null element of a list of structs is Go's zero struct, refused by validation with
    upstream's messages (recorded from kube-apiserver v1.32), on create and on patch; it
    answered 500."""

    FIRST = ('Deployment.apps "d" is invalid: [spec.selector.matchExpressions[0].operator: '
             'Invalid value: "": not a valid selector operator, '
             'spec.selector.matchExpressions[0].key: Invalid value: "": name part must be '
             "non-empty")

    def test_create_and_patch(self) -> None:
        body = _deployment()
        body["spec"]["selector"]["matchExpressions"] = [None]
        code, obj, _ = self.request("POST", DEPLOY + "?dryRun=All", body)
        self.assertEqual(code, 422, obj)
        self.assertTrue(obj["message"].startswith(self.FIRST), obj["message"])
        self.request("POST", DEPLOY, _deployment())
        code, obj, _ = self.request(
            "PATCH", DEPLOY + "/d?dryRun=All",
            '{"spec":{"selector":{"matchExpressions":[null],"matchLabels":null}}}',
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 422, obj)
        self.assertTrue(obj["message"].startswith(self.FIRST), obj["message"])


class UpdateTests(KubeTestCase):
    def test_put(self) -> None:
        self.request("POST", DEPLOY, _deployment())
        body = _deployment()
        body["spec"]["replicas"] = "abc"
        code, obj, _ = self.request("PUT", DEPLOY + "/d", body)
        self.assertEqual((code, obj["message"]), (
            400, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
                 "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type "
                 "int32"))


class PatchTests(KubeTestCase):
    """Recorded from kube-apiserver v1.32: JSON and merge patches answer 422 with the patched
    object and Go's decoder error; strategic merge patches the unstructured converter's."""

    def setUp(self) -> None:
        super().setUp()
        code, _, _ = self.request("POST", DEPLOY, _deployment())
        self.assertEqual(code, 201)

    def patch(self, ctype: str, body: str) -> tuple:
        code, obj, _ = self.request("PATCH", DEPLOY + "/d?dryRun=All", body, content_type=ctype)
        self.assertEqual((code, obj.get("reason")), (422, "Invalid"), obj)
        cause = obj["details"]["causes"][0]
        return cause["field"], cause["message"], obj["message"]

    def test_merge_patch(self) -> None:
        for value, what in (('"abc"', "string"), ("1.5", "number 1.5"), ("1.0", "number 1.0"),
                            ("3000000000", "number 3000000000")):
            fld, message, full = self.patch("application/merge-patch+json",
                                            '{"spec":{"replicas":%s}}' % value)
            self.assertEqual(fld, "patch")
            self.assertTrue(message.endswith(
                f": json: cannot unmarshal {what} into Go struct field DeploymentSpec.spec."
                "replicas of type int32"), message)
            self.assertTrue(full.startswith(' "" is invalid: patch: Invalid value: "{'), full)
        _, message, _ = self.patch(
            "application/merge-patch+json",
            '{"spec":{"template":{"spec":{"containers":[{"name":"c","image":"i","ports":'
            '[{"containerPort":"eighty"}]}]}}}}')
        self.assertTrue(message.endswith(
            ": json: cannot unmarshal string into Go struct field ContainerPort.spec.template."
            "spec.containers.ports.containerPort of type int32"), message)
        code, obj, _ = self.request("GET", DEPLOY + "/d")
        self.assertEqual(obj["spec"]["replicas"], 1)

    def test_json_patch(self) -> None:
        for value, what in (('"abc"', "string"), ("1.5", "number 1.5")):
            _, message, _ = self.patch(
                "application/json-patch+json",
                '[{"op":"replace","path":"/spec/replicas","value":%s}]' % value)
            self.assertTrue(message.endswith(
                f": json: cannot unmarshal {what} into Go struct field DeploymentSpec.spec."
                "replicas of type int32"), message)

    def test_strategic_merge_patch(self) -> None:
        for body, shown, error in (
            ('{"spec":{"replicas":"abc"}}', "map[spec:map[replicas:abc]]",
             "unrecognized type: int32"),
            ('{"spec":{"replicas":1.5}}', "map[spec:map[replicas:1.5]]",
             "cannot convert float64 to int32"),
            ('{"metadata":{"labels":{"a":["x"]}}}', "map[metadata:map[labels:map[a:[x]]]]",
             "unrecognized type: string"),
            ('{"spec":{"template":{"spec":{"containers":[{"name":"c","ports":'
             '[{"containerPort":"eighty"}]}]}}}}',
             "map[spec:map[template:map[spec:map[containers:[map[name:c ports:"
             "[map[containerPort:eighty]]]]]]]]", "unrecognized type: int32"),
        ):
            _, _, full = self.patch("application/strategic-merge-patch+json", body)
            self.assertEqual(full, f' "" is invalid: patch: Invalid value: "{shown}": {error}')
        code, obj, _ = self.request("PATCH", DEPLOY + "/d?dryRun=All",
                                    '{"spec":{"replicas":1e3}}',
                                    content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, obj["spec"]["replicas"]), (200, 1000))


class WarningTests(KubeTestCase):
    """The strategy's warnings are sent only for objects that pass validation (recorded from
    kube-apiserver v1.32: an invalid ReplicationController gets its 422 alone; an
    AlreadyExists after validation keeps them)."""

    RC = "/api/v1/namespaces/default/replicationcontrollers"
    WARNING = ('299 - "spec.template.spec.nodeSelector[beta.kubernetes.io/os]: deprecated '
               'since v1.14; use \\"kubernetes.io/os\\" instead"')

    def rc(self, image: str) -> dict:
        return {"apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": "w"},
                "spec": {"selector": {"a": "b"}, "template": {
                    "metadata": {"labels": {"a": "b"}},
                    "spec": {"nodeSelector": {"beta.kubernetes.io/os": "linux"},
                             "containers": [{"name": "c", "image": image}]}}}}

    def test_invalid_create_has_no_warning(self) -> None:
        code, obj, response = self.request("POST", self.RC + "?dryRun=All", self.rc(""))
        self.assertEqual((code, obj["message"], response.headers.getRawHeaders("warning")), (
            422, 'ReplicationController "w" is invalid: spec.template.spec.containers[0].image:'
                 " Required value", None))

    def test_valid_create_warns(self) -> None:
        code, _, response = self.request("POST", self.RC, self.rc("i"))
        self.assertEqual((code, response.headers.getRawHeaders("warning")),
                         (201, [self.WARNING]))
        code, obj, response = self.request("POST", self.RC, self.rc("i"))
        self.assertEqual((code, obj["reason"], response.headers.getRawHeaders("warning")),
                         (409, "AlreadyExists", [self.WARNING]))

    def test_invalid_update_has_no_warning(self) -> None:
        self.request("POST", self.RC, self.rc("i"))
        code, _, response = self.request("PUT", self.RC + "/w?dryRun=All", self.rc(""))
        self.assertEqual((code, response.headers.getRawHeaders("warning")), (422, None))


class SubresourceTests(KubeTestCase):
    """Creates on subresources go through the same decoder (recorded from kube-apiserver
    v1.32)."""

    def test_binding(self) -> None:
        code, obj, _ = self.request("POST", PODS + "/p/binding", '{"target":{"name":5}}')
        self.assertEqual((code, obj["message"]), (
            400, 'Binding in version "v1" cannot be handled as a Binding: json: cannot '
                 "unmarshal number into Go struct field ObjectReference.target.name of type "
                 "string"))

    def test_eviction(self) -> None:
        code, obj, _ = self.request(
            "POST", PODS + "/p/eviction",
            '{"apiVersion":"policy/v1","kind":"Eviction","metadata":{"name":"p"},'
            '"deleteOptions":{"gracePeriodSeconds":"x"}}')
        self.assertEqual((code, obj["message"]), (
            400, 'Eviction in version "v1" cannot be handled as a Eviction: json: cannot '
                 "unmarshal string into Go struct field DeleteOptions.deleteOptions."
                 "gracePeriodSeconds of type int64"))

    def test_token(self) -> None:
        code, obj, _ = self.request(
            "POST", "/api/v1/namespaces/default/serviceaccounts/default/token",
            '{"spec":{"expirationSeconds":"x"}}')
        self.assertEqual((code, obj["message"]), (
            400, 'TokenRequest in version "v1" cannot be handled as a TokenRequest: json: '
                 "cannot unmarshal string into Go struct field TokenRequestSpec.spec."
                 "expirationSeconds of type int64"))


class ScaleTests(KubeTestCase):
    """The scale subresource decodes its Scale with the same decoder (recorded from
    kube-apiserver v1.32)."""

    def setUp(self) -> None:
        super().setUp()
        code, _, _ = self.request("POST", DEPLOY, _deployment())
        self.assertEqual(code, 201)

    def test_put(self) -> None:
        for value, what in (('"x"', "string"), ("1.5", "number 1.5")):
            code, obj, _ = self.request(
                "PUT", DEPLOY + "/d/scale",
                '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},'
                '"spec":{"replicas":%s}}' % value)
            self.assertEqual((code, obj["message"]), (
                400, 'Scale in version "v1" cannot be handled as a Scale: json: cannot '
                     f"unmarshal {what} into Go struct field ScaleSpec.spec.replicas of type "
                     "int32"))

    def test_put_unknown_field_warns(self) -> None:
        code, obj, response = self.request(
            "PUT", DEPLOY + "/d/scale",
            '{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"d"},'
            '"spec":{"replicas":2},"foo":1}')
        self.assertEqual((code, obj["spec"], response.headers.getRawHeaders("warning")),
                         (200, {"replicas": 2}, ['299 - "unknown field \\"foo\\""']))

    def test_patch(self) -> None:
        code, obj, _ = self.request("PATCH", DEPLOY + "/d/scale", '{"spec":{"replicas":"x"}}',
                                    content_type="application/merge-patch+json")
        self.assertEqual((code, obj["reason"]), (422, "Invalid"))
        self.assertTrue(obj["message"].startswith(
            ' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"autoscaling/v1\\",'), obj)
        self.assertTrue(obj["message"].endswith(
            ": json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of "
            "type int32"), obj)
        code, obj, _ = self.request("PATCH", DEPLOY + "/d/scale", '{"spec":{"replicas":"x"}}',
                                    content_type="application/strategic-merge-patch+json")
        self.assertEqual((code, obj["message"]), (
            422, ' "" is invalid: patch: Invalid value: "map[spec:map[replicas:x]]": '
                 "unrecognized type: int32"))
        code, obj, _ = self.request("PATCH", DEPLOY + "/d/scale", '{"spec":{"replicas":3}}',
                                    content_type="application/merge-patch+json")
        self.assertEqual((code, obj["spec"]), (200, {"replicas": 3}))


class DeleteOptionsTests(KubeTestCase):
    """A delete's body is decoded as DeleteOptions; upstream answers its errors as plain
    errors (500, no reason) -- recorded from kube-apiserver v1.32."""

    def test_errors(self) -> None:
        self.request("POST", CM, {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "cm"}})
        struct = ('struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string '
                  '"json:\\"kind,omitempty\\"" }')
        for body, message in (
            ('{"gracePeriodSeconds":"x"}', "json: cannot unmarshal string into Go struct field "
                                           "DeleteOptions.gracePeriodSeconds of type int64"),
            ('{"propagationPolicy":5}', "json: cannot unmarshal number into Go struct field "
                                        "DeleteOptions.propagationPolicy of type "
                                        "v1.DeletionPropagation"),
            ('{"preconditions":{"uid":5}}', "json: cannot unmarshal number into Go struct field "
                                            "Preconditions.preconditions.uid of type types.UID"),
            ('{"dryRun":"All"}', "json: cannot unmarshal string into Go struct field "
                                 "DeleteOptions.dryRun of type []string"),
            ('{"kind":"DeleteOptions","apiVersion":"apps/v1","gracePeriodSeconds":1.5}',
             "json: cannot unmarshal number 1.5 into Go struct field DeleteOptions."
             "gracePeriodSeconds of type int64"),
            ("[1]", "couldn't get version/kind; json parse error: json: cannot unmarshal array "
                    f"into Go value of type {struct}"),
            ('{"a":', "couldn't get version/kind; json parse error: unexpected end of JSON "
                      "input"),
            ('{"kind":5}', "couldn't get version/kind; json parse error: json: cannot unmarshal "
                           "number into Go struct field .kind of type string"),
            ('{"kind":"Pod","apiVersion":"v1"}',
             'no kind "Pod" is registered for version "v1" in scheme '
             '"pkg/apis/meta/internalversion/scheme/register.go:27"'),
        ):
            code, obj, _ = self.request("DELETE", CM + "/cm?dryRun=All", body)
            self.assertEqual((code, obj.get("reason"), obj["message"]), (500, None, message))
        code, _, _ = self.request("GET", CM + "/cm")
        self.assertEqual(code, 200)


_BOMB = "".join(
    f"  {name}: &{name} [{', '.join([ref] * 9)}]\n"
    for name, ref in zip("abcdefghi", ['"lol"'] + [f"*{c}" for c in "abcdefgh"], strict=True))


class YAMLAliasTests(KubeTestCase):
    """A YAML alias bomb (9 levels of 9 aliases) is refused at once, as go-yaml v2 refuses
    excessive aliasing (recorded from kube-apiserver v1.32); ordinary aliases work."""

    def test_create(self) -> None:
        body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\nfoo:\n" + _BOMB
        code, obj, _ = self.request("POST", CM + "?dryRun=All", body,
                                    content_type="application/yaml")
        self.assertEqual((code, obj["message"]), (
            400, "the object provided is unrecognized (must be of type ConfigMap): yaml: "
                 "document contains excessive aliasing "
                 "(61706956657273696f6e3a2076310a6b696e643a20436f6e6669674d6170 ...)"))

    def test_apply(self) -> None:
        body = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nfoo:\n" + _BOMB)
        code, obj, _ = self.request("PATCH", DEPLOY + "/d?fieldManager=x", body,
                                    content_type="application/apply-patch+yaml")
        self.assertEqual((code, obj["message"]), (
            400, "error decoding YAML: error converting YAML to JSON: yaml: document contains "
                 "excessive aliasing"))

    def test_small_aliases(self) -> None:
        body = ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: s\n  labels: &l {a: b}\n"
                "  annotations: *l\n")
        code, obj, _ = self.request("POST", CM, body, content_type="application/yaml")
        self.assertEqual((code, obj["metadata"]["annotations"]), (201, {"a": "b"}))


class YAMLSyntaxTests(KubeTestCase):
    """Malformed YAML gets go-yaml's text (recorded from kube-apiserver v1.32); bodies are
    parsed with libyaml, whose errors go-yaml shares."""

    def test_messages(self):
        for body, error in (
            ("a: b: c", "yaml: mapping values are not allowed in this context"),
            ("a: [1, 2", "yaml: line 1: did not find expected ',' or ']'"),
            ("- a\nb: c", "yaml: line 1: did not find expected '-' indicator"),
            ("a:\n\t- b", "yaml: line 2: found character that cannot start any token"),
            ("a: &x 1\nb: *y", "yaml: unknown anchor 'y' referenced"),
            ("metadata:\n  name: x\n  labels: 'x", "yaml: line 3: found unexpected end of stream"),
            ('metadata:\n  name: x\ndata:\n  k: "\\q"',
             "yaml: line 4: found unknown escape character"),
            ("a: 1\n  b: 2", "yaml: line 2: mapping values are not allowed in this context"),
        ):
            code, obj, _ = self.request("POST", CM + "?dryRun=All", body,
                                        content_type="application/yaml")
            self.assertEqual((code, obj["message"].rsplit(" (", 1)[0]), (
                400, f"the object provided is unrecognized (must be of type ConfigMap): {error}"))
            code, obj, _ = self.request("PATCH", CM + "/x?dryRun=All&fieldManager=m", body,
                                        content_type="application/apply-patch+yaml")
            self.assertEqual((code, obj["message"]), (
                400, f"error decoding YAML: error converting YAML to JSON: {error}"))

    def test_deep(self):
        """Nesting past libyaml's 1000 levels is refused with go-yaml's text for its own
        limit (upstream takes up to 10000: a known difference); never a 500."""
        body = "foo: " + "[" * 1001 + "]" * 1001
        code, obj, _ = self.request("POST", CM + "?dryRun=All", body,
                                    content_type="application/yaml")
        self.assertEqual((code, obj["message"].rsplit(" (", 1)[0]), (
            400, "the object provided is unrecognized (must be of type ConfigMap): yaml: "
                 "exceeded max depth of 10000"))
        body = "metadata:\n  name: deep\nfoo: " + "[" * 999 + "]" * 999
        code, obj, _ = self.request("POST", CM + "?dryRun=All", body,
                                    content_type="application/yaml")
        self.assertEqual(code, 201, obj)


class ApplyTests(KubeTestCase):
    """Server-side apply of values of the wrong type: structured-merge-diff's errors, then
    Go's conversion of the merged object (recorded from kube-apiserver v1.32)."""

    def apply(self, meta: str, spec: str) -> tuple:
        body = ('{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"nd"%s},'
                '"spec":{%s}}' % (meta, spec))
        code, obj, _ = self.request("PATCH", DEPLOY + "/nd?dryRun=All&fieldManager=x", body,
                                    content_type="application/apply-patch+yaml")
        return code, obj.get("reason"), obj["message"]

    def test_typed_patch_object(self) -> None:
        prefix = "failed to create typed patch object (/nd; apps/v1, Kind=Deployment): "
        for meta, spec, message in (
            ("", '"replicas":"abc"', ".spec.replicas: expected numeric (int or float), got "
                                     "string"),
            ("", '"replicas":true', ".spec.replicas: expected numeric (int or float), got bool"),
            ("", '"paused":"x"', ".spec.paused: expected boolean, got &{x}"),
            ("", '"paused":1', ".spec.paused: expected boolean, got &{1}"),
            ("", '"minReadySeconds":[1]', ".spec.minReadySeconds: expected numeric (int or "
                                          "float), got []interface {}"),
            ("", '"template":{"spec":{"containers":[{"name":"c","image":5}]}}',
             '.spec.template.spec.containers[name="c"].image: expected string, got '
             "&value.valueUnstructured{Value:5}"),
            ("", '"template":{"spec":{"containers":[{"name":"c","image":[1]}]}}',
             '.spec.template.spec.containers[name="c"].image: expected string, got '
             "&value.valueUnstructured{Value:[]interface {}{1}}"),
            ("", '"template":{"spec":{"containers":{}}}',
             ".spec.template.spec.containers: expected list, got &{map[]}"),
            (',"labels":[]', "", ".metadata.labels: expected map, got &{[]}"),
            (',"labels":{"a":1}', "", ".metadata.labels.a: expected string, got "
                                      "&value.valueUnstructured{Value:1}"),
            ("", '"template":"x"', ".spec.template: expected map, got &{x}"),
            ("", '"replicas":"a","paused":"x"',
             "errors:\n  .spec.paused: expected boolean, got &{x}\n  .spec.replicas: expected "
             "numeric (int or float), got string"),
        ):
            self.assertEqual(self.apply(meta, spec), (500, None, prefix + message))

    def test_conversion(self) -> None:
        prefix = ("failed to convert new object (/nd; apps/v1, Kind=Deployment) to proper "
                  "version: unable to convert unstructured object to apps/v1, Kind=Deployment: ")
        for meta, spec, message in (
            ("", '"strategy":{"rollingUpdate":{"maxSurge":true}}',
             "json: cannot unmarshal bool into Go value of type int32"),
            ("", '"template":{"spec":{"containers":[{"name":"c","resources":{"limits":'
                 '{"cpu":true}}}]}}',
             "quantities must match the regular expression "
             "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
            (',"creationTimestamp":5', "",
             "json: cannot unmarshal number into Go value of type string"),
            ("", '"replicas":1.5', "cannot convert float64 to int32"),
        ):
            self.assertEqual(self.apply(meta, spec), (500, None, prefix + message))


class CustomResourceTests(KubeTestCase):
    """Custom resources have no type table: only their metadata is typed, as upstream's
    unstructured decoding does (recorded from kube-apiserver v1.32)."""

    def test_metadata(self) -> None:
        from tests.apiextensions.test_customresources import CRD, CRDS, WIDGETS

        code, _, _ = self.request("POST", CRDS, CRD)
        self.assertEqual(code, 201)
        for _ in range(5):
            self.clock.advance(0)
        for meta, what in (('"x"', "string"), ("[]", "array")):
            code, obj, _ = self.request(
                "POST", WIDGETS + "?dryRun=All",
                '{"apiVersion":"example.com/v1","kind":"Widget","metadata":%s}' % meta)
            self.assertEqual((code, obj["message"]), (
                400, 'Widget in version "v1" cannot be handled as a Widget: json: cannot '
                     f"unmarshal {what} into Go value of type v1.ObjectMeta"))
