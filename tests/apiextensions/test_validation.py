"""
Tests for L{kubetwist.apiextensions.validation}: CRD validation, defaulting and strategy as
upstream's C{pkg/apis/apiextensions/validation} (messages and internal-form field paths).
"""

import copy

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apiextensions import validation as crdv


def crd(**spec_overrides) -> dict:
    spec = {
        "group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "listKind": "WidgetList"},
        "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
            "openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {"size": {"type": "integer"}}}}}}}],
        "conversion": {"strategy": "None"},
    }
    spec.update(spec_overrides)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"}, "spec": spec,
            "status": {"storedVersions": ["v1"]}}


def messages(obj: dict) -> list[str]:
    return [e.error() for e in crdv.validate_crd(obj)]


class ValidateCRDTests(SynchronousTestCase):
    """Create validation."""

    def test_valid(self) -> None:
        """A complete v1 CRD has no errors."""
        self.assertEqual(messages(crd()), [])

    def test_name_must_match(self) -> None:
        """metadata.name must be plural.group."""
        obj = crd()
        obj["metadata"]["name"] = "other.example.com"
        self.assertEqual(messages(obj), [
            'metadata.name: Invalid value: "other.example.com": '
            'must be spec.names.plural+"."+spec.group'])

    def test_group_needs_a_dot(self) -> None:
        """A group without a dot is refused with upstream's text."""
        obj = crd(group="example")
        obj["metadata"]["name"] = "widgets.example"
        self.assertIn('spec.group: Invalid value: "example": should be a domain with at least '
                      'one dot', messages(obj))

    def test_scope(self) -> None:
        """The scope is Cluster or Namespaced."""
        self.assertIn('spec.scope: Unsupported value: "Global": supported values: "Cluster", '
                      '"Namespaced"', messages(crd(scope="Global")))

    def test_one_storage_version(self) -> None:
        """Exactly one version is the storage version."""
        obj = crd()
        obj["spec"]["versions"].append(copy.deepcopy(obj["spec"]["versions"][0]))
        obj["spec"]["versions"][1]["name"] = "v2"
        self.assertIn("spec.versions: Invalid value: must have exactly one version marked as "
                      "storage version", messages(obj))

    def test_unique_version_names(self) -> None:
        """Version names are unique."""
        obj = crd()
        obj["spec"]["versions"].append(dict(obj["spec"]["versions"][0], storage=False))
        self.assertIn("spec.versions: Invalid value: must contain unique version names",
                      messages(obj))

    def test_names(self) -> None:
        """Names are DNS-1035 labels; kind and listKind differ."""
        obj = crd(names={"plural": "Widgets", "singular": "widget", "kind": "Widget",
                         "listKind": "Widget"})
        obj["metadata"]["name"] = "Widgets.example.com"
        errs = messages(obj)
        self.assertIn('spec.names.listKind: Invalid value: "Widget": kind and listKind may not '
                      'be the same', errs)
        self.assertTrue(any(e.startswith('spec.names.plural: Invalid value: "Widgets": a DNS-1035 '
                                         'label must consist of lower case') for e in errs), errs)

    def test_schema_path_single_version(self) -> None:
        """Versions sharing one schema are validated at spec.validation, as upstream's internal
        form; a property without a type is not structural."""
        obj = crd()
        obj["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"][
            "properties"]["size"] = {"description": "untyped"}
        self.assertIn("spec.validation.openAPIV3Schema.properties[spec].properties[size].type: "
                      "Required value: must not be empty for specified object fields",
                      messages(obj))

    def test_schema_required(self) -> None:
        """Every version needs a schema."""
        obj = crd()
        del obj["spec"]["versions"][0]["schema"]
        self.assertIn("spec.versions[0].schema.openAPIV3Schema: Required value", messages(obj))

    def test_printer_columns(self) -> None:
        """Column types and JSONPaths are checked at spec.additionalPrinterColumns."""
        obj = crd()
        obj["spec"]["versions"][0]["additionalPrinterColumns"] = [
            {"name": "X", "type": "map", "jsonPath": "spec.x"}]
        errs = messages(obj)
        self.assertIn('spec.additionalPrinterColumns[0].type: Invalid value: "map": must be one '
                      'of boolean,date,integer,number,string', errs)
        self.assertIn('spec.additionalPrinterColumns[0].JSONPath: Invalid value: "spec.x": must '
                      'be a simple json path starting with .', errs)

    def test_scale_paths(self) -> None:
        """Scale paths live under .spec and .status."""
        obj = crd()
        obj["spec"]["versions"][0]["subresources"] = {"scale": {
            "specReplicasPath": ".status.replicas", "statusReplicasPath": ".status.replicas"}}
        self.assertIn('spec.subresources.scale.specReplicasPath: Invalid value: '
                      '".status.replicas": should be a json path under .spec', messages(obj))

    def test_webhook_conversion(self) -> None:
        """Webhook conversion needs https, a client config and review versions."""
        obj = crd(conversion={"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "http://example.com/convert"}}})
        errs = messages(obj)
        self.assertIn('spec.conversion.webhookClientConfig.url: Invalid value: "http": '
                      "'https' is the only allowed URL scheme; desired format: "
                      "https://host[/path]", errs)
        self.assertIn("spec.conversion.conversionReviewVersions: Required value", errs)

    def test_api_approval(self) -> None:
        """A *.k8s.io group needs the api-approved.kubernetes.io annotation."""
        obj = crd(group="things.k8s.io")
        obj["metadata"]["name"] = "widgets.things.k8s.io"
        self.assertEqual(messages(obj), [
            'metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups '
            'must have approval annotation "api-approved.kubernetes.io", see '
            'https://github.com/kubernetes/enhancements/pull/1111'])
        obj["metadata"]["annotations"] = {
            "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/1"}
        self.assertEqual(messages(obj), [])

    def test_stored_versions(self) -> None:
        """The storage version must be listed in status.storedVersions."""
        obj = crd()
        obj["status"]["storedVersions"] = ["v0"]
        errs = messages(obj)
        self.assertIn('status.storedVersions: Invalid value: ["v0"]: must have the storage '
                      'version v1', errs)


class UpdateTests(SynchronousTestCase):
    """Update validation and the strategy."""

    def test_immutable_group_and_plural(self) -> None:
        """group and names.plural never change; scope and kind are fixed once Established."""
        old = crd()
        old["status"]["conditions"] = [{"type": "Established", "status": "True"}]
        new = copy.deepcopy(old)
        new["spec"]["scope"] = "Cluster"
        errs = [e.error() for e in crdv.validate_crd_update(new, old)]
        self.assertIn('spec.scope: Invalid value: "Cluster": field is immutable', errs)

    def test_prepare_for_update(self) -> None:
        """A spec change bumps the generation and records a new storage version."""
        old = crd()
        old["metadata"]["generation"] = 1
        new = copy.deepcopy(old)
        new["spec"]["versions"][0]["storage"] = False
        new["spec"]["versions"].append(dict(copy.deepcopy(old["spec"]["versions"][0]),
                                            name="v2", storage=True))
        crdv.prepare_for_update(new, old)
        self.assertEqual((new["metadata"]["generation"], new["status"]["storedVersions"]),
                         (2, ["v1", "v2"]))

    def test_defaults(self) -> None:
        """singular, listKind and conversion strategy None are defaulted."""
        obj = crd(names={"plural": "widgets", "kind": "Widget"})
        del obj["spec"]["conversion"]
        crdv.default_crd(obj)
        self.assertEqual((obj["spec"]["names"], obj["spec"]["conversion"]),
                         ({"plural": "widgets", "kind": "Widget", "singular": "widget",
                           "listKind": "WidgetList"}, {"strategy": "None"}))
