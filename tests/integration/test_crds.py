# -*- test-case-name: tests.integration.test_crds -*-
"""
Acceptance of issue 4 (CustomResourceDefinitions served completely, with their controllers):
a real C{twistd -n kubeapi} driven by the real C{kubectl}, the official Python client's
C{DynamicClient}, and a real HTTPS conversion webhook.

The expected texts are kube-apiserver v1.32's (upstream C{test/integration/apiserver/
crd_*}, C{test/e2e/apimachinery/crd_*}); the CRDs of C{shared/manifests/crds/}
(cert-manager, prometheus-operator) are used unchanged.
"""

from __future__ import annotations

import json
import os
import shutil
import ssl
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import (
    KubectlError,
    ServerTestMixin,
    by_name,
    class_units,
    parse_table,
    shared_dir,
)

#: How long to wait for an eventually consistent state, in seconds.
DEADLINE = 30.0

WIDGET_CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "widgets.acceptance.example.com"},
    "spec": {
        "group": "acceptance.example.com",
        "scope": "Namespaced",
        "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                  "shortNames": ["wdg"], "categories": ["all"]},
        "versions": [{
            "name": "v1", "served": True, "storage": True,
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "x-kubernetes-validations": [{
                            "rule": "self.color == oldSelf.color",
                            "message": "color is immutable"}],
                        "properties": {
                            "replicas": {"type": "integer", "minimum": 0},
                            "color": {"type": "string", "default": "blue"},
                        },
                    },
                    "status": {"type": "object", "properties": {
                        "replicas": {"type": "integer"},
                        "phase": {"type": "string"},
                    }},
                },
            }},
            "subresources": {
                "status": {},
                "scale": {"specReplicasPath": ".spec.replicas",
                          "statusReplicasPath": ".status.replicas"},
            },
            "additionalPrinterColumns": [
                {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
                {"name": "Color", "type": "string", "jsonPath": ".spec.color"},
                {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
                {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
            ],
        }],
    },
}


def poll(check, what: str, deadline: float = DEADLINE):
    """Call C{check()} until it returns a true value (returned) or the deadline passes."""
    end = time.monotonic() + deadline
    last = None
    while time.monotonic() < end:
        last = check()
        if last:
            return last
        time.sleep(0.1)
    raise AssertionError(f"{what}: not reached in {deadline}s (last: {last!r})")


class CRDAcceptanceTests(ServerTestMixin, SynchronousTestCase):
    """The acceptance list of issue 4 on the embedded store."""

    def install(self, crd: dict) -> None:
        """Apply C{crd} and wait (kubectl wait) until it is Established."""
        self.server.kubectl("apply", "-f", "-", input=json.dumps(crd))
        self.server.kubectl("wait", "--for=condition=Established", "--timeout=30s",
                            f"crd/{crd['metadata']['name']}")

    def widget(self, name: str, **spec) -> dict:
        return {"apiVersion": "acceptance.example.com/v1", "kind": "Widget",
                "metadata": {"name": name}, "spec": spec}

    def test_widget_lifecycle(self) -> None:
        """
        A CRD with printer columns, status and scale subresources, short names and a default
        goes Established; a Widget is created (default applied, unknown field pruned), listed
        with its printer columns (by short name and through the C{all} category), scaled, its
        status patched; an invalid one is refused with the schema's message and path; Strict
        field validation names the unknown field; a CEL transition rule refuses a change;
        deleting the CRD removes the Widgets.
        """
        self.install(WIDGET_CRD)
        ns = self.namespace()
        # unknown fields are pruned (kubectl --validate=false sends fieldValidation=Ignore)
        self.server.kubectl("create", "-n", ns, "--validate=false", "-f", "-",
                            input=json.dumps(self.widget("w1", replicas=1, junk="x")))
        stored = self.get_json(ns, "widget", "w1")
        self.assertEqual(stored["spec"], {"replicas": 1, "color": "blue"})
        self.assertEqual(stored["metadata"]["generation"], 1)
        # Strict (kubectl's default) refuses the unknown field
        with self.assertRaises(KubectlError) as caught:
            self.server.kubectl("create", "-n", ns, "-f", "-",
                                input=json.dumps(self.widget("w2", junk="x")))
        self.assertIn('strict decoding error: unknown field "spec.junk"', str(caught.exception))
        # printer columns, by short name
        rows = parse_table(self.server.kubectl("get", "wdg", "-n", ns).stdout)
        self.assertEqual(list(rows[0]), ["NAME", "REPLICAS", "COLOR", "PHASE", "AGE"])
        self.assertEqual((rows[0]["NAME"], rows[0]["REPLICAS"], rows[0]["COLOR"],
                          rows[0]["PHASE"]), ("w1", "1", "blue", ""))
        # the "all" category
        everything = self.server.kubectl("get", "all", "-n", ns, "-o", "name").stdout.split()
        self.assertIn("widget.acceptance.example.com/w1", everything)
        # scale and status
        self.server.kubectl("scale", "-n", ns, "widget/w1", "--replicas=3")
        self.server.kubectl("patch", "-n", ns, "widget/w1", "--subresource=status",
                            "--type=merge", "-p", '{"status":{"replicas":3,"phase":"Ready"}}')
        row = by_name(parse_table(self.server.kubectl("get", "widgets", "-n", ns).stdout))["w1"]
        self.assertEqual((row["REPLICAS"], row["PHASE"]), ("3", "Ready"))
        scale = self.get_json(ns, "widget", "w1", "--subresource=scale")
        self.assertEqual((scale["kind"], scale["spec"], scale["status"]),
                         ("Scale", {"replicas": 3}, {"replicas": 3}))
        self.assertEqual(self.get_json(ns, "widget", "w1")["metadata"]["generation"], 2)
        # the main endpoint ignores status changes
        self.server.kubectl("patch", "-n", ns, "widget/w1", "--type=merge",
                            "-p", '{"status":{"phase":"Lost"}}')
        self.assertEqual(self.get_json(ns, "widget", "w1")["status"]["phase"], "Ready")
        # invalid: the schema's message and field path
        with self.assertRaises(KubectlError) as caught:
            self.server.kubectl("create", "-n", ns, "-f", "-",
                                input=json.dumps(self.widget("bad", replicas=-1)))
        self.assertIn('The Widget "bad" is invalid: \n* spec.replicas: Invalid value: -1: '
                      'spec.replicas in body should be greater than or equal to 0\n',
                      str(caught.exception))
        # CEL transition rule with oldSelf
        with self.assertRaises(KubectlError) as caught:
            self.server.kubectl("patch", "-n", ns, "widget/w1", "--type=merge",
                                "-p", '{"spec":{"color":"red"}}')
        self.assertIn('The Widget "w1" is invalid: spec: Invalid value: "object": color is '
                      'immutable', str(caught.exception))
        # deleting the CRD deletes its custom resources
        self.server.kubectl("delete", "crd", WIDGET_CRD["metadata"]["name"], "--timeout=30s")
        response = self.server.request(
            "GET", f"/apis/acceptance.example.com/v1/namespaces/{ns}/widgets")
        self.assertEqual(response.status, 404, response.body)
        keys = self.server.request("GET", "/apis/acceptance.example.com/v1")
        self.assertEqual(keys.status, 404, keys.body)
        # reinstalled, the old widget does not come back
        self.install(WIDGET_CRD)
        self.assertEqual(self.get_json(ns, "widgets")["items"], [])
        self.server.kubectl("delete", "crd", WIDGET_CRD["metadata"]["name"], "--timeout=30s")

    def test_shared_crds(self) -> None:
        """
        Every CRD of C{shared/manifests/crds/} installs with C{kubectl apply --server-side},
        goes Established, and C{kubectl explain} shows fields of its spec.
        """
        directory = shared_dir() / "manifests" / "crds"
        files = sorted(directory.glob("*.yaml"))
        self.assertTrue(files)
        self.server.kubectl("apply", "--server-side", "-f", str(directory))
        for path in files:
            name = path.name.split("_", 1)[1][:-len(".yaml")] + "." + path.name.split("_")[0]
            self.server.kubectl("wait", "--for=condition=Established", "--timeout=60s",
                                f"crd/{name}")
            crd = self.get_json(None, "crd", name)
            kind = crd["spec"]["names"]["kind"]
            group = crd["spec"]["group"]
            out = self.server.kubectl("explain", f"{kind.lower()}.spec",
                                      f"--api-version={group}/"
                                      f"{crd['spec']['versions'][0]['name']}").stdout
            self.assertIn(f"KIND:       {kind}", out)
            self.assertIn("FIELD: spec <Object>", out)
            props = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]
            first_field = sorted(props["spec"].get("properties") or {"": None})[0]
            if first_field:
                self.assertIn(f"  {first_field}\t<", out)

    def test_dynamic_client(self) -> None:
        """
        The official Python client's C{DynamicClient} discovers the Widget resource and
        creates, reads, lists, patches and deletes a Widget.
        """
        from kubernetes.dynamic import DynamicClient

        crd = json.loads(json.dumps(WIDGET_CRD))
        crd["metadata"]["name"] = "gadgets.acceptance.example.com"
        crd["spec"]["names"] = {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"}
        self.install(crd)
        self.addCleanup(self.server.kubectl, "delete", "crd", crd["metadata"]["name"],
                        "--timeout=30s")
        ns = self.namespace()
        api = self.server.api_client()
        self.addCleanup(api.close)
        dyn = DynamicClient(api)
        gadgets = dyn.resources.get(api_version="acceptance.example.com/v1", kind="Gadget")
        self.assertEqual((gadgets.name, gadgets.namespaced), ("gadgets", True))
        created = gadgets.create(namespace=ns, body={
            "apiVersion": "acceptance.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g1"}, "spec": {"replicas": 2}})
        self.assertEqual((created.metadata.name, created.spec.color), ("g1", "blue"))
        listed = gadgets.get(namespace=ns)
        self.assertEqual([(i.kind, i.metadata.name) for i in listed.items], [("Gadget", "g1")])
        patched = gadgets.patch(namespace=ns, name="g1", body={"spec": {"replicas": 4}},
                                content_type="application/merge-patch+json")
        self.assertEqual(patched.spec.replicas, 4)
        gadgets.delete(namespace=ns, name="g1")
        self.assertEqual(gadgets.get(namespace=ns).items, [])


# --- the conversion webhook -------------------------------------------------------------------
def _convert(obj: dict, desired: str) -> dict:
    """v1 C{spec.color} <-> v2 C{spec.colour}."""
    out = json.loads(json.dumps(obj))
    spec = out.setdefault("spec", {})
    if desired.endswith("/v2") and "color" in spec:
        spec["colour"] = spec.pop("color")
    if desired.endswith("/v1") and "colour" in spec:
        spec["color"] = spec.pop("colour")
    out["apiVersion"] = desired
    return out


class _ConversionHandler(BaseHTTPRequestHandler):
    reviews: list = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        request = body["request"]
        type(self).reviews.append(request["desiredAPIVersion"])
        answer = {"apiVersion": body["apiVersion"], "kind": "ConversionReview", "response": {
            "uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": [_convert(o, request["desiredAPIVersion"])
                                 for o in request["objects"]]}}
        data = json.dumps(answer).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args) -> None:
        pass


class ConversionWebhookTests(ServerTestMixin, SynchronousTestCase):
    """A two-version CRD whose conversion webhook is a real HTTPS server of the test."""

    def setUp(self) -> None:
        super().setUp()
        from kubetwist.server.certs import ensure_serving_certs

        directory = tempfile.mkdtemp(prefix="kubetwist-it-webhook-")
        self.addCleanup(shutil.rmtree, directory, True)
        certs = ensure_serving_certs(directory, [], ["127.0.0.1"])
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certs.cert_file, certs.key_file)
        _ConversionHandler.reviews = []
        httpd = ThreadingHTTPServer(("127.0.0.1", 0), _ConversionHandler)
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        thread = threading.Thread(target=httpd.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(thread.join, 5)
        self.addCleanup(httpd.shutdown)
        with open(certs.ca_cert_file, "rb") as f:
            import base64
            self.ca_bundle = base64.b64encode(f.read()).decode()
        self.webhook_url = f"https://127.0.0.1:{httpd.server_address[1]}/convert"
        assert os.path.exists(certs.cert_file)

    def crd(self) -> dict:
        def schema(field):
            return {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {"type": "object", "properties": {
                    field: {"type": "string"}}}}}}

        return {
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "paints.acceptance.example.com"},
            "spec": {
                "group": "acceptance.example.com", "scope": "Namespaced",
                "names": {"plural": "paints", "singular": "paint", "kind": "Paint"},
                "versions": [
                    {"name": "v1", "served": True, "storage": True, "schema": schema("color")},
                    {"name": "v2", "served": True, "storage": False, "schema": schema("colour")},
                ],
                "conversion": {"strategy": "Webhook", "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": self.webhook_url, "caBundle": self.ca_bundle}}},
            },
        }

    def test_converts_both_ways(self) -> None:
        """
        A Paint created in v2 (C{colour}) is stored in v1 (C{color}) through the webhook and
        read back in either version; one created in v1 reads as v2.
        """
        crd = self.crd()
        self.server.kubectl("apply", "-f", "-", input=json.dumps(crd))
        self.addCleanup(self.server.kubectl, "delete", "crd", crd["metadata"]["name"],
                        "--timeout=30s")
        self.server.kubectl("wait", "--for=condition=Established", "--timeout=30s",
                            f"crd/{crd['metadata']['name']}")
        ns = self.namespace()
        self.server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps({
            "apiVersion": "acceptance.example.com/v2", "kind": "Paint",
            "metadata": {"name": "p2"}, "spec": {"colour": "red"}}))
        self.server.kubectl("create", "-n", ns, "-f", "-", input=json.dumps({
            "apiVersion": "acceptance.example.com/v1", "kind": "Paint",
            "metadata": {"name": "p1"}, "spec": {"color": "green"}}))
        as_v1 = self.get_json(ns, "paints.v1.acceptance.example.com", "p2")
        self.assertEqual((as_v1["apiVersion"], as_v1["spec"]),
                         ("acceptance.example.com/v1", {"color": "red"}))
        as_v2 = self.get_json(ns, "paints.v2.acceptance.example.com", "p1")
        self.assertEqual((as_v2["apiVersion"], as_v2["spec"]),
                         ("acceptance.example.com/v2", {"colour": "green"}))
        listed = self.get_json(ns, "paints.v2.acceptance.example.com")
        self.assertEqual(sorted((i["metadata"]["name"], i["spec"]["colour"])
                                for i in listed["items"]), [("p1", "green"), ("p2", "red")])
        self.assertIn("acceptance.example.com/v1", _ConversionHandler.reviews)
        self.assertIn("acceptance.example.com/v2", _ConversionHandler.reviews)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
