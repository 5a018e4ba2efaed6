# -*- test-case-name: tests.integration.test_server_side_apply -*-
"""
Server-side apply with the real C{kubectl} against a real C{twistd -n kubeapi}: conflicts,
C{--force-conflicts}, C{--show-managed-fields}, and the client-side to server-side upgrade.

Expected texts are kube-apiserver v1.32's (C{k8s.io/apimachinery/pkg/util/managedfields/
internal/conflict.go}; kubectl prints the Status message after C{error: }).
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units


def _deployment(name: str, replicas: int) -> dict:
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.14.2",
                                         "ports": [{"containerPort": 80}]}]},
            },
        },
    }


#: The fields of L{_deployment} as kubectl's Apply entry records them upstream.
APPLIED_FIELDS = {
    "f:metadata": {"f:labels": {"f:app": {}}},
    "f:spec": {
        "f:replicas": {},
        "f:selector": {},
        "f:template": {
            "f:metadata": {"f:labels": {"f:app": {}}},
            "f:spec": {"f:containers": {'k:{"name":"nginx"}': {
                ".": {}, "f:image": {}, "f:name": {},
                "f:ports": {'k:{"containerPort":80,"protocol":"TCP"}': {
                    ".": {}, "f:containerPort": {}}},
            }}},
        },
    },
}


class ServerSideApplyTests(ServerTestMixin, SynchronousTestCase):
    def _apply(self, ns: str, doc: dict, *flags: str, check: bool = True):
        return self.server.kubectl("apply", "--server-side", "-n", ns, "-f", "-", *flags,
                                   input=json.dumps(doc), check=check)

    def test_conflict_force_and_managed_fields(self) -> None:
        """
        A second manager changing C{spec.replicas} gets upstream's conflict naming the first;
        C{--force-conflicts} takes the field over; the entries have upstream's shape.
        """
        ns = self.namespace()
        out = self._apply(ns, _deployment("web", 2))
        self.assertEqual(out.stdout.strip(), "deployment.apps/web serverside-applied")
        failed = self._apply(ns, _deployment("web", 3), "--field-manager=other", check=False)
        self.assertNotEqual(failed.returncode, 0)
        self.assertIn('Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
                      failed.stderr)
        self._apply(ns, _deployment("web", 3), "--field-manager=other", "--force-conflicts")
        obj = json.loads(self.server.kubectl(
            "get", "deployment", "web", "-n", ns, "-o", "json", "--show-managed-fields").stdout)
        self.assertEqual(obj["spec"]["replicas"], 3)
        entries = {e["manager"]: e for e in obj["metadata"]["managedFields"]}
        self.assertEqual(sorted(entries), ["kubectl", "other"])
        kubectl_entry = entries["kubectl"]
        self.assertEqual(sorted(kubectl_entry),
                         ["apiVersion", "fieldsType", "fieldsV1", "manager", "operation",
                          "time"])
        self.assertEqual((kubectl_entry["operation"], kubectl_entry["apiVersion"],
                          kubectl_entry["fieldsType"]), ("Apply", "apps/v1", "FieldsV1"))
        expected = json.loads(json.dumps(APPLIED_FIELDS))
        del expected["f:spec"]["f:replicas"]
        self.assertEqual(kubectl_entry["fieldsV1"], expected)
        self.assertEqual(entries["other"]["fieldsV1"], APPLIED_FIELDS)
        plain = json.loads(self.server.kubectl(
            "get", "deployment", "web", "-n", ns, "-o", "json").stdout)
        self.assertNotIn("managedFields", plain["metadata"])

    def test_client_side_then_server_side(self) -> None:
        """
        Plain C{kubectl apply} still works (three-way strategic merge), and a later
        C{kubectl apply --server-side} takes over the client-side applier's fields without a
        conflict (kubectl's csaupgrade of the managedFields, then the apply).
        """
        ns = self.namespace()
        doc = _deployment("csa", 1)
        out = self.server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(doc))
        self.assertEqual(out.stdout.strip(), "deployment.apps/csa created")
        doc["spec"]["replicas"] = 2
        out = self.server.kubectl("apply", "-n", ns, "-f", "-", input=json.dumps(doc))
        self.assertEqual(out.stdout.strip(), "deployment.apps/csa configured")
        obj = self.get_json(ns, "deployment", "csa")
        self.assertEqual(obj["spec"]["replicas"], 2)
        doc["spec"]["replicas"] = 4
        self._apply(ns, doc)
        obj = json.loads(self.server.kubectl(
            "get", "deployment", "csa", "-n", ns, "-o", "json", "--show-managed-fields").stdout)
        self.assertEqual(obj["spec"]["replicas"], 4)
        managers = sorted((e["manager"], e["operation"]) for e in obj["metadata"]["managedFields"])
        self.assertNotIn(("kubectl-client-side-apply", "Update"), managers)
        self.assertIn(("kubectl", "Apply"), managers)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
