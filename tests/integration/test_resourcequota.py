# -*- test-case-name: tests.integration.test_resourcequota -*-
"""
Issue 12's ResourceQuota acceptance with the real C{kubectl} against a real C{twistd -n
kubeapi}: a quota of two pods gets its C{status} from kubetwist's quota controller, admits two
pods, refuses the third with upstream's message, and reads C{pods: "2"} used.
"""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units, etcd_skip_reason


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


class ResourceQuotaAcceptanceMixin(ServerTestMixin):
    """ResourceQuota admission and status through kubectl."""

    def test_third_pod_refused(self) -> None:
        """Two pods fit C{pods: 2}; the third is refused (403, upstream's text) and the
        quota's C{status.used} reads C{pods: "2"}."""
        ns = self.namespace()
        self.create(ns, {"apiVersion": "v1", "kind": "ResourceQuota",
                         "metadata": {"name": "q"}, "spec": {"hard": {"pods": "2"}}})
        # the controller fills status.used; kubectl waits for it (no sleeping)
        self.server.kubectl("wait", "-n", ns, "resourcequota/q",
                            "--for=jsonpath={.status.used.pods}=0", "--timeout=30s")
        self.create(ns, _pod("p1"))
        self.create(ns, _pod("p2"))
        r = self.server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps(_pod("p3")),
                                check=False)
        self.assertNotEqual(r.returncode, 0)
        self.assertEqual(r.stderr.strip(),
                         'Error from server (Forbidden): error when creating "STDIN": pods "p3" '
                         'is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, '
                         'limited: pods=2')
        used = self.server.kubectl("get", "resourcequota", "q", "-n", ns,
                                   "-o", "jsonpath={.status.used}").stdout
        self.assertEqual(used, '{"pods":"2"}')
        hard = self.server.kubectl("get", "resourcequota", "q", "-n", ns,
                                   "-o", "jsonpath={.status.hard}").stdout
        self.assertEqual(hard, '{"pods":"2"}')


class ResourceQuotaAcceptanceTests(ResourceQuotaAcceptanceMixin, SynchronousTestCase):
    """On the embedded store."""


class EtcdResourceQuotaTests(ResourceQuotaAcceptanceMixin, SynchronousTestCase):
    """On a real etcd (C{--etcd-servers}): the controller's watches through the Cacher."""

    use_etcd = True
    skip = etcd_skip_reason()


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
