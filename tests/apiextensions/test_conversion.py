"""
Tests for L{kubetwist.apiextensions.conversion}: the None and Webhook converters (upstream
C{pkg/apiserver/conversion}) with the webhook served by an in-memory Klein-free resource
through StubTreq, and the converting storage wrapper.
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
