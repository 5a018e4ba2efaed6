"""Tests for L{kubetwist.apis.events}: events.k8s.io/v1 Events over the core/v1 event
storage (conversion, field selectors, the events.k8s.io validation) and their type tables."""

from __future__ import annotations

import json

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apis.events import v1
from kubetwist.apis.events.register import STRATEGIES
from kubetwist.runtime import protobuf
from kubetwist.runtime import types as typetables
from tests.endpoints.test_watch import _Collector
from tests.support import ADMIN, KubeTestCase

EVENTS_PATH = "/apis/events.k8s.io/v1/namespaces/default/events"
CORE_PATH = "/api/v1/namespaces/default/events"
TIME = "2024-01-01T00:00:00.000000Z"


def new_event(name="e1", **fields) -> dict:
    obj = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
           "metadata": {"name": name, "namespace": "default"}, "eventTime": TIME,
           "reportingController": "example.com/ctl", "reportingInstance": "ctl-1",
           "action": "Scale", "reason": "Scaled",
           "regarding": {"kind": "Pod", "namespace": "default", "name": "p"},
           "note": "scaled up", "type": "Normal"}
    obj.update(fields)
    return obj


def core_event(name="c1", **fields) -> dict:
    obj = {"apiVersion": "v1", "kind": "Event",
           "metadata": {"name": name, "namespace": "default"},
           "involvedObject": {"kind": "Pod", "namespace": "default", "name": "q"},
           "reason": "Pulled", "message": "pulled image", "source": {"component": "kubelet"},
           "firstTimestamp": "2024-01-01T00:00:00Z", "lastTimestamp": "2024-01-01T00:00:05Z",
           "count": 3, "type": "Normal"}
    obj.update(fields)
    return obj


class ConversionTests(SynchronousTestCase):
    def test_core_to_v1(self):
        """The renamed fields move, the rest keep their names, zero values as Go writes."""
        out = v1.event_core_to_v1(core_event(series={"count": 2,
                                                     "lastObservedTime": TIME}))
        self.assertEqual(out, {
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"name": "c1", "namespace": "default"}, "eventTime": None,
            "series": {"count": 2, "lastObservedTime": TIME},
            "reason": "Pulled",
            "regarding": {"kind": "Pod", "namespace": "default", "name": "q"},
            "note": "pulled image", "type": "Normal",
            "deprecatedSource": {"component": "kubelet"},
            "deprecatedFirstTimestamp": "2024-01-01T00:00:00Z",
            "deprecatedLastTimestamp": "2024-01-01T00:00:05Z", "deprecatedCount": 3})

    def test_v1_to_core(self):
        """events.k8s.io -> core writes the core zero values (source {}, null times)."""
        out = v1.event_v1_to_core(new_event())
        self.assertEqual(out, {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e1", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
            "reason": "Scaled", "message": "scaled up", "source": {},
            "firstTimestamp": None, "lastTimestamp": None, "type": "Normal",
            "eventTime": TIME, "action": "Scale",
            "reportingComponent": "example.com/ctl", "reportingInstance": "ctl-1"})

    def test_round_trips(self):
        """core -> events.k8s.io -> core and the reverse are lossless."""
        core = v1.event_v1_to_core(v1.event_core_to_v1(core_event()))
        expected = core_event()
        expected.update(eventTime=None, reportingComponent="", reportingInstance="")
        self.assertEqual(core, expected)
        ev = new_event(related={"kind": "Node", "name": "n"},
                       series={"count": 3, "lastObservedTime": TIME})
        v1.default_event_v1(ev)
        self.assertEqual(v1.event_core_to_v1(v1.event_v1_to_core(ev)), ev)

    def test_field_labels(self):
        """events.k8s.io/v1 selects by regarding.*, reason, reportingController, type and
        metadata; not by source."""
        attrs = STRATEGIES["events"].attrs(new_event())
        self.assertEqual(attrs["regarding.name"], "p")
        self.assertEqual(attrs["reportingController"], "example.com/ctl")
        self.assertEqual(sorted(attrs), sorted(
            ["metadata.name", "metadata.namespace", "reason", "reportingController", "type",
             "regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
             "regarding.apiVersion", "regarding.resourceVersion", "regarding.fieldPath"]))

    def test_strict_validation(self):
        """events.k8s.io creates need eventTime and a Normal/Warning type and no deprecated
        fields; paths are the internal (core) ones."""
        bad = new_event(type="Foo", deprecatedCount=2, deprecatedSource={"host": "h"},
                        series={"count": 1})
        del bad["eventTime"]
        errs = STRATEGIES["events"].validate(bad)
        self.assertEqual([e.error() for e in errs], [
            'series.count: Invalid value: "": should be at least 2',
            "series.lastObservedTime: Required value",
            "eventTime: Required value",
            'type: Invalid value: "": has invalid value: Foo',
            'count: Invalid value: "": needs to be unset',
            'source: Invalid value: "": needs to be unset'])

    def test_legacy_rules_with_internal_names(self):
        """The legacy rules apply too, naming reportingController and message."""
        errs = STRATEGIES["events"].validate(new_event(reportingController="", note="x" * 1025))
        messages = [e.error() for e in errs]
        self.assertEqual(messages[:2], [
            "reportingController: Required value",
            'reportingController: Invalid value: "": name part must be non-empty'])
        self.assertEqual(messages[-1],
                         'message: Invalid value: "": can have at most 1024 characters')
        self.assertEqual(len(messages), 4)

    def test_update_immutable(self):
        """An events.k8s.io update may not change the note (reported as message)."""
        old = v1.event_v1_to_core(new_event())
        old["metadata"]["resourceVersion"] = "5"
        new = new_event(note="changed")
        new["metadata"]["resourceVersion"] = "5"
        errs = STRATEGIES["events"].validate_update(new, v1.event_core_to_v1(old))
        self.assertEqual([e.error() for e in errs],
                         ['message: Invalid value: "changed": field is immutable'])

    def test_type_tables(self):
        """events.k8s.io/v1 Event is in the type tables; its protobuf form round-trips."""
        name = typetables.lookup_kind("events.k8s.io", "v1", "Event")
        self.assertEqual(name, "io.k8s.api.events.v1.Event")
        event = new_event(series={"count": 2, "lastObservedTime": TIME})
        decoded = protobuf.decode(protobuf.encode(event))
        self.assertEqual((decoded["apiVersion"], decoded["note"], decoded["regarding"]["name"],
                          decoded["series"]["count"], decoded["eventTime"]),
                         ("events.k8s.io/v1", "scaled up", "p", 2, TIME))


class EventsHTTPTests(KubeTestCase):
    def test_events_k8s_io_create_listed_via_core(self):
        """An Event created via events.k8s.io/v1 is listed via core/v1."""
        code, created, _ = self.request("POST", EVENTS_PATH, new_event())
        self.assertEqual(code, 201)
        self.assertEqual(created["apiVersion"], "events.k8s.io/v1")
        code, lst, _ = self.request("GET", CORE_PATH)
        self.assertEqual((code, lst["kind"], lst["apiVersion"]), (200, "EventList", "v1"))
        [item] = lst["items"]
        self.assertEqual((item["metadata"]["name"], item["message"], item["reportingComponent"],
                          item["involvedObject"]["name"], item["source"]),
                         ("e1", "scaled up", "example.com/ctl", "p", {}))
        self.assertEqual(item["metadata"]["resourceVersion"],
                         created["metadata"]["resourceVersion"])

    def test_core_create_listed_via_events_k8s_io(self):
        """A core/v1 Event is listed via events.k8s.io/v1 with the v1 field names."""
        self.assertEqual(self.request("POST", CORE_PATH, core_event())[0], 201)
        code, lst, _ = self.request("GET", "/apis/events.k8s.io/v1/events")
        self.assertEqual((code, lst["kind"], lst["apiVersion"]),
                         (200, "EventList", "events.k8s.io/v1"))
        [item] = lst["items"]
        self.assertEqual((item["note"], item["deprecatedCount"], item["deprecatedSource"],
                          item["regarding"]["name"]),
                         ("pulled image", 3, {"component": "kubelet"}, "q"))

    def test_field_selectors(self):
        """Each version selects by its own labels; core-only labels are refused by
        events.k8s.io with upstream's message."""
        self.request("POST", EVENTS_PATH, new_event())
        self.request("POST", CORE_PATH, core_event())
        _, lst, _ = self.request(
            "GET", "/apis/events.k8s.io/v1/events?fieldSelector=regarding.name%3Dp")
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["e1"])
        _, lst, _ = self.request(
            "GET", EVENTS_PATH + "?fieldSelector=reportingController%3Dexample.com/ctl")
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["e1"])
        _, lst, _ = self.request("GET", CORE_PATH + "?fieldSelector=involvedObject.name%3Dp")
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["e1"])
        code, body, _ = self.request("GET", EVENTS_PATH + "?fieldSelector=source%3Dkubelet")
        self.assertEqual((code, body["message"]), (400, "field label not supported: source"))

    def test_strict_validation_only_for_events_k8s_io(self):
        """core/v1 accepts an event without eventTime; events.k8s.io/v1 refuses it."""
        body = new_event("bad")
        del body["eventTime"]
        code, status, _ = self.request("POST", EVENTS_PATH, body)
        self.assertEqual((code, status["details"]["causes"]), (422, [
            {"reason": "FieldValueRequired", "message": "Required value",
             "field": "eventTime"}]))
        self.assertEqual(self.request("POST", CORE_PATH, core_event("ok"))[0], 201)

    def test_watch_and_patch_across_versions(self):
        """A core/v1 watch sees an events.k8s.io create and a patch made in v1 terms."""
        d = self.treq.get("https://kubetwist.test" + CORE_PATH + "?watch=1",
                          headers={k: [v] for k, v in ADMIN.items()})
        self.treq.flush()
        chunks: list = []
        self.successResultOf(d).deliverBody(_Collector(chunks))
        self.request("POST", EVENTS_PATH, new_event(series={"count": 2,
                                                            "lastObservedTime": TIME}))
        code, out, _ = self.request(
            "PATCH", EVENTS_PATH + "/e1",
            {"series": {"count": 3, "lastObservedTime": TIME}},
            content_type="application/merge-patch+json")
        self.assertEqual((code, out["series"]["count"]), (200, 3))
        self.treq.flush()
        events = [json.loads(line) for line in b"".join(chunks).splitlines() if line]
        self.assertEqual([(e["type"], e["object"]["apiVersion"], e["object"]["series"]["count"])
                          for e in events],
                         [("ADDED", "v1", 2), ("MODIFIED", "v1", 3)])

    def test_table_and_discovery(self):
        """events.k8s.io prints the core event columns; discovery has the ev short name."""
        self.request("POST", EVENTS_PATH, new_event())
        _, core_table, _ = self.request(
            "GET", CORE_PATH, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        code, table, _ = self.request(
            "GET", EVENTS_PATH, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
        self.assertEqual(code, 200)
        self.assertEqual(table["columnDefinitions"], core_table["columnDefinitions"])
        self.assertEqual(table["rows"][0]["cells"], core_table["rows"][0]["cells"])
        _, body, _ = self.request("GET", "/apis/events.k8s.io/v1")
        [res] = body["resources"]
        self.assertEqual((res["name"], res["kind"], res["shortNames"]),
                         ("events", "Event", ["ev"]))

    def test_delete_via_events_k8s_io(self):
        """Deleting through events.k8s.io removes the core event."""
        self.request("POST", CORE_PATH, core_event())
        code, _, _ = self.request("DELETE", EVENTS_PATH + "/c1")
        self.assertEqual(code, 200)
        self.assertEqual(self.request("GET", CORE_PATH + "/c1")[0], 404)
