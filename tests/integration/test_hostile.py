# -*- test-case-name: tests.integration.test_hostile -*-
"""
Hostile input against a real C{twistd kubeapi} (issue 16's reproductions): a YAML alias bomb,
JSON patch amplification and a large YAML body answer without holding the server (a
concurrent C{/readyz} on its own connection keeps answering fast); values of the wrong JSON
type get upstream's 400 and a protobuf list still works afterwards; a 10,000-term label
selector is answered over HTTP/1.1 and HTTP/2 (kubectl) and more than 1 MiB of headers gets
Go's 431; the embedded store's files are private.

Bounds are wall time on a shared 2-core machine, so they are generous (the broken server took
90 s and gigabytes for the first two) but each would fail on the behaviour fixed here.
"""

from __future__ import annotations

import http.client
import json
import os
import ssl
import stat
import threading
import time
from typing import Any

from twisted.trial.unittest import SynchronousTestCase

from tests.integration.harness import ServerTestMixin, class_units

#: The most a hostile request may take to be answered, in seconds.
ANSWER_BOUND = 1.0
#: The most any /readyz may take while a hostile request is in flight, in seconds.
READYZ_BOUND = 0.2
#: The most any /readyz may take while a 3 MiB YAML body is decoded on a worker thread, in
#: seconds: the worker holds the GIL for up to about 0.1-0.2 s at a time (libyaml's C code);
#: on the reactor thread the whole decode (seconds) held it.
READYZ_BOUND_LARGE = 0.4

#: go-yaml's alias bomb: nine levels of nine aliases (a 1 KB body, 9**9 nodes expanded).
BOMB = "\n".join(
    ["a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]"]
    + [f"{chr(ord('a') + i)}: &{chr(ord('a') + i)} [" + ",".join(
        [f"*{chr(ord('a') + i - 1)}"] * 9) + "]" for i in range(1, 9)])


class Connection:
    """One keep-alive HTTPS connection with the admin certificate."""

    def __init__(self, server: Any) -> None:
        context = ssl.create_default_context(cafile=server.ca_file)
        context.load_cert_chain(server.admin_cert_file, server.admin_key_file)
        self.connection = http.client.HTTPSConnection("127.0.0.1", server.port,
                                                      context=context, timeout=120)

    def request(self, method: str, path: str, body: Any = None,
                content_type: str = "application/json",
                accept: str = "application/json") -> tuple[int, bytes, float]:
        """@return: (status, body, seconds from sending to the last byte)."""
        if body is not None and not isinstance(body, (bytes, str)):
            body = json.dumps(body)
        if isinstance(body, str):
            body = body.encode()
        headers = {"Accept": accept}
        if body is not None:
            headers["Content-Type"] = content_type
        start = time.monotonic()
        self.connection.request(method, path, body=body, headers=headers)
        response = self.connection.getresponse()
        data = response.read()
        return response.status, data, time.monotonic() - start

    def close(self) -> None:
        self.connection.close()


class HostileInputTests(ServerTestMixin, SynchronousTestCase):
    def connect(self) -> Connection:
        connection = Connection(self.server)
        self.addCleanup(connection.close)
        connection.request("GET", "/readyz")  # TLS handshake done before measuring
        return connection

    def while_in_flight(self, method: str, path: str, body: Any, content_type: str) -> tuple:
        """
        Send a request on one connection and probe C{/readyz} on another until it is
        answered.

        @return: (status, decoded body, seconds it took, the slowest /readyz in seconds,
            how many /readyz were answered while it was in flight).
        """
        hostile, probe = self.connect(), self.connect()
        result: dict = {}

        def send() -> None:
            result["answer"] = hostile.request(method, path, body, content_type)

        thread = threading.Thread(target=send)
        thread.start()
        slowest, probes = 0.0, 0
        while thread.is_alive() or probes == 0:
            status, text, took = probe.request("GET", "/readyz")
            self.assertEqual((status, text), (200, b"ok"))
            slowest = max(slowest, took)
            probes += 1
        thread.join()
        status, data, took = result["answer"]
        return status, json.loads(data), took, slowest, probes

    def configmap(self, namespace: str, name: str) -> str:
        path = f"/api/v1/namespaces/{namespace}/configmaps"
        status, _, _ = self.connect().request("POST", path, {
            "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"a": "b"}})
        self.assertEqual(status, 201)
        return f"{path}/{name}"

    def test_alias_bomb(self) -> None:
        """The bomb is refused at once (400), and the server keeps answering."""
        ns = self.namespace()
        body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n" + BOMB + "\n"
        status, obj, took, slowest, _ = self.while_in_flight(
            "POST", f"/api/v1/namespaces/{ns}/configmaps", body, "application/yaml")
        self.assertEqual((status, obj["message"].rsplit(" (", 1)[0]), (
            400, "the object provided is unrecognized (must be of type ConfigMap): yaml: "
                 "document contains excessive aliasing"))
        self.assertLess(took, ANSWER_BOUND)
        self.assertLess(slowest, READYZ_BOUND)

    def test_json_patch_amplification(self) -> None:
        """One add and 16 or 30 self-doubling copies: 422 at once (the copies may copy 3 MiB
        in total), nothing stored."""
        ns = self.namespace()
        path = self.configmap(ns, "amp")
        for copies in (16, 30):
            ops = [{"op": "add", "path": "/data/l", "value": ["x" * 100]}]
            ops += [{"op": "copy", "from": "/data/l", "path": "/data/l/-"}] * copies
            status, obj, took, slowest, _ = self.while_in_flight(
                "PATCH", path, ops, "application/json-patch+json")
            self.assertEqual((status, obj["reason"]), (422, "Invalid"), copies)
            self.assertLess(took, ANSWER_BOUND, copies)
            self.assertLess(slowest, READYZ_BOUND, copies)
        status, data, _ = self.connect().request("GET", path)
        self.assertEqual(json.loads(data)["data"], {"a": "b"})

    def test_large_yaml(self) -> None:
        """A 3 MiB YAML body is decoded off the reactor thread: /readyz keeps answering
        while it is worked on."""
        ns = self.namespace()
        items = "".join(f"  - item-{i:07d}\n" for i in range(180000))
        body = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\nfoo:\n" + items
        self.assertGreater(len(body), 3_000_000)
        status, obj, took, slowest, probes = self.while_in_flight(
            "POST", f"/api/v1/namespaces/{ns}/configmaps?fieldValidation=Strict", body,
            "application/yaml")
        self.assertEqual((status, obj["message"]), (
            400, 'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding '
                 'error: unknown field "foo"'))
        self.assertLess(slowest, READYZ_BOUND_LARGE, (took, probes))

    def test_wrong_types(self) -> None:
        """Values Go's types cannot hold get upstream's 400, nothing is stored, and a
        protobuf list of ConfigMaps works afterwards."""
        ns = self.namespace()
        connection = self.connect()
        prefix = 'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot ' \
                 "unmarshal "
        for extra, message in (
            ({"metadata": {"name": "w", "labels": {"a": ["x"]}}},
             "array into Go struct field ObjectMeta.metadata.labels of type string"),
            ({"binaryData": {"a": ["x"]}},
             "string into Go struct field ConfigMap.binaryData of type uint8"),
            ({"data": {"k": ["s"] * 2900}},
             "array into Go struct field ConfigMap.data of type string"),
            ({"metadata": {"name": "w", "finalizers": "x"}},
             "string into Go struct field ObjectMeta.metadata.finalizers of type []string"),
            ({"immutable": "yes"}, "string into Go struct field ConfigMap.immutable of type bool"),
        ):
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "w"}, **extra}
            status, data, _ = connection.request(
                "POST", f"/api/v1/namespaces/{ns}/configmaps", body)
            self.assertEqual((status, json.loads(data)["message"]), (400, prefix + message))
        deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                      "spec": {"replicas": "abc", "selector": {"matchLabels": {"a": "b"}},
                               "template": {"metadata": {"labels": {"a": "b"}}, "spec": {
                                   "containers": [{"name": "c", "image": "i"}]}}}}
        status, data, _ = connection.request(
            "POST", f"/apis/apps/v1/namespaces/{ns}/deployments", deployment)
        self.assertEqual((status, json.loads(data)["message"]), (
            400, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
                 "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type "
                 "int32"))
        service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"},
                   "spec": {"ports": [{"port": "eighty"}]}}
        status, data, _ = connection.request("POST", f"/api/v1/namespaces/{ns}/services",
                                             service)
        self.assertEqual((status, json.loads(data)["message"]), (
            400, 'Service in version "v1" cannot be handled as a Service: json: cannot '
                 "unmarshal string into Go struct field ServicePort.spec.ports.port of type "
                 "int32"))
        status, data, _ = connection.request(
            "GET", "/api/v1/configmaps", accept="application/vnd.kubernetes.protobuf")
        self.assertEqual(status, 200, data[:300])
        self.assertTrue(data.startswith(b"k8s\x00"))
        names = self.server.kubectl("get", "configmaps", "-n", ns, "-o", "name").stdout.split()
        self.assertEqual(names, ["configmap/kube-root-ca.crt"])

    def test_long_label_selector(self) -> None:
        """A 10,000-term label selector (118 KB of URL) is answered over HTTP/1.1 and through
        kubectl (HTTP/2); past 1 MiB of headers HTTP/1.1 gets Go's 431."""
        ns = self.namespace()
        selector = ",".join(f"k{i}=v{i}" for i in range(10000))
        path = f"/api/v1/namespaces/{ns}/configmaps?labelSelector={selector}"
        self.assertGreater(len(path), 117_000)
        status, data, _ = self.connect().request("GET", path)
        self.assertEqual((status, json.loads(data)["items"]), (200, []))
        out = self.server.kubectl("get", "configmaps", "-n", ns, "-l", selector, "-o", "json")
        self.assertEqual(json.loads(out.stdout)["items"], [])
        connection = self.connect()
        connection.connection.putrequest("GET", "/readyz")
        connection.connection.putheader("X-Pad", "a" * ((1 << 20) + 4096))
        connection.connection.endheaders()
        response = connection.connection.getresponse()
        self.assertEqual((response.status, response.read()),
                         (431, b"431 Request Header Fields Too Large"))

    def test_data_dir_private(self) -> None:
        """A fresh data directory is 0700, the database files 0600."""
        directory = self.server.data_dir
        modes = {name: stat.S_IMODE(os.stat(os.path.join(directory, name)).st_mode)
                 for name in os.listdir(directory) if name.startswith("state.db")}
        self.assertEqual(stat.S_IMODE(os.stat(directory).st_mode), 0o700)
        self.assertEqual(set(modes), {"state.db", "state.db-wal", "state.db-shm",
                                      "state.db.lock"})
        self.assertEqual(set(modes.values()), {0o600}, modes)


#: trial -j hands out this module's tests one class at a time (see harness.class_units).
testSuite = class_units(__name__)
