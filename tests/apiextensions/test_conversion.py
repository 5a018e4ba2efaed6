"""
Tests for L{kubetwist.apiextensions.conversion}: the None and Webhook converters (upstream
C{pkg/apiserver/conversion}) with the webhook served by an in-memory Klein-free resource
through StubTreq, and custom resources over the one converting storage.
"""

import json

from treq.testing import StubTreq
from twisted.trial.unittest import SynchronousTestCase
from twisted.web.resource import Resource

from kubetwist.apiextensions import conversion


class Webhook(Resource):
    """A ConversionReview endpoint: renames spec.color <-> spec.colour; C{mode} breaks it."""

    isLeaf = True

    def __init__(self) -> None:
        super().__init__()
        self.mode = "ok"
        self.seen: list[dict] = []

    def render_POST(self, request) -> bytes:
        review = json.loads(request.content.read())
        self.seen.append(review)
        req = review["request"]
        out = []
        for obj in req["objects"]:
            obj = json.loads(json.dumps(obj))
            spec = obj.get("spec", {})
            if req["desiredAPIVersion"].endswith("v2") and "color" in spec:
                spec["colour"] = spec.pop("color")
            obj["apiVersion"] = req["desiredAPIVersion"]
            obj["metadata"]["uid"] = "changed-by-webhook"
            obj["metadata"]["labels"] = {"converted": "yes"}
            out.append(obj)
        response = {"uid": req["uid"], "convertedObjects": out,
                    "result": {"status": "Success"}}
        if self.mode == "fail":
            response["result"] = {"status": "Failure", "message": "cannot convert"}
        if self.mode == "uid":
            response["uid"] = "other"
        request.setHeader(b"Content-Type", b"application/json")
        return json.dumps({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
                           "response": response}).encode()


CRD = {"spec": {"conversion": {"strategy": "Webhook", "webhook": {
    "conversionReviewVersions": ["v1"],
    "clientConfig": {"url": "https://convert.test/convert", "caBundle": "Q0E="}}}}}

OBJ = {"apiVersion": "example.com/v1", "kind": "Paint",
       "metadata": {"name": "p", "uid": "u1"}, "spec": {"color": "red"}}


class WebhookConverterTests(SynchronousTestCase):
    """ConversionReview v1 round trips."""

    def setUp(self) -> None:
        self.webhook = Webhook()
        self.treq = StubTreq(self.webhook)
        self.bundles: list = []

        def factory(ca):
            self.bundles.append(ca)
            return self.treq

        self.converter = conversion.WebhookConverter(CRD, factory)

    def convert(self, objs, to):
        d = self.converter.convert(objs, to)
        from twisted.internet.defer import ensureDeferred
        d = ensureDeferred(d)
        self.treq.flush()
        return d

    def test_converts(self) -> None:
        """The review carries the objects and desiredAPIVersion; the answer's objects come back
        with only labels/annotations taken from the webhook's metadata; the caBundle is
        decoded for the TLS client."""
        out = self.successResultOf(self.convert([OBJ], "example.com/v2"))
        self.assertEqual(out, [{"apiVersion": "example.com/v2", "kind": "Paint",
                                "metadata": {"name": "p", "uid": "u1",
                                             "labels": {"converted": "yes"}},
                                "spec": {"colour": "red"}}])
        review = self.webhook.seen[0]
        self.assertEqual((review["apiVersion"], review["kind"],
                          review["request"]["desiredAPIVersion"]),
                         ("apiextensions.k8s.io/v1", "ConversionReview", "example.com/v2"))
        self.assertEqual(self.bundles, [b"CA"])

    def test_same_version_not_sent(self) -> None:
        """Objects already in the desired version are not sent."""
        out = self.successResultOf(self.convert([OBJ], "example.com/v1"))
        self.assertEqual((out, self.webhook.seen), ([OBJ], []))

    def test_failure(self) -> None:
        """A failed review is a ConversionError with upstream's text."""
        self.webhook.mode = "fail"
        f = self.failureResultOf(self.convert([OBJ], "example.com/v2"),
                                 conversion.ConversionError)
        self.assertEqual(str(f.value), "conversion webhook for example.com/v2, Kind=Paint "
                                       "failed: cannot convert")

    def test_wrong_uid(self) -> None:
        """An answer for another uid is refused."""
        self.webhook.mode = "uid"
        f = self.failureResultOf(self.convert([OBJ], "example.com/v2"),
                                 conversion.ConversionError)
        self.assertIn('got "other"', str(f.value))


class NoneConverterTests(SynchronousTestCase):
    """Strategy None."""

    def test_rewrites_api_version(self) -> None:
        """Only apiVersion changes; the input is not modified."""
        from twisted.internet.defer import ensureDeferred

        obj = dict(OBJ)
        out = self.successResultOf(ensureDeferred(
            conversion.NoneConverter().convert([obj], "example.com/v2")))
        self.assertEqual((out[0]["apiVersion"], out[0]["spec"], obj["apiVersion"]),
                         ("example.com/v2", {"color": "red"}, "example.com/v1"))

    def test_service_url(self) -> None:
        """A service reference becomes https://<name>.<namespace>.svc:<port><path>."""
        self.assertEqual(conversion.webhook_url({"service": {
            "name": "conv", "namespace": "sys", "port": 8443, "path": "/c"}}),
            "https://conv.sys.svc:8443/c")


class _DeferredConverter:
    """A webhook-like converter (no C{convert_sync}) whose answers the test fires: each
    C{convert} call is recorded with its Deferred."""

    def __init__(self) -> None:
        self.calls: list = []

    def convert(self, objects, to_api_version):
        from twisted.internet.defer import Deferred

        d: Deferred = Deferred()
        self.calls.append((list(objects), to_api_version, d))
        return d

    def answer(self, index: int = 0) -> None:
        """Fire call C{index} with its objects converted as strategy None would."""
        objects, to, d = self.calls[index]
        d.callback([dict(o, apiVersion=to) for o in objects])


class CustomResourceStorageTests(SynchronousTestCase):
    """
    Custom resources share the one L{ConvertingStorage} of the built-in versions
    (L{conversion.converting_storage}): served-form predicates, the Cacher's watch options and
    flow control, defaulting on read, and asynchronous (webhook) conversion in order.
    """

    KEY = "/registry/example.com/widgets/ns/"

    def setUp(self) -> None:
        from kubetwist.storage.cacher import Cacher
        from kubetwist.storage.sqlite import SQLiteStorage
        from tests.support import FakeReactorClock, InlinePool

        self.clock = FakeReactorClock()
        self.backend = SQLiteStorage(self.clock, ":memory:", threadpool=InlinePool())
        self.cacher = Cacher(self.backend, self.clock)

    def storage(self, converter=None, on_read=None):
        return conversion.converting_storage(
            self.cacher, converter or conversion.NoneConverter(), "example.com/v1",
            "example.com/v2", on_read)

    def put(self, name: str, color: str = "red") -> None:
        obj = {"apiVersion": "example.com/v1", "kind": "Widget",
               "metadata": {"name": name, "namespace": "ns"}, "spec": {"color": color}}
        self.successResultOf(self.backend.create(self.KEY + name, obj))

    def test_one_class(self) -> None:
        """The CRD path builds the built-in versions' ConvertingStorage, an IWatchCache over
        a Cacher."""
        from zope.interface.verify import verifyObject

        from kubetwist.registry.generic.versioned import ConvertingStorage
        from kubetwist.storage import interfaces as st

        storage = self.storage()
        self.assertIsInstance(storage, ConvertingStorage)
        verifyObject(st.IStorage, storage)
        self.assertTrue(st.IWatchCache.providedBy(storage))
        self.assertTrue(storage.synchronous)
        self.assertFalse(self.storage(_DeferredConverter()).synchronous)

    def test_predicate_on_served_form(self) -> None:
        """A field selector sees the served version (strategy None: its apiVersion)."""
        from kubetwist.storage import interfaces as st

        self.put("a")
        served = st.SelectionPredicate(lambda o: o["apiVersion"] == "example.com/v2")
        result = self.successResultOf(self.storage().get_list(self.KEY, predicate=served))
        self.assertEqual([(i["metadata"]["name"], i["apiVersion"]) for i in result.items],
                         [("a", "example.com/v2")])

    def test_defaulting_on_read_uses_a_copy(self) -> None:
        """on_read defaults the object handed out, never the stored (cached) one."""
        self.put("a")

        def default(obj):
            obj["spec"].setdefault("size", 1)

        got = self.successResultOf(self.storage(on_read=default).get(self.KEY + "a"))
        self.assertEqual(got["spec"], {"color": "red", "size": 1})
        self.assertEqual(self.successResultOf(self.cacher.get(self.KEY + "a"))["spec"],
                         {"color": "red"})

    def test_watch_options_reach_the_cacher(self) -> None:
        """sendInitialEvents and bookmarks pass through: the initial ADDED events in the
        served version, then the initial-events-end BOOKMARK."""
        self.put("a")
        watch = self.storage().watch(self.KEY, "", True, send_initial_events=True,
                                     allow_watch_bookmarks=True)
        events: list = []
        watch.subscribe(events.append)
        self.clock.advance(0)
        self.assertEqual([(e.type, e.object.get("apiVersion")) for e in events][:1],
                         [("ADDED", "example.com/v2")])
        self.assertEqual(events[0].key, self.KEY + "a")
        self.assertEqual(events[-1].type, "BOOKMARK")
        self.assertEqual(events[-1].object["metadata"]["annotations"],
                         {"k8s.io/initial-events-end": "true"})
        watch.stop()

    def test_watch_flow_control_reaches_inner(self) -> None:
        """Pausing the served watch pauses the Cacher's; resuming delivers what was held."""
        watch = self.storage().watch(self.KEY, "", True)
        events: list = []
        watch.subscribe(events.append)
        watch.pauseProducing()
        self.put("a")
        self.clock.advance(0)
        self.assertEqual(events, [])
        watch.resumeProducing()
        self.clock.advance(0)
        self.assertEqual([(e.type, e.object["apiVersion"]) for e in events],
                         [("ADDED", "example.com/v2")])
        watch.stop()

    def test_async_list_is_one_review(self) -> None:
        """With a webhook, a list's items are converted in one call."""
        self.put("a")
        self.put("b")
        converter = _DeferredConverter()
        d = self.storage(converter).get_list(self.KEY)
        self.assertNoResult(d)
        self.assertEqual([len(c[0]) for c in converter.calls], [2])
        converter.answer()
        result = self.successResultOf(d)
        self.assertEqual([i["apiVersion"] for i in result.items], ["example.com/v2"] * 2)

    def test_async_watch_keeps_order(self) -> None:
        """With a webhook, events wait for their conversion and keep their order, bookmarks
        included."""
        converter = _DeferredConverter()
        watch = self.storage(converter).watch(self.KEY, "", True, allow_watch_bookmarks=True)
        events: list = []
        watch.subscribe(events.append)
        self.clock.advance(0)
        # a watch from "" that allows bookmarks ends its (empty) initial events with the
        # initial-events-end bookmark, as v1.32's cacher does
        self.assertEqual([e.type for e in events], ["BOOKMARK"])
        del events[:]
        self.put("a")
        self.put("b")
        self.clock.advance(0)
        self.assertEqual(events, [])
        converter.answer(1)
        self.assertEqual(events, [])
        converter.answer(0)
        self.assertEqual([(e.type, e.object["metadata"]["name"], e.key) for e in events],
                         [("ADDED", "a", self.KEY + "a"), ("ADDED", "b", self.KEY + "b")])
        watch.stop()

    def test_async_watch_failure_ends_with_error(self) -> None:
        """A failed conversion ends the watch with an ERROR event: 500 with the webhook's
        text."""
        converter = _DeferredConverter()
        watch = self.storage(converter).watch(self.KEY, "", True)
        events: list = []
        watch.subscribe(events.append)
        self.put("a")
        self.clock.advance(0)
        converter.calls[0][2].errback(conversion.ConversionError("conversion webhook failed"))
        self.assertEqual([(e.type, e.object.get("code"), e.object.get("message"))
                          for e in events],
                         [("ERROR", 500, "Internal error occurred: conversion webhook failed")])
        self.assertTrue(watch.ended)

    def test_async_create_stores_storage_version(self) -> None:
        """A create converts to the storage version through the webhook, and back."""
        converter = _DeferredConverter()
        obj = {"apiVersion": "example.com/v2", "kind": "Widget",
               "metadata": {"name": "a", "namespace": "ns"}}
        d = self.storage(converter).create(self.KEY + "a", obj)
        self.assertEqual(converter.calls[0][1], "example.com/v1")
        converter.answer(0)
        self.assertEqual(converter.calls[1][1], "example.com/v2")
        converter.answer(1)
        self.assertEqual(self.successResultOf(d)["apiVersion"], "example.com/v2")
        self.assertEqual(self.successResultOf(self.backend.get(self.KEY + "a"))["apiVersion"],
                         "example.com/v1")
