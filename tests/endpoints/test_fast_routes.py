# -*- test-case-name: tests.endpoints.test_fast_routes -*-
"""
The precompiled routes of the hot paths (L{APIGroupVersion.fast_endpoint}): they agree with
the route tree on every path they take, and leave everything else to it.
"""

from __future__ import annotations

from tests.support import KubeTestCase


class FastRouteTests(KubeTestCase):
    def setUp(self) -> None:
        super().setUp()
        self.core = self.kube.server.group_versions["/api/v1"]
        self.apps = self.kube.server.group_versions["/apis/apps/v1"]

    def test_hot_shapes(self) -> None:
        """Collections and objects, cluster-wide and namespaced, for the methods they
        serve; the route tree accepts each of them too."""
        for agv, method, path, kwargs in [
            (self.core, "GET", "/namespaces/ns/configmaps", {"namespace": "ns"}),
            (self.core, "POST", "/namespaces/ns/configmaps", {"namespace": "ns"}),
            (self.core, "DELETE", "/namespaces/ns/configmaps", {"namespace": "ns"}),
            (self.core, "GET", "/namespaces/ns/configmaps/a", {"namespace": "ns",
                                                               "name": "a"}),
            (self.core, "PATCH", "/namespaces/ns/pods/p", {"namespace": "ns", "name": "p"}),
            (self.core, "GET", "/configmaps", {}),
            (self.core, "GET", "/namespaces", {}),
            (self.core, "GET", "/namespaces/ns", {"name": "ns"}),
            (self.core, "PUT", "/nodes/n1", {"name": "n1"}),
            (self.apps, "GET", "/namespaces/ns/deployments/d", {"namespace": "ns",
                                                                "name": "d"}),
        ]:
            with self.subTest(method=method, path=path):
                found = agv.fast_endpoint(method, path)
                self.assertIsNotNone(found)
                self.assertEqual(found[1], kwargs)
                self.assertEqual(agv.match(method, agv.prefix + path), "ok")

    def test_left_to_the_route_tree(self) -> None:
        """Subresources (a namespace's too), watch paths, methods a route does not serve,
        unknown resources, escaped and empty segments."""
        for agv, method, path in [
            (self.core, "PUT", "/namespaces/ns/status"),
            (self.core, "PUT", "/namespaces/ns/finalize"),
            (self.core, "GET", "/namespaces/ns/pods/p/log"),
            (self.core, "GET", "/watch/configmaps"),
            (self.core, "PUT", "/namespaces/ns/configmaps"),
            (self.core, "POST", "/configmaps"),
            (self.core, "GET", "/namespaces/ns/nothing"),
            (self.core, "GET", "/namespaces/ns/configmaps/a%2Fb"),
            (self.core, "GET", "/namespaces//configmaps"),
            (self.core, "GET", "/namespaces/ns/configmaps/"),
            (self.apps, "GET", "/namespaces/ns/deployments/d/scale"),
        ]:
            with self.subTest(method=method, path=path):
                self.assertIsNone(agv.fast_endpoint(method, path))

    def test_served_through_the_table(self) -> None:
        """A GET of an object answers through the table the same as before."""
        self.request("POST", "/api/v1/namespaces", {"metadata": {"name": "fr"}})
        self.request("POST", "/api/v1/namespaces/fr/configmaps",
                     {"metadata": {"name": "c"}, "data": {"k": "v"}})
        calls = []
        original = type(self.core).fast_endpoint

        def spy(agv, method, path):
            found = original(agv, method, path)
            calls.append(found is not None)
            return found

        self.patch(type(self.core), "fast_endpoint", spy)
        code, body, _ = self.request("GET", "/api/v1/namespaces/fr/configmaps/c")
        self.assertEqual((code, body["data"]), (200, {"k": "v"}))
        code, body, _ = self.request("GET", "/api/v1/namespaces/fr/configmaps/missing")
        self.assertEqual((code, body["reason"]), (404, "NotFound"))
        self.assertEqual(calls, [True, True])
