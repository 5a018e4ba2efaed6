"""OpenAPI v3 schemas of built-in kinds derived from kubetwist's type definitions."""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime import types as typedefs
from kubetwist.server.openapi_types import kind_schemas
from tests.support import KubeTestCase


class KindSchemaTests(SynchronousTestCase):
    def test_deployment_reaches_container_resources(self):
        """The Deployment schema carries its GVK and reaches Container.resources by refs."""
        s = kind_schemas("apps", "v1", "Deployment")
        top = s["io.k8s.api.apps.v1.Deployment"]
        self.assertEqual(top["x-kubernetes-group-version-kind"],
                         [{"group": "apps", "version": "v1", "kind": "Deployment"}])
        self.assertEqual(list(top["properties"])[:2], ["apiVersion", "kind"])
        containers = s["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
        self.assertEqual(containers["type"], "array")
        self.assertEqual(containers["x-kubernetes-patch-merge-key"], "name")
        self.assertEqual(containers["items"],
                         {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}],
                          "default": {}})
        self.assertIn("requests", s["io.k8s.api.core.v1.ResourceRequirements"]["properties"])
        self.assertEqual(s["io.k8s.apimachinery.pkg.apis.meta.v1.Time"],
                         {"type": "string", "format": "date-time"})

    def test_pod_spec_containers_markers(self):
        """PodSpec.containers is a list-map keyed by name, merged on name (SMP)."""
        s = kind_schemas("", "v1", "Pod")
        self.assertEqual(s["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"], {
            "type": "array",
            "items": {"allOf": [{"$ref": "#/components/schemas/io.k8s.api.core.v1.Container"}],
                      "default": {}},
            "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "x-kubernetes-patch-strategy": "merge",
            "x-kubernetes-patch-merge-key": "name",
        })

    def test_label_selector_atomic(self):
        """LabelSelector is C{+structType=atomic}: C{x-kubernetes-map-type: atomic}."""
        s = kind_schemas("apps", "v1", "Deployment")
        self.assertEqual(s["io.k8s.apimachinery.pkg.apis.meta.v1.LabelSelector"], {
            "type": "object",
            "properties": {
                "matchLabels": {"type": "object",
                                "additionalProperties": {"type": "string", "default": ""}},
                "matchExpressions": {
                    "type": "array",
                    "items": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery."
                                                 "pkg.apis.meta.v1.LabelSelectorRequirement"}],
                              "default": {}},
                    "x-kubernetes-list-type": "atomic",
                },
            },
            "x-kubernetes-map-type": "atomic",
        })

    def test_required_lists(self):
        """C{required} lists the non-optional fields in declaration order."""
        s = kind_schemas("apps", "v1", "Deployment")
        self.assertEqual(s["io.k8s.api.core.v1.Container"]["required"], ["name"])
        self.assertEqual(s["io.k8s.api.apps.v1.DeploymentSpec"]["required"],
                         ["selector", "template"])
        self.assertEqual(s["io.k8s.api.core.v1.PodSpec"]["required"], ["containers"])
        self.assertNotIn("required", s["io.k8s.api.apps.v1.Deployment"])
        self.assertNotIn("required", s["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"])
        s = kind_schemas("rbac.authorization.k8s.io", "v1", "ClusterRoleBindingList")
        self.assertEqual(s["io.k8s.api.rbac.v1.ClusterRoleBindingList"]["required"], ["items"])
        self.assertEqual(s["io.k8s.api.rbac.v1.ClusterRoleBinding"]["required"], ["roleRef"])

    def test_defaults(self):
        """
        Enforced defaults: zero values on non-pointer non-omitempty scalars, C{{}} on
        non-pointer structs, C{+default=} values; none on pointers or Time.
        """
        s = kind_schemas("", "v1", "Pod")
        self.assertEqual(s["io.k8s.api.core.v1.ContainerPort"], {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "hostPort": {"type": "integer", "format": "int32"},
                "containerPort": {"type": "integer", "format": "int32", "default": 0},
                "protocol": {"type": "string", "default": "TCP", "enum": ["SCTP", "TCP", "UDP"]},
                "hostIP": {"type": "string"},
            },
            "required": ["containerPort"],
        })
        meta = s["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"]["properties"]
        self.assertEqual(meta["creationTimestamp"], {
            "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.Time"}]})
        self.assertEqual(s["io.k8s.api.core.v1.Pod"]["properties"]["spec"]["default"], {})
        disk = s["io.k8s.api.core.v1.AzureDiskVolumeSource"]["properties"]
        self.assertEqual((disk["cachingMode"], disk["readOnly"]),
                         ({"type": "string", "default": "ReadWrite",
                           "enum": ["None", "ReadOnly", "ReadWrite"]},
                          {"type": "boolean", "default": False}))

    def test_enums(self):
        """A field of a C{+enum} type lists the type's constants, sorted; pointers too."""
        s = kind_schemas("", "v1", "Pod")
        props = s["io.k8s.api.core.v1.Container"]["properties"]
        self.assertEqual(props["imagePullPolicy"],
                         {"type": "string", "enum": ["Always", "IfNotPresent", "Never"]})
        s = kind_schemas("scheduling.k8s.io", "v1", "PriorityClass")
        self.assertEqual(s["io.k8s.api.scheduling.v1.PriorityClass"]["properties"][
            "preemptionPolicy"], {"type": "string", "enum": ["Never", "PreemptLowerPriority"]})
        s = kind_schemas("discovery.k8s.io", "v1", "EndpointSlice")
        self.assertEqual(s["io.k8s.api.discovery.v1.EndpointSlice"]["properties"][
            "addressType"], {"type": "string", "default": "", "enum": ["FQDN", "IPv4", "IPv6"]})
        self.assertNotIn("enum", props["name"])

    def test_unions(self):
        """A C{+union} struct publishes C{x-kubernetes-unions}."""
        s = kind_schemas("", "v1", "Pod")
        self.assertEqual(s["io.k8s.api.core.v1.SeccompProfile"]["x-kubernetes-unions"],
                         [{"discriminator": "type",
                           "fields-to-discriminateBy": {"localhostProfile": "LocalhostProfile"}}])

    def test_bytes_list_type(self):
        """A C{+listType=atomic} C{[]byte} keeps its marker on the byte string."""
        s = kind_schemas("certificates.k8s.io", "v1", "CertificateSigningRequest")
        self.assertEqual(
            s["io.k8s.api.certificates.v1.CertificateSigningRequestSpec"]["properties"][
                "request"],
            {"type": "string", "format": "byte", "x-kubernetes-list-type": "atomic"})

    def test_every_array_marked_as_upstream(self):
        """
        Over every served kind's schemas, each array property carries the
        C{x-kubernetes-list-type} upstream's Go types give it (k8s.io/api v0.32): 230 marked
        (165 atomic, 51 map, 14 set); the 51 unmarked are exactly the C{items} of list kinds.
        """
        schemas: dict = {}
        for group, version, kind in typedefs.KINDS:
            schemas.update(kind_schemas(group, version, kind))
        arrays = [(name, prop, p) for name, sch in schemas.items()
                  for prop, p in sch.get("properties", {}).items() if p.get("type") == "array"]
        counts: dict = {}
        for _, _, p in arrays:
            lt = p.get("x-kubernetes-list-type", "")
            counts[lt] = counts.get(lt, 0) + 1
        self.assertEqual(counts, {"atomic": 165, "map": 51, "set": 14, "": 51})
        unmarked = {(name.rsplit(".", 1)[1].endswith("List"), prop)
                    for name, prop, p in arrays if "x-kubernetes-list-type" not in p}
        self.assertEqual(unmarked, {(True, "items")})
        self.assertEqual(
            sorted(name for name, sch in schemas.items()
                   if sch.get("x-kubernetes-map-type") == "atomic")[:3],
            ["io.k8s.api.admissionregistration.v1.MatchResources",
             "io.k8s.api.admissionregistration.v1.NamedRuleWithOperations",
             "io.k8s.api.admissionregistration.v1.ParamKind"])

    def test_unknown_kind(self):
        """A kind without a type definition has no derived schema."""
        self.assertIsNone(kind_schemas("example.com", "v1", "Widget"))


class PublishedTests(KubeTestCase):
    def test_v3_document_has_kind_with_gvk_and_list(self):
        """/openapi/v3/apis/apps/v1 publishes Deployment (with GVK) and DeploymentList."""
        _, root, _ = self.request("GET", "/openapi/v3")
        _, doc, _ = self.request("GET", root["paths"]["apis/apps/v1"]["serverRelativeURL"])
        schemas = doc["components"]["schemas"]
        self.assertEqual(
            schemas["io.k8s.api.apps.v1.Deployment"]["x-kubernetes-group-version-kind"],
            [{"group": "apps", "version": "v1", "kind": "Deployment"}])
        self.assertEqual(
            schemas["io.k8s.api.apps.v1.DeploymentList"]["x-kubernetes-group-version-kind"],
            [{"group": "apps", "version": "v1", "kind": "DeploymentList"}])
        self.assertIn("spec", schemas["io.k8s.api.apps.v1.Deployment"]["properties"])
        self.assertEqual(schemas["io.k8s.api.apps.v1.DeploymentSpec"]["required"],
                         ["selector", "template"])
