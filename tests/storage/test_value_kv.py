# -*- test-case-name: tests.storage.test_value_kv -*-
"""
Encryption at rest through the shared storage (L{kubetwist.storage.kv.KVStorageBase} with a
C{transformer}) and through the API: upstream C{etcd3/store.go}'s C{TransformToStorage} /
C{TransformFromStorage} calls, stale rewrites, and C{storage.InternalError} -> 500.
"""

from __future__ import annotations

import base64

from twisted.internet.defer import Deferred
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.runtime.errors import StatusError
from kubetwist.storage.interfaces import Preconditions, StorageError
from kubetwist.storage.kv import RawEvent
from kubetwist.storage.sqlite import SQLiteStorage
from kubetwist.storage.value import InternalError, parse_encryption_config
from kubetwist.storage.value.transformer import ResourceTransformers
from tests.support import FakeReactorClock, InlinePool, KubeTestCase

KEY1 = base64.b64encode(bytes(range(32))).decode()
KEY2 = base64.b64encode(bytes(range(100, 132))).decode()


def transformers(*keys: tuple[str, str], provider: str = "aescbc") -> ResourceTransformers:
    """Secrets encrypted with C{provider} and C{keys} (C{(name, base64 secret)}, first writes)."""
    listed = ", ".join(f'{{name: {n}, secret: "{s}"}}' for n, s in keys)
    return parse_encryption_config(
        b"kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\n"
        b"resources:\n- resources: [secrets]\n"
        + f"  providers: [{{{provider}: {{keys: [{listed}]}}}}]\n".encode()
    )


def secret(name: str, value: str = "dg==") -> dict:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": name, "namespace": "ns"}, "data": {"k": value}}


class KVTransformerTests(SynchronousTestCase):
    """The storage applies its transformer to every value it writes and reads."""

    def setUp(self) -> None:
        self.store = SQLiteStorage(FakeReactorClock(), ":memory:", threadpool=InlinePool())
        self.successResultOf(self.store.ready)
        self.store.transformer = transformers(("key1", KEY1))

    def raw(self, key: str) -> bytes:
        kv, _ = self.successResultOf(Deferred.fromCoroutine(self.store._get_kv(key)))
        return kv.value

    def test_create_stores_ciphertext(self) -> None:
        """A created secret is stored encrypted; the caller gets the object back."""
        out = self.successResultOf(self.store.create("/secrets/ns/a", secret("a", "c2VjcmV0")))
        self.assertEqual(out["data"], {"k": "c2VjcmV0"})
        raw = self.raw("/registry/secrets/ns/a")
        self.assertTrue(raw.startswith(b"k8s:enc:aescbc:v1:key1:"), raw[:30])
        self.assertNotIn(b"c2VjcmV0", raw)
        self.assertNotIn(b"Secret", raw)

    def test_other_resources_plain(self) -> None:
        """Resources the configuration does not name are stored as JSON."""
        self.successResultOf(self.store.create("/configmaps/ns/a", {"metadata": {"name": "a"}}))
        self.assertEqual(self.raw("/registry/configmaps/ns/a"), b'{"metadata":{"name":"a"}}')

    def test_reads_decrypt(self) -> None:
        """get, get_list, guaranteed_update and delete all see the plaintext object."""
        created = self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        got = self.successResultOf(self.store.get("/secrets/ns/a"))
        self.assertEqual(got, created)
        listed = self.successResultOf(self.store.get_list("/secrets/ns"))
        self.assertEqual(listed.items, [created])

        def change(current: dict) -> dict:
            self.assertEqual(current["data"], {"k": "dg=="})
            return dict(current, data={"k": "bmV3"})

        updated = self.successResultOf(self.store.guaranteed_update("/secrets/ns/a", change))
        self.assertEqual(updated["data"], {"k": "bmV3"})
        self.assertNotIn(b"bmV3", self.raw("/registry/secrets/ns/a"))
        deleted = self.successResultOf(self.store.delete(
            "/secrets/ns/a", Preconditions(
                resource_version=updated["metadata"]["resourceVersion"])))
        self.assertEqual(deleted["data"], {"k": "bmV3"})

    def test_unchanged_update_skips_write(self) -> None:
        """An update that changes nothing writes nothing (same resourceVersion)."""
        created = self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        out = self.successResultOf(self.store.guaranteed_update("/secrets/ns/a", lambda c: c))
        self.assertEqual(out["metadata"]["resourceVersion"],
                         created["metadata"]["resourceVersion"])

    def test_rotation_rewrites_stale(self) -> None:
        """
        After rotation (new key first) old values still read; an update that changes nothing
        still writes, with the new key, because the value was stale.
        """
        created = self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        self.store.transformer = transformers(("key2", KEY2), ("key1", KEY1))
        self.assertEqual(self.successResultOf(self.store.get("/secrets/ns/a")), created)
        out = self.successResultOf(self.store.guaranteed_update("/secrets/ns/a", lambda c: c))
        self.assertNotEqual(out["metadata"]["resourceVersion"],
                            created["metadata"]["resourceVersion"])
        self.assertTrue(self.raw("/registry/secrets/ns/a").startswith(b"k8s:enc:aescbc:v1:key2:"))
        again = self.successResultOf(self.store.guaranteed_update("/secrets/ns/a", lambda c: c))
        self.assertEqual(again["metadata"]["resourceVersion"], out["metadata"]["resourceVersion"])

    def test_wrong_key_internal_error(self) -> None:
        """A value no configured key opens: L{InternalError} with upstream's reason."""
        self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        self.store.transformer = transformers(("key2", KEY2))
        e = self.failureResultOf(self.store.get("/secrets/ns/a"), InternalError).value
        self.assertEqual(str(e), "no matching key was found for the provided AES transformer")
        # a storage error: the registry, not the storage, makes it the API's 500
        self.assertIsInstance(e, StorageError)
        self.assertNotIsInstance(e, StatusError)
        self.assertEqual(e.key, "/registry/secrets/ns/a")
        e = self.failureResultOf(self.store.get_list("/secrets/ns"), InternalError).value
        self.assertEqual(str(e), 'unable to transform key "/registry/secrets/ns/a": no matching '
                                 "key was found for the provided AES transformer")
        self.failureResultOf(self.store.guaranteed_update("/secrets/ns/a", lambda c: c),
                             InternalError)

    def test_removed_encryption(self) -> None:
        """Without a transformer for secrets, an encrypted value is refused by identity."""
        self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        self.store.transformer = ResourceTransformers({})
        e = self.failureResultOf(self.store.get("/secrets/ns/a"), InternalError).value
        self.assertEqual(str(e), "identity transformer tried to read encrypted data")

    def test_aesgcm_authenticates_key(self) -> None:
        """With aesgcm a value copied to another key does not open."""
        self.store.transformer = transformers(("g", KEY1), provider="aesgcm")
        self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        raw = self.raw("/registry/secrets/ns/a")
        self.assertTrue(raw.startswith(b"k8s:enc:aesgcm:v1:g:"))
        self.successResultOf(self.store.create("/secrets/ns/b", secret("b")))
        kv, _ = self.successResultOf(Deferred.fromCoroutine(
            self.store._get_kv("/registry/secrets/ns/b")))
        self.successResultOf(Deferred.fromCoroutine(
            self.store._put("/registry/secrets/ns/b", raw, kv.mod_revision, False)))
        e = self.failureResultOf(self.store.get("/secrets/ns/b"), InternalError).value
        self.assertEqual(str(e), "cipher: message authentication failed")

    def test_event_from_storage(self) -> None:
        """Watch events read from the backend are decrypted by C{event_from_storage}."""
        self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        raw = self.raw("/registry/secrets/ns/a")
        event = RawEvent("/registry/secrets/ns/a", 7, raw, raw)
        out = self.store.event_from_storage(event)
        self.assertEqual(out.value, out.prev_value)
        self.assertTrue(out.value.startswith(b'{"apiVersion":"v1","kind":"Secret"'))
        self.assertEqual((out.key, out.revision), ("/registry/secrets/ns/a", 7))
        deleted = RawEvent("/registry/secrets/ns/a", 8, None, raw, is_deleted=True)
        self.assertIsNone(self.store.event_from_storage(deleted).value)
        self.store.transformer = None
        self.assertIs(self.store.event_from_storage(event), event)

    def test_watch_decrypts(self) -> None:
        """
        A watch sees decrypted objects; an event no key opens ends it with an ERROR event
        carrying the 500 InternalError Status.
        """
        created = self.successResultOf(self.store.create("/secrets/ns/a", secret("a")))
        watch = self.store.watch("/secrets/ns", "", recursive=True)
        events: list = []
        watch.subscribe(lambda e: events.append((e.type, e.object)))
        self.successResultOf(self.store.create("/secrets/ns/b", secret("b")))
        self.assertEqual([(t, o["metadata"]["name"], o["data"]) for t, o in events],
                         [("ADDED", "a", {"k": "dg=="}), ("ADDED", "b", {"k": "dg=="})])
        self.assertEqual(events[0][1], created)
        junk = b"k8s:enc:aescbc:v1:key9:" + bytes(32)
        self.successResultOf(Deferred.fromCoroutine(
            self.store._put("/registry/secrets/ns/c", junk, 0, False)))
        reason = "no matching key was found for the provided AES transformer"
        self.assertEqual(events[2:], [("ERROR", {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"Internal error occurred: {reason}", "reason": "InternalError",
            "details": {"causes": [{"message": reason}]}, "code": 500,
        })])
        self.assertTrue(watch.ended)


class APITests(KubeTestCase):
    """Through the whole chain: secrets round-trip; an undecryptable one is 500 InternalError."""

    def setUp(self) -> None:
        super().setUp()
        self.storage.transformer = transformers(("key1", KEY1))
        code, _, _ = self.request("POST", "/api/v1/namespaces", {
            "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
        self.assertEqual(code, 201)

    def test_round_trip(self) -> None:
        """A created secret reads back with its data, stored encrypted."""
        code, body, _ = self.request("POST", "/api/v1/namespaces/ns/secrets", secret("s1"))
        self.assertEqual(code, 201, body)
        code, body, _ = self.request("GET", "/api/v1/namespaces/ns/secrets/s1")
        self.assertEqual((code, body["data"]), (200, {"k": "dg=="}))
        kv, _ = self.successResultOf(Deferred.fromCoroutine(
            self.storage._get_kv("/registry/secrets/ns/s1")))
        self.assertTrue(kv.value.startswith(b"k8s:enc:aescbc:v1:key1:"))

    def test_wrong_key_is_internal_error(self) -> None:
        """GET and LIST of a secret no key opens answer upstream's 500 InternalError Status."""
        self.request("POST", "/api/v1/namespaces/ns/secrets", secret("s1"))
        self.storage.transformer = transformers(("key2", KEY2))
        code, body, _ = self.request("GET", "/api/v1/namespaces/ns/secrets/s1")
        reason = "no matching key was found for the provided AES transformer"
        self.assertEqual(code, 500)
        self.assertEqual(body, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"Internal error occurred: {reason}", "reason": "InternalError",
            "details": {"causes": [{"message": reason}]}, "code": 500,
        })
        code, body, _ = self.request("GET", "/api/v1/namespaces/ns/secrets")
        listed = f'unable to transform key "/registry/secrets/ns/s1": {reason}'
        self.assertEqual((code, body["reason"], body["message"]),
                         (500, "InternalError", f"Internal error occurred: {listed}"))
