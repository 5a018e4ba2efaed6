"""The digested API Priority and Fairness configuration (upstream apf_controller.go)."""

from __future__ import annotations

import copy

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.flowcontrol import bootstrap
from kubetwist.apis.flowcontrol.controller import new_config_controller
from kubetwist.apis.flowcontrol.validation import default_flow_schema, default_priority_level
from kubetwist.authentication.user import UserInfo
from kubetwist.endpoints.requestinfo import parse_request_info
from kubetwist.flowcontrol.controller import ConfigController, hash_flow_id
from kubetwist.flowcontrol.dropped import DroppedRequestsTracker

JANE = UserInfo("jane", groups=["system:authenticated"])
ADMIN = UserInfo("admin", groups=["system:masters", "system:authenticated"])
PODS = parse_request_info("GET", "/api/v1/namespaces/ns1/pods", "")


def bootstrap_objects() -> tuple[list, list]:
    pls = bootstrap.mandatory_priority_levels() + bootstrap.suggested_priority_levels()
    fss = bootstrap.mandatory_flow_schemas() + bootstrap.suggested_flow_schemas()
    for o in pls + fss:
        o["metadata"]["uid"] = f"uid-{o['kind']}-{o['metadata']['name']}"
    for pl in pls:
        default_priority_level(pl)
    for fs in fss:
        default_flow_schema(fs)
    return pls, fss


def level(name: str, shares: int, response: dict) -> dict:
    return {"kind": "PriorityLevelConfiguration", "metadata": {"name": name, "uid": "u-" + name},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": shares,
                                                    "lendablePercent": 0,
                                                    "limitResponse": response}}}


def schema(name: str, pl: str, precedence: int, method: str = "ByUser") -> dict:
    return {"kind": "FlowSchema", "metadata": {"name": name, "uid": "u-" + name},
            "spec": {"priorityLevelConfiguration": {"name": pl},
                     "matchingPrecedence": precedence, "distinguisherMethod": {"type": method},
                     "rules": [{"subjects": [{"kind": "User", "user": {"name": "jane"}}],
                                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"],
                                                   "resources": ["*"], "clusterScope": True,
                                                   "namespaces": ["*"]}]}]}}


class DigestTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()
        self.ctl = new_config_controller(self.clock, 600)

    def test_imagined_mandatory_objects(self) -> None:
        """Before any object is seen, the mandatory exempt and catch-all are imagined: the
        admin is exempt, everyone else meets catch-all (all 600 seats, as the only shares)."""
        c = self.ctl.classify(PODS, ADMIN)
        self.assertEqual((c.flow_schema["metadata"]["name"], c.priority_level_name,
                          c.flow_schema_uid), ("exempt", "exempt", ""))
        self.assertTrue(c.priority_level.exempt)
        c = self.ctl.classify(PODS, JANE)
        self.assertEqual((c.flow_schema["metadata"]["name"], c.priority_level.concurrency_limit),
                         ("catch-all", 600))

    def test_order_dangling_and_broken_levels(self) -> None:
        """Precedence then name; a schema naming a missing or broken level dangles and is
        skipped; the digest reports which levels were found."""
        pls, fss = bootstrap_objects()
        broken = level("broken", 5, {"type": "Reject", "queuing": {"queues": 1}})
        fss += [schema("b-jane", "global-default", 50), schema("a-jane", "workload-low", 50),
                schema("orphan", "nowhere", 10), schema("on-broken", "broken", 10)]
        found = self.ctl.digest(pls + [broken], fss)
        self.assertEqual({k for k, v in found.items() if not v}, {"orphan", "on-broken"})
        names = [f["metadata"]["name"] for f in self.ctl.flow_schemas]
        self.assertEqual(names[:4], ["exempt", "probes", "a-jane", "b-jane"])
        self.assertNotIn("orphan", names)
        self.assertNotIn("broken", self.ctl.priority_levels)
        c = self.ctl.classify(PODS, JANE)
        self.assertEqual((c.flow_schema_uid, c.priority_level_uid),
                         ("u-a-jane", "uid-PriorityLevelConfiguration-workload-low"))

    def test_concurrency_limits(self) -> None:
        """ceil(server limit * shares / sum of shares), the exempt level's shares counted."""
        self.ctl = new_config_controller(self.clock, 10)
        pls = [level("a", 1, {"type": "Reject"}), level("b", 3, {"type": "Reject"})]
        self.ctl.digest(pls, [])
        limits = {n: s.concurrency_limit for n, s in self.ctl.priority_levels.items()}
        # shares: a 1, b 3, imagined catch-all 5, exempt 0
        self.assertEqual(limits, {"a": 2, "b": 4, "catch-all": 6, "exempt": 0})
        self.assertRaises(ValueError, new_config_controller, self.clock, 0)

    def test_distinguisher_and_hash(self) -> None:
        """With more than one queue the flow is distinguished ByUser or ByNamespace and
        hashed from the schema name and distinguisher; with one queue, neither."""
        pls = [level("q", 10, {"type": "Queue", "queuing": {"queues": 8, "handSize": 2,
                                                             "queueLengthLimit": 5}}),
               level("one", 10, {"type": "Queue", "queuing": {"queues": 1, "handSize": 1,
                                                               "queueLengthLimit": 5}})]
        self.ctl.digest(pls, [schema("by-ns", "q", 10, "ByNamespace")])
        c = self.ctl.classify(PODS, JANE)
        self.assertEqual((c.flow_distinguisher, c.hash_value), ("ns1", hash_flow_id("by-ns",
                                                                                    "ns1")))
        self.ctl.digest(pls, [schema("by-user", "q", 10)])
        self.assertEqual(self.ctl.classify(PODS, JANE).flow_distinguisher, "jane")
        self.ctl.digest(pls, [schema("single", "one", 10)])
        c = self.ctl.classify(PODS, JANE)
        self.assertEqual((c.flow_distinguisher, c.hash_value), ("", 0))
        self.assertNotEqual(hash_flow_id("a", "b"), hash_flow_id("a", "c"))
        self.assertLess(hash_flow_id("a", "b"), 2 ** 64)

    def test_removed_level_drains(self) -> None:
        """A level whose object goes away keeps its executing requests until it is idle,
        then is dropped at the next digest; its state is reused if it comes back."""
        pl = level("low", 1, {"type": "Reject"})
        self.ctl.digest([pl], [schema("s", "low", 10)])
        state = self.ctl.priority_levels["low"]
        req = self.ctl.start_request(self.ctl.classify(PODS, JANE))
        self.ctl.digest([], [])
        self.assertTrue(self.ctl.priority_levels["low"].quiescing)
        self.assertEqual(self.ctl.classify(PODS, JANE).priority_level_name, "catch-all")
        req.finish()
        self.ctl.digest([copy.deepcopy(pl)], [])
        self.assertIs(self.ctl.priority_levels["low"], state)
        self.assertFalse(state.quiescing)
        self.ctl.digest([], [])
        self.assertNotIn("low", self.ctl.priority_levels)

    def test_dropped_requests_retry_after(self) -> None:
        """Retry-After: 1, doubled after >= 3 drops per second seen in a new second (at most
        32), then decremented when drops fall below it."""
        self.assertIsInstance(self.ctl.dropped, DroppedRequestsTracker)
        t = DroppedRequestsTracker(self.clock)
        self.clock.advance(1000)
        self.assertEqual(t.retry_after("pl"), 1)
        seen = []
        for _ in range(12):
            for _ in range(100):
                t.record_dropped_request("pl")
            seen.append(t.retry_after("pl"))
            self.clock.advance(1)
        self.assertEqual(seen[:8], [1, 2, 2, 4, 4, 4, 4, 8])
        self.assertLessEqual(max(seen), 32)
        self.clock.advance(100)
        t.record_dropped_request("pl")
        self.assertEqual(t.retry_after("pl"), seen[-1] - 1)
        self.assertEqual(t.retry_after("other"), 1)


class ConstructionTests(SynchronousTestCase):
    def test_mandatory_objects_required(self) -> None:
        """The controller imagines what it is given; a positive server limit is required."""
        e = self.assertRaises(ValueError, ConfigController, Clock(), 0, [], [])
        self.assertIn("must add up to something positive", str(e))
