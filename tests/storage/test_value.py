# -*- test-case-name: tests.storage.test_value -*-
"""
The encryption providers and transformers of L{kubetwist.storage.value}, against known
vectors: AES-CBC bytes produced by the C{openssl enc -aes-256-cbc} command, AES-GCM by NIST's
GCM test case 16 (McGrew & Viega), and the stored layout upstream documents
(C{k8s:enc:<provider>:v1:<key name>:} + nonce/IV + ciphertext).
"""

from __future__ import annotations

import base64

from twisted.trial.unittest import SynchronousTestCase
from zope.interface.verify import verifyObject

from kubetwist.storage.value import (
    AESCBCTransformer,
    AESGCMTransformer,
    IdentityTransformer,
    ITransformer,
    PrefixTransformers,
    ResourceTransformers,
    SecretboxTransformer,
    TransformError,
    group_resource_for_key,
    parse_encryption_config,
)

#: C{bytes(range(32))}, the key of the AES-CBC vector (base64 for configurations).
CBC_KEY = bytes(range(32))
CBC_KEY_B64 = base64.b64encode(CBC_KEY).decode()
CBC_IV = bytes.fromhex("a0a1a2a3a4a5a6a7a8a9aaabacadaeaf")
CBC_PLAINTEXT = b'{"kind":"Secret","apiVersion":"v1","data":{"k":"dg=="}}'
#: C{printf %s CBC_PLAINTEXT | openssl enc -aes-256-cbc -K 0001..1f -iv a0a1..af | xxd -p}
CBC_CIPHERTEXT = bytes.fromhex(
    "da54e881eafae68f34aa2ddb00e56b52372721a55a897321873ece06f719cdc8"
    "bf0a245d67003860970448e7fc1735c29f0e6d0e30e7f31c39f4dd0306657f1e"
)

#: NIST GCM test case 16: 256-bit key, 96-bit IV, 20 bytes of additional data.
GCM_KEY = bytes.fromhex("feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308")
GCM_IV = bytes.fromhex("cafebabefacedbaddecaf888")
GCM_AAD = bytes.fromhex("feedfacedeadbeeffeedfacedeadbeefabaddad2")
GCM_PLAINTEXT = bytes.fromhex(
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
    "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
)
GCM_CIPHERTEXT = bytes.fromhex(
    "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
    "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662"
)
GCM_TAG = bytes.fromhex("76fc6ece0f4e1768cddf8853bb2d551b")

#: NaCl C{crypto_secretbox} of C{{"kind":"Secret"}} with key C{bytes(range(32))} and nonce
#: C{bytes(range(100, 124))}: nonce, then Poly1305 tag, then XSalsa20 ciphertext.
SECRETBOX_NONCE = bytes(range(100, 124))
SECRETBOX_STORED = bytes.fromhex(
    "6465666768696a6b6c6d6e6f707172737475767778797a7b"
    "aa93d2c2be2ff25c283a43ccfaa1df9f799bf2a054d2ecd392ae46f745e1d73a43"
)


def fixed(value: bytes):
    """A C{random} source that always answers C{value} (its length must be asked for)."""

    def random(n: int) -> bytes:
        assert n == len(value), (n, len(value))
        return value

    return random


def config(providers: str, resources: str = "[secrets]") -> bytes:
    """An EncryptionConfiguration with one entry."""
    return (
        "kind: EncryptionConfiguration\n"
        "apiVersion: apiserver.config.k8s.io/v1\n"
        "resources:\n"
        f"- resources: {resources}\n"
        f"  providers: {providers}\n"
    ).encode()


class AESCBCTests(SynchronousTestCase):
    """C{aescbc}: random IV, AES-CBC, PKCS#7 padding."""

    def test_interface(self) -> None:
        """Every provider provides L{ITransformer}."""
        for t in (AESCBCTransformer(CBC_KEY), AESGCMTransformer(GCM_KEY),
                  SecretboxTransformer(CBC_KEY), IdentityTransformer()):
            self.assertTrue(verifyObject(ITransformer, t))

    def test_decrypts_openssl_vector(self) -> None:
        """IV followed by OpenSSL's AES-256-CBC output decrypts to the plaintext, not stale."""
        t = AESCBCTransformer(CBC_KEY)
        self.assertEqual(t.from_storage(CBC_IV + CBC_CIPHERTEXT, b"/k"), (CBC_PLAINTEXT, False))

    def test_encrypts_like_openssl(self) -> None:
        """With the vector's IV, the stored bytes are the IV then OpenSSL's ciphertext."""
        t = AESCBCTransformer(CBC_KEY, random=fixed(CBC_IV))
        self.assertEqual(t.to_storage(CBC_PLAINTEXT, b"/k"), CBC_IV + CBC_CIPHERTEXT)

    def test_padding_whole_block(self) -> None:
        """A plaintext of whole blocks gets one more block of padding (16 bytes of 0x10)."""
        t = AESCBCTransformer(CBC_KEY)
        stored = t.to_storage(b"x" * 32, b"")
        self.assertEqual(len(stored), 16 + 48)
        self.assertEqual(t.from_storage(stored, b""), (b"x" * 32, False))

    def test_random_iv(self) -> None:
        """Two encryptions of the same data differ (a fresh IV each time) and both decrypt."""
        t = AESCBCTransformer(CBC_KEY)
        a, b = t.to_storage(b"same", b""), t.to_storage(b"same", b"")
        self.assertNotEqual(a, b)
        self.assertEqual(t.from_storage(b, b""), (b"same", False))

    def test_errors(self) -> None:
        """Upstream's messages: too short, not whole blocks, bad padding under a wrong key."""
        t = AESCBCTransformer(CBC_KEY)
        cases = [
            (b"short", "the stored data was shorter than the required size"),
            (CBC_IV + b"x" * 17, "the stored data is not a multiple of the block size"),
            (CBC_IV, "invalid PKCS7 data (empty or not padded)"),
        ]
        for data, message in cases:
            e = self.assertRaises(TransformError, t.from_storage, data, b"")
            self.assertEqual(str(e), message)
        wrong = AESCBCTransformer(bytes(32))
        e = self.assertRaises(TransformError, wrong.from_storage, CBC_IV + CBC_CIPHERTEXT, b"")
        self.assertEqual(str(e), "invalid PKCS7 data (empty or not padded)")
        wrong = AESCBCTransformer(bytes([1] * 32))
        e = self.assertRaises(TransformError, wrong.from_storage, CBC_IV + CBC_CIPHERTEXT, b"")
        self.assertEqual(str(e), "invalid padding on input")

    def test_key_sizes(self) -> None:
        """AES-128 and AES-192 keys work; other sizes are refused."""
        for size in (16, 24):
            t = AESCBCTransformer(bytes(size))
            self.assertEqual(t.from_storage(t.to_storage(b"v", b""), b""), (b"v", False))
        self.assertRaises(ValueError, AESCBCTransformer, bytes(20))


class AESGCMTests(SynchronousTestCase):
    """C{aesgcm}: 12-byte nonce, ciphertext and tag, the key as additional data."""

    def test_decrypts_nist_vector(self) -> None:
        """Nonce, ciphertext and tag of NIST test case 16 decrypt with its additional data."""
        t = AESGCMTransformer(GCM_KEY)
        stored = GCM_IV + GCM_CIPHERTEXT + GCM_TAG
        self.assertEqual(t.from_storage(stored, GCM_AAD), (GCM_PLAINTEXT, False))

    def test_encrypts_like_nist(self) -> None:
        """With the vector's nonce, the stored bytes are nonce, ciphertext, tag."""
        t = AESGCMTransformer(GCM_KEY, random=fixed(GCM_IV))
        self.assertEqual(t.to_storage(GCM_PLAINTEXT, GCM_AAD), GCM_IV + GCM_CIPHERTEXT + GCM_TAG)

    def test_authenticated_context(self) -> None:
        """Other additional data (a value copied to another key) or a wrong key fail to open."""
        stored = GCM_IV + GCM_CIPHERTEXT + GCM_TAG
        for t, aad in ((AESGCMTransformer(GCM_KEY), b"/registry/secrets/ns/other"),
                       (AESGCMTransformer(bytes(32)), GCM_AAD)):
            e = self.assertRaises(TransformError, t.from_storage, stored, aad)
            self.assertEqual(str(e), "cipher: message authentication failed")

    def test_short(self) -> None:
        """Less than a nonce is C{the stored data was shorter than the required size}."""
        e = self.assertRaises(TransformError, AESGCMTransformer(GCM_KEY).from_storage,
                              b"12345", b"")
        self.assertEqual(str(e), "the stored data was shorter than the required size")


class SecretboxTests(SynchronousTestCase):
    """C{secretbox}: 24-byte nonce, then NaCl's box (tag, ciphertext)."""

    def test_decrypts_vector(self) -> None:
        """The stored nonce + box decrypts with the key."""
        t = SecretboxTransformer(bytes(range(32)))
        self.assertEqual(t.from_storage(SECRETBOX_STORED, b""), (b'{"kind":"Secret"}', False))

    def test_encrypts_vector(self) -> None:
        """With the vector's nonce, the stored bytes are exactly the vector."""
        t = SecretboxTransformer(bytes(range(32)), random=fixed(SECRETBOX_NONCE))
        self.assertEqual(t.to_storage(b'{"kind":"Secret"}', b""), SECRETBOX_STORED)

    def test_errors(self) -> None:
        """A wrong key gives upstream's (odd) message; short data its own; 32-byte keys only."""
        e = self.assertRaises(TransformError, SecretboxTransformer(bytes(32)).from_storage,
                              SECRETBOX_STORED, b"")
        self.assertEqual(str(e), "output array was not large enough for encryption")
        e = self.assertRaises(TransformError, SecretboxTransformer(bytes(32)).from_storage,
                              b"x" * 39, b"")
        self.assertEqual(str(e), "the stored data was shorter than the required size")
        self.assertRaises(ValueError, SecretboxTransformer, bytes(16))


class IdentityTests(SynchronousTestCase):
    """C{identity}: stores as is, refuses encrypted values."""

    def test_passthrough(self) -> None:
        """Values pass unchanged both ways."""
        t = IdentityTransformer()
        self.assertEqual(t.to_storage(b"{}", b""), b"{}")
        self.assertEqual(t.from_storage(b"{}", b""), (b"{}", False))

    def test_refuses_encrypted(self) -> None:
        """A C{k8s:enc:} value is refused with upstream's message."""
        e = self.assertRaises(TransformError, IdentityTransformer().from_storage,
                              b"k8s:enc:aescbc:v1:key1:xyz", b"")
        self.assertEqual(str(e), "identity transformer tried to read encrypted data")


class PrefixTransformersTests(SynchronousTestCase):
    """Upstream C{NewPrefixTransformers}."""

    def setUp(self) -> None:
        self.first = AESCBCTransformer(CBC_KEY)
        self.second = AESCBCTransformer(bytes(32))
        self.t = PrefixTransformers("no matching prefix found", [
            (b"p1:", self.first), (b"p2:", self.second), (b"", IdentityTransformer()),
        ])

    def test_first_writes(self) -> None:
        """Writes go through the first transformer, prefixed."""
        stored = self.t.to_storage(b"data", b"")
        self.assertTrue(stored.startswith(b"p1:"))
        self.assertEqual(self.first.from_storage(stored[3:], b""), (b"data", False))
        self.assertEqual(self.t.from_storage(stored, b""), (b"data", False))

    def test_later_reads_are_stale(self) -> None:
        """A value read through a later transformer (or identity) is stale."""
        stored = b"p2:" + self.second.to_storage(b"old", b"")
        self.assertEqual(self.t.from_storage(stored, b""), (b"old", True))
        self.assertEqual(self.t.from_storage(b'{"plain":1}', b""), (b'{"plain":1}', True))

    def test_no_match(self) -> None:
        """Without an identity entry, an unknown prefix gives the configured message."""
        t = PrefixTransformers("no matching prefix found", [(b"p1:", self.first)])
        e = self.assertRaises(TransformError, t.from_storage, b"zz", b"")
        self.assertEqual(str(e), "no matching prefix found")

    def test_same_prefix_tries_all(self) -> None:
        """Two entries with one prefix: a failure in the first does not stop the second."""
        t = PrefixTransformers("x", [(b"p:", self.second), (b"p:", self.first)])
        stored = b"p:" + self.first.to_storage(b"v", b"")
        self.assertEqual(t.from_storage(stored, b"")[0], b"v")

    def test_errors_aggregate(self) -> None:
        """Failures of matching entries are reported together, identity's left out."""
        p = b"k8s:enc:p:"
        t = PrefixTransformers("x", [
            (p, AESGCMTransformer(bytes(32))),
            (p, AESCBCTransformer(bytes(32))),
            (b"", IdentityTransformer()),
        ])
        e = self.assertRaises(TransformError, t.from_storage, p + b"y" * 20, b"")
        self.assertEqual(str(e), "[cipher: message authentication failed, "
                                 "the stored data is not a multiple of the block size]")


class ResourceTransformersTests(SynchronousTestCase):
    """The per group-resource lookup and the stored value format."""

    def test_group_resource_for_key(self) -> None:
        """Keys map to group-resources following kube-apiserver's etcd layout."""
        cases = {
            "/secrets/ns/a": ("", "secrets"),
            "/registry/secrets/ns/a": ("", "secrets"),
            "/configmaps/ns/a": ("", "configmaps"),
            "/services/specs/ns/a": ("", "services"),
            "/services/endpoints/ns/a": ("", "endpoints"),
            "/minions/n1": ("", "nodes"),
            "/controllers/ns/rc": ("", "replicationcontrollers"),
            "/ingress/ns/i": ("networking.k8s.io", "ingresses"),
            "/ranges/serviceips": ("", "serviceipallocations"),
            "/deployments/ns/d": ("apps", "deployments"),
            "/leases/kube-node-lease/n1": ("coordination.k8s.io", "leases"),
            "/clusterroles/admin": ("rbac.authorization.k8s.io", "clusterroles"),
            "/apiextensions.k8s.io/customresourcedefinitions/a.b.c":
                ("apiextensions.k8s.io", "customresourcedefinitions"),
            "/apiregistration.k8s.io/apiservices/v1.apps":
                ("apiregistration.k8s.io", "apiservices"),
            "/stable.example.com/crontabs/ns/c": ("stable.example.com", "crontabs"),
            "/events/ns/e": ("", "events"),
        }
        for key, expected in cases.items():
            self.assertEqual((key, group_resource_for_key(key)), (key, expected))

    def test_lookup_order(self) -> None:
        """Exact resource, then C{*.<group>}, then C{*.*}, else identity."""
        exact, group, everything = (AESCBCTransformer(CBC_KEY) for _ in range(3))
        rt = ResourceTransformers({("apps", "deployments"): exact, ("apps", "*"): group,
                                   ("*", "*"): everything})
        self.assertIs(rt.transformer_for_resource("apps", "deployments"), exact)
        self.assertIs(rt.transformer_for_resource("apps", "statefulsets"), group)
        self.assertIs(rt.transformer_for_resource("", "secrets"), everything)
        self.assertIs(rt.transformer_for_key("/deployments/ns/d"), exact)
        self.assertIs(rt.transformer_for_key("/daemonsets/ns/d"), group)
        self.assertIsInstance(ResourceTransformers({}).transformer_for_resource("", "pods"),
                              IdentityTransformer)

    def test_decodes_documented_format(self) -> None:
        """
        A value laid out as upstream stores it (C{k8s:enc:aescbc:v1:key1:}, IV, ciphertext)
        decodes through a loaded configuration.
        """
        rt = parse_encryption_config(config(
            f"[{{aescbc: {{keys: [{{name: key1, secret: '{CBC_KEY_B64}'}}]}}}}]"))
        stored = b"k8s:enc:aescbc:v1:key1:" + CBC_IV + CBC_CIPHERTEXT
        self.assertEqual(rt.from_storage("/registry/secrets/default/s", stored, "/registry"),
                         (CBC_PLAINTEXT, False))

    def test_writes_documented_format(self) -> None:
        """Each provider writes C{k8s:enc:<provider>:v1:<key name>:} then its layout."""
        key = CBC_KEY_B64
        for provider in ("aescbc", "aesgcm", "secretbox"):
            rt = parse_encryption_config(config(
                f"[{{{provider}: {{keys: [{{name: k9, secret: '{key}'}}]}}}}]"))
            stored = rt.to_storage("/registry/secrets/ns/s", b"{}", "/registry")
            prefix = f"k8s:enc:{provider}:v1:k9:".encode()
            self.assertTrue(stored.startswith(prefix), stored[:40])
            body = stored[len(prefix):]
            # IV + one padded block; nonce + 2 bytes + tag; nonce + tag + 2 bytes
            expected = {"aescbc": 16 + 16, "aesgcm": 12 + 2 + 16, "secretbox": 24 + 16 + 2}
            self.assertEqual((provider, len(body)), (provider, expected[provider]))
            self.assertEqual(rt.from_storage("/registry/secrets/ns/s", stored, "/registry"),
                             (b"{}", False))

    def test_gcm_binds_full_key(self) -> None:
        """AES-GCM authenticates the whole backend key, etcd prefix included."""
        rt = parse_encryption_config(config(
            f"[{{aesgcm: {{keys: [{{name: k, secret: '{CBC_KEY_B64}'}}]}}}}]"))
        stored = rt.to_storage("/registry/secrets/ns/a", b"{}", "/registry")
        gcm = AESGCMTransformer(CBC_KEY)
        body = stored[len(b"k8s:enc:aesgcm:v1:k:"):]
        self.assertEqual(gcm.from_storage(body, b"/registry/secrets/ns/a"), (b"{}", False))
        e = self.assertRaises(TransformError, rt.from_storage, "/registry/secrets/ns/b", stored,
                              "/registry")
        self.assertEqual(str(e), "cipher: message authentication failed")

    def test_unconfigured_resources_plain(self) -> None:
        """Resources the configuration does not name are stored as they are."""
        rt = parse_encryption_config(config(
            f"[{{aescbc: {{keys: [{{name: k, secret: '{CBC_KEY_B64}'}}]}}}}]"))
        self.assertEqual(rt.to_storage("/registry/configmaps/ns/a", b"{}", "/registry"), b"{}")

    def test_rotation(self) -> None:
        """
        A new key listed first writes; values of the old key still read, and are stale.
        """
        old = parse_encryption_config(config(
            f"[{{aescbc: {{keys: [{{name: key1, secret: '{CBC_KEY_B64}'}}]}}}}]"))
        stored = old.to_storage("/registry/secrets/ns/a", b"v1", "/registry")
        new_key = base64.b64encode(bytes(range(100, 132))).decode()
        new = parse_encryption_config(config(
            f"[{{aescbc: {{keys: [{{name: key2, secret: '{new_key}'}}, "
            f"{{name: key1, secret: '{CBC_KEY_B64}'}}]}}}}]"))
        self.assertEqual(new.from_storage("/registry/secrets/ns/a", stored, "/registry"),
                         (b"v1", True))
        rewritten = new.to_storage("/registry/secrets/ns/a", b"v1", "/registry")
        self.assertTrue(rewritten.startswith(b"k8s:enc:aescbc:v1:key2:"))
        self.assertEqual(new.from_storage("/registry/secrets/ns/a", rewritten, "/registry"),
                         (b"v1", False))

    def test_missing_key(self) -> None:
        """A value of a key no longer configured: C{no matching key was found ...}."""
        other = base64.b64encode(bytes(range(100, 132))).decode()
        old = parse_encryption_config(config(
            f"[{{aescbc: {{keys: [{{name: key1, secret: '{CBC_KEY_B64}'}}]}}}}]"))
        stored = old.to_storage("/registry/secrets/ns/a", b"v1", "/registry")
        new = parse_encryption_config(config(
            f"[{{aescbc: {{keys: [{{name: key2, secret: '{other}'}}]}}}}]"))
        e = self.assertRaises(TransformError, new.from_storage, "/registry/secrets/ns/a", stored,
                              "/registry")
        self.assertEqual(str(e), "no matching key was found for the provided AES transformer")

    def test_identity_first_migrates_away(self) -> None:
        """C{identity} first: writes plaintext, still reads older encrypted values (stale)."""
        rt = parse_encryption_config(config(
            f"[{{identity: {{}}}}, {{aescbc: {{keys: [{{name: key1, secret: '{CBC_KEY_B64}'"
            "}]}}]"))
        self.assertEqual(rt.to_storage("/registry/secrets/ns/a", b"{}", "/registry"), b"{}")
        stored = b"k8s:enc:aescbc:v1:key1:" + CBC_IV + CBC_CIPHERTEXT
        self.assertEqual(rt.from_storage("/registry/secrets/ns/a", stored, "/registry"),
                         (CBC_PLAINTEXT, True))
        self.assertEqual(rt.from_storage("/registry/secrets/ns/a", b"{}", "/registry"),
                         (b"{}", False))
