"""
Tests for L{kubetwist.apimachinery.patchmeta}: strategic-merge metadata derived from the type
tables of L{kubetwist.runtime.types}.
"""

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.patchmeta import PatchMeta, patch_meta_for
from tests.support import KubeTestCase


class PatchMetaTests(SynchronousTestCase):
    def test_tags_from_type_tables(self):
        """
        PodSpec.containers is C{merge} keyed by C{name}; Container.ports by C{containerPort};
        PodSpec.volumes is C{merge,retainKeys} (the Go struct tags).
        """
        spec, strategies, key = patch_meta_for("", "Pod").lookup_struct("spec")
        self.assertEqual((strategies, key), ([], ""))
        container, strategies, key = spec.lookup_slice("containers")
        self.assertEqual((strategies, key), (["merge"], "name"))
        self.assertEqual(container.lookup_slice("ports")[1:], (["merge"], "containerPort"))
        self.assertEqual(spec.lookup_slice("volumes")[1:], (["merge", "retainKeys"], "name"))

    def test_inline_fields_promoted(self):
        """
        A field of an inline embedded struct (Volume.VolumeSource.ephemeral) is found on the
        outer struct, as Go's JSON field promotion does.
        """
        spec = patch_meta_for("", "Pod").lookup_struct("spec")[0]
        volume = spec.lookup_slice("volumes")[0]
        ephemeral = volume.lookup_struct("ephemeral")[0]
        self.assertEqual(ephemeral.name, "EphemeralVolumeSource")

    def test_version_chooses_the_type(self):
        """
        HorizontalPodAutoscaler's status.conditions merge by C{type} in autoscaling/v2; v1 has
        no such field (it keeps conditions in an annotation).
        """
        v2 = patch_meta_for("autoscaling", "HorizontalPodAutoscaler", "v2")
        status = v2.lookup_struct("status")[0]
        self.assertEqual(status.lookup_slice("conditions")[1:], (["merge"], "type"))
        v1 = patch_meta_for("autoscaling", "HorizontalPodAutoscaler", "v1")
        self.assertEqual(v1.lookup_struct("status")[0].lookup_slice("conditions")[1:], ([], ""))

    def test_unknown_field_has_no_strategy(self):
        """A key the struct does not declare answers an empty schema and no strategy."""
        sub, strategies, key = patch_meta_for("apps", "Deployment").lookup_struct("nope")
        self.assertEqual((sub.name, strategies, key), ("", [], ""))
        self.assertEqual(PatchMeta("X", None).lookup_slice("a")[1:], ([], ""))

    def test_custom_resources_have_none(self):
        """A kind of no built-in group has no metadata (SMP is refused with 415 upstream)."""
        self.assertIsNone(patch_meta_for("example.com", "Widget"))

    def test_every_served_kind_has_metadata(self):
        """
        Every resource kube-apiserver's built-in groups serve has strategic-merge metadata
        whose C{metadata.ownerReferences} merge by C{uid}.
        """
        from kubetwist.controlplane.instance import core_group_infos

        for info in core_group_infos():
            for spec in info.resources:
                meta = patch_meta_for(spec.group, spec.kind, spec.version)
                self.assertIsNotNone(meta, spec.kind)
                object_meta = meta.lookup_struct("metadata")[0]
                self.assertEqual(object_meta.lookup_slice("ownerReferences")[1:],
                                 (["merge"], "uid"), spec.kind)


class StrategicPatchHTTPTests(KubeTestCase):
    def test_ingress_accepts_strategic_merge_patch(self):
        """
        A strategic merge patch (what client-side C{kubectl apply} sends) of an Ingress is
        applied, not refused with 415: its untagged rules list is replaced whole.
        """
        base = "/apis/networking.k8s.io/v1/namespaces/default/ingresses"
        ing = {"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
               "metadata": {"name": "web"},
               "spec": {"defaultBackend": {"service": {"name": "a", "port": {"number": 80}}},
                        "rules": [{"host": "a.example.com"}, {"host": "b.example.com"}]}}
        code, _, _ = self.request("POST", base, ing)
        self.assertEqual(code, 201)
        code, body, _ = self.request(
            "PATCH", base + "/web", {"spec": {"rules": [{"host": "c.example.com"}]}},
            content_type="application/strategic-merge-patch+json")
        self.assertEqual(code, 200, body)
        self.assertEqual(body["spec"]["rules"], [{"host": "c.example.com"}])
        self.assertEqual(body["spec"]["defaultBackend"]["service"]["name"], "a")
