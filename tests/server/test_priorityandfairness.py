"""API Priority and Fairness in the real chain: classification headers, seats, queues, 429s
(issue 11's acceptance: a flood from one user through a low priority level gets 429s while
another user's requests at a different level are served)."""

from __future__ import annotations

from typing import Any

from twisted.internet import defer

from kubetwist.authorization.authorizer import ALLOW
from tests.support import KubeTestCase

BASE = "/apis/flowcontrol.apiserver.k8s.io/v1"
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TOO_MANY = b"Too many requests, please try again later.\n"


def priority_level(name: str, response: dict, shares: int = 1) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1",
            "kind": "PriorityLevelConfiguration", "metadata": {"name": name},
            "spec": {"type": "Limited",
                     "limited": {"nominalConcurrencyShares": shares, "lendablePercent": 0,
                                 "borrowingLimitPercent": 0, "limitResponse": response}}}


def flow_schema(name: str, level: str, user: str, precedence: int = 100) -> dict:
    return {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema",
            "metadata": {"name": name},
            "spec": {"priorityLevelConfiguration": {"name": level},
                     "matchingPrecedence": precedence,
                     "distinguisherMethod": {"type": "ByUser"},
                     "rules": [{"subjects": [{"kind": "User", "user": {"name": user}}],
                                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                   "resources": ["*"], "clusterScope": True,
                                                   "namespaces": ["*"]}]}]}}


class _Pending:
    """One request sent without waiting for its answer."""

    def __init__(self, test: "APFTestBase", user: str, path: str) -> None:
        self.test = test
        self.result: Any = None
        self.d = test.treq.request("GET", "https://kubetwist.test" + path,
                                   headers={"Authorization": [f"Bearer {user}-token"]})
        self.d.addCallback(self._read)

    def _read(self, response: Any) -> Any:
        def got(body: bytes) -> None:
            self.result = (response.code, body, response.headers)

        return response.content().addCallback(got)

    def header(self, name: str) -> Any:
        values = self.result[2].getRawHeaders(name)
        return values[0] if values else None


class APFTestBase(KubeTestCase):
    """A chain whose authorizer holds jane's requests (so they keep their seats) until told."""

    def setUp(self) -> None:
        super().setUp()
        authorizer = self.chain.authorizer
        real = authorizer.authorize
        self.held: list[defer.Deferred] = []

        def authorize(attributes: Any) -> defer.Deferred:
            if attributes.user.name == "jane":
                d: defer.Deferred = defer.Deferred()
                self.held.append(d)
                return d
            return real(attributes)

        authorizer.authorize = authorize
        self.addCleanup(setattr, authorizer, "authorize", real)
        self.apf = self.chain.priority_and_fairness.controller

    def create(self, resource: str, obj: dict) -> dict:
        code, body, _ = self.request("POST", f"{BASE}/{resource}", obj)
        self.assertEqual(code, 201, body)
        return body

    def send(self, user: str, n: int = 1, path: str = CONFIGMAPS) -> list[_Pending]:
        out = [_Pending(self, user, path) for _ in range(n)]
        self.treq.flush()
        return out

    def release(self, count: int) -> None:
        for d in self.held[:count]:
            d.callback((ALLOW, ""))
        del self.held[:count]
        self.treq.flush()

    def uid(self, resource: str, name: str) -> str:
        code, body, _ = self.request("GET", f"{BASE}/{resource}/{name}")
        self.assertEqual(code, 200)
        return body["metadata"]["uid"]


class ClassificationTests(APFTestBase):
    def test_headers_name_the_flow_schema_and_level(self) -> None:
        """Every classified response names its FlowSchema and level by UID: the admin is
        exempt, a plain user meets global-default, /healthz is a probe."""
        self.clock.advance(0)
        code, _, resp = self.request("GET", "/api/v1/namespaces")
        self.assertEqual(code, 200)
        self.assertEqual(resp.headers.getRawHeaders("X-Kubernetes-PF-FlowSchema-UID"),
                         [self.uid("flowschemas", "exempt")])
        self.assertEqual(resp.headers.getRawHeaders("X-Kubernetes-PF-PriorityLevel-UID"),
                         [self.uid("prioritylevelconfigurations", "exempt")])
        [bob] = self.send("bob")
        self.assertEqual(bob.result[0], 200)
        self.assertEqual(bob.header("X-Kubernetes-PF-FlowSchema-UID"),
                         self.uid("flowschemas", "global-default"))
        self.assertEqual(bob.header("X-Kubernetes-PF-PriorityLevel-UID"),
                         self.uid("prioritylevelconfigurations", "global-default"))
        code, _, resp = self.request("GET", "/healthz", headers={"Authorization": None})
        self.assertEqual(resp.headers.getRawHeaders("X-Kubernetes-PF-FlowSchema-UID"),
                         [self.uid("flowschemas", "probes")])

    def test_bootstrap_levels_digested(self) -> None:
        """The producer's objects reach the dispatcher with kube-apiserver v1.32's limits for
        600 seats (--max-requests-inflight 400 + --max-mutating-requests-inflight 200): the
        nominal, lower and upper limits, and the current limits of an idle server after
        borrowing (as its apiserver_flowcontrol_*_limit_seats metrics show)."""
        self.clock.advance(0)
        levels = self.apf.priority_levels
        self.assertEqual({n: (s.nominal_cl, s.min_cl, s.max_cl) for n, s in levels.items()}, {
            "catch-all": (13, 13, 613), "exempt": (0, 0, 600), "global-default": (49, 24, 649),
            "leader-election": (25, 25, 625), "node-high": (98, 73, 698),
            "system": (74, 50, 674), "workload-high": (98, 49, 698),
            "workload-low": (245, 24, 845)})
        self.clock.advance(10)
        self.assertEqual({n: s.concurrency_limit for n, s in levels.items() if n != "exempt"}, {
            "catch-all": 30, "global-default": 56, "leader-election": 58, "node-high": 170,
            "system": 117, "workload-high": 114, "workload-low": 56})
        self.assertEqual([(f["metadata"]["name"], f["spec"]["matchingPrecedence"])
                          for f in self.apf.flow_schemas][:3],
                         [("exempt", 1), ("probes", 2), ("system-leader-election", 100)])


class RejectTests(APFTestBase):
    def setUp(self) -> None:
        super().setUp()
        self.create("prioritylevelconfigurations",
                    priority_level("low", {"type": "Reject"}))
        self.fs = self.create("flowschemas", flow_schema("jane-low", "low", "jane"))
        self.clock.advance(0)

    def test_flood_gets_429_while_another_user_is_served(self) -> None:
        """jane's level has 3 seats (ceil(600 * 1 / 246)); of 10 concurrent requests 3
        execute and 7 get upstream's 429, naming jane's FlowSchema; bob, at another level,
        is served meanwhile; once jane's requests finish, her next one is served."""
        low = self.apf.priority_levels["low"]
        self.assertEqual(low.concurrency_limit, 3)
        flood = self.send("jane", 10)
        self.assertEqual(len(self.held), 3)
        rejected = [p for p in flood if p.result is not None]
        self.assertEqual(len(rejected), 7)
        for p in rejected:
            self.assertEqual((p.result[0], p.result[1]), (429, TOO_MANY))
            self.assertEqual(p.header("Retry-After"), "1")
            self.assertEqual(p.header("Content-Type"), "text/plain; charset=utf-8")
            self.assertEqual(p.header("X-Kubernetes-PF-FlowSchema-UID"),
                             self.fs["metadata"]["uid"])
            self.assertEqual(p.header("X-Kubernetes-PF-PriorityLevel-UID"),
                             self.uid("prioritylevelconfigurations", "low"))
        bob = self.send("bob", 3)
        self.assertEqual([p.result[0] for p in bob], [200, 200, 200])
        self.assertEqual({p.header("X-Kubernetes-PF-FlowSchema-UID") for p in bob},
                         {self.uid("flowschemas", "global-default")})
        self.assertEqual((low.queues.executing, low.queues.rejected), (3, 7))
        self.release(3)
        self.assertEqual([p.result[0] for p in flood if p not in rejected], [200, 200, 200])
        self.assertEqual(low.queues.executing, 0)
        [again] = self.send("jane")
        self.release(1)
        self.assertEqual(again.result[0], 200)

    def test_watches_take_a_seat_only_to_start(self) -> None:
        """A watch is classified and needs a seat until its stream starts: of ten watches
        held before they start, three get seats and seven 429; once started they give their
        seats back while they stream; exec-like long-running requests are not classified."""
        watches = self.send("jane", 10, CONFIGMAPS + "?watch=true")
        low = self.apf.priority_levels["low"].queues
        self.assertEqual((low.dispatched, low.rejected, low.executing), (3, 7, 3))
        self.assertEqual([p.result[0] for p in watches if p.result], [429] * 7)
        self.release(3)
        self.assertEqual(low.executing, 0)
        more = self.send("jane", 3, CONFIGMAPS + "?watch=true")
        self.assertEqual((low.dispatched, low.rejected, low.executing), (6, 7, 3))
        self.release(3)
        self.assertEqual([p.result for p in more], [None] * 3)
        self.assertEqual(low.executing, 0)
        [p] = self.send("jane", 1, "/api/v1/namespaces/default/pods/p/log")
        self.assertIsNone(p.result)
        self.assertEqual((low.dispatched, low.rejected), (6, 7))

    def test_retry_after_grows_under_a_sustained_flood(self) -> None:
        """Upstream's dropped-requests tracker: 3 or more drops within the current
        Retry-After, seen in a new second, double it."""
        self.send("jane", 3)
        self.send("jane", 3)
        self.clock.advance(1)
        [p] = self.send("jane")
        self.assertEqual(p.header("Retry-After"), "2")

    def test_deleted_level_dangles_and_requests_fall_through(self) -> None:
        """Without its level the FlowSchema is Dangling and skipped: jane meets
        global-default."""
        self.request("DELETE", f"{BASE}/prioritylevelconfigurations/low")
        self.clock.advance(0)
        code, body, _ = self.request("GET", f"{BASE}/flowschemas/jane-low")
        cond = body["status"]["conditions"][0]
        self.assertEqual((cond["type"], cond["status"], cond["reason"]),
                         ("Dangling", "True", "NotFound"))
        [p] = self.send("jane")
        self.release(1)
        self.assertEqual(p.result[0], 200)
        self.assertEqual(p.header("X-Kubernetes-PF-FlowSchema-UID"),
                         self.uid("flowschemas", "global-default"))


class QueueTests(APFTestBase):
    def setUp(self) -> None:
        super().setUp()
        self.create("prioritylevelconfigurations", priority_level("low", {
            "type": "Queue", "queuing": {"queues": 1, "handSize": 1, "queueLengthLimit": 1}}))
        self.create("flowschemas", flow_schema("jane-low", "low", "jane"))
        self.clock.advance(0)

    def test_queue_then_dispatch_then_wait_limit(self) -> None:
        """3 seats and a queue of 1: the 4th request waits, the 5th is rejected; a finished
        request lets the waiting one run; a request still waiting after a quarter of
        --request-timeout (15s) is rejected."""
        flood = self.send("jane", 5)
        self.assertEqual(len(self.held), 3)
        self.assertEqual([p.result and p.result[0] for p in flood],
                         [None, None, None, None, 429])
        low = self.apf.priority_levels["low"].queues
        self.assertEqual((low.executing, low.waiting), (3, 1))
        self.release(1)
        self.clock.advance(0)
        self.treq.flush()
        self.assertEqual((low.executing, low.waiting, len(self.held)), (3, 0, 3))
        [late] = self.send("jane")
        self.assertEqual((late.result, low.waiting), (None, 1))
        self.clock.advance(14.9)
        self.treq.flush()
        self.assertIsNone(late.result)
        self.clock.advance(0.1)
        self.treq.flush()
        self.assertEqual((late.result[0], late.result[1]), (429, TOO_MANY))
        self.assertEqual((low.waiting, low.timed_out), (0, 1))
        self.release(3)
        self.assertEqual([p.result[0] for p in flood], [200, 200, 200, 200, 429])
        self.assertEqual(low.executing, 0)


class DisabledTests(KubeTestCase):
    priority_and_fairness = False

    def test_no_classification(self) -> None:
        """--enable-priority-and-fairness=false: max-in-flight, no PF headers, no config
        consumer (so no Dangling conditions)."""
        self.assertIsNone(self.chain.priority_and_fairness)
        code, _, resp = self.request("GET", "/api/v1/namespaces")
        self.assertIsNone(resp.headers.getRawHeaders("X-Kubernetes-PF-FlowSchema-UID"))
        code, body, _ = self.request("GET", "/readyz?verbose")
        self.assertNotIn("priority-and-fairness-config-consumer", body)
        self.assertIn("priority-and-fairness-config-producer", body)
