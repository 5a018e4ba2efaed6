"""Watch streams over HTTP: events as JSON lines, resourceVersion replay, timeouts."""

import json

from tests.support import ADMIN, KubeTestCase


class WatchTests(KubeTestCase):
    def open_watch(self, path):
        d = self.treq.get("https://kubetwist.test" + path, headers={k: [v] for k, v in ADMIN.items()})
        self.treq.flush()
        response = self.successResultOf(d)
        chunks = []
        response.deliverBody(_Collector(chunks))
        self.treq.flush()
        return response, chunks

    def events(self, chunks):
        return [json.loads(line) for line in b"".join(chunks).splitlines() if line]

    def cm(self, name):
        return self.request("POST", "/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})[1]

    def test_events_stream(self):
        """ADDED, MODIFIED and DELETED arrive as they happen, as JSON lines."""
        _, first = self.request("GET", "/api/v1/namespaces/default/configmaps")[:2]
        rv = first["metadata"]["resourceVersion"]
        response, chunks = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=1&resourceVersion={rv}")
        self.assertEqual(response.code, 200)
        self.cm("w")
        self.request("PATCH", "/api/v1/namespaces/default/configmaps/w",
                     {"data": {"a": "b"}}, content_type="application/merge-patch+json")
        self.request("DELETE", "/api/v1/namespaces/default/configmaps/w")
        self.treq.flush()
        evs = self.events(chunks)
        self.assertEqual([e["type"] for e in evs], ["ADDED", "MODIFIED", "DELETED"])
        self.assertEqual(evs[0]["object"]["kind"], "ConfigMap")
        self.assertEqual(evs[0]["object"]["apiVersion"], "v1")

    def test_replay_from_old_resource_version(self):
        """A watch from an older resourceVersion replays the changes since then."""
        _, first = self.request("GET", "/api/v1/namespaces/default/configmaps")[:2]
        rv = first["metadata"]["resourceVersion"]
        self.cm("a")
        self.cm("b")
        _, chunks = self.open_watch(
            f"/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={rv}")
        evs = self.events(chunks)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in evs],
                         [("ADDED", "a"), ("ADDED", "b")])

    def test_timeout_seconds_ends_stream(self):
        """timeoutSeconds closes the stream on the clock."""
        response, chunks = self.open_watch("/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=5")
        self.assertEqual(len(self.chain.long_running), 1)
        self.clock.advance(5)
        self.treq.flush()
        self.assertEqual(len(self.chain.long_running), 0)

    def test_send_initial_events_bookmark(self):
        """sendInitialEvents: ADDED for existing objects, then the annotated BOOKMARK."""
        self.cm("a")
        _, chunks = self.open_watch(
            "/api/v1/namespaces/default/configmaps?watch=1&sendInitialEvents=true"
            "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true")
        evs = self.events(chunks)
        self.assertEqual(evs[-1]["type"], "BOOKMARK")
        self.assertEqual(evs[-1]["object"]["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true"})
        self.assertIn("a", [e["object"]["metadata"]["name"] for e in evs[:-1]])


class _Collector:
    def __init__(self, chunks):
        self.chunks = chunks

    def makeConnection(self, transport):
        pass

    def dataReceived(self, data):
        self.chunks.append(data)

    def connectionLost(self, reason):
        pass
