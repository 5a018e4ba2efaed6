# -*- test-case-name: tests.storage.test_continuetoken -*-
"""Shared key, continue-token, list-option and event helpers of
L{kubetwist.storage.continuetoken}."""

from __future__ import annotations

import base64

from twisted.trial.unittest import SynchronousTestCase

from kubetwist.storage.continuetoken import (
    InvalidResourceVersionError,
    decode_continue,
    encode_continue,
    normalize_prefix,
    parse_resource_version,
    prefix_range_end,
    prepare_key,
    validate_list_options,
)
from kubetwist.storage.interfaces import EVERYTHING, InvalidContinueError, SelectionPredicate
from kubetwist.storage.kv import (
    RawEvent,
    transform_event,
)


def raw(token: str) -> bytes:
    return base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))


class ContinueTokenTests(SynchronousTestCase):
    """Upstream C{EncodeContinue}/C{DecodeContinue}."""

    def test_encode_exact_bytes(self):
        """The token is unpadded URL-safe base64 of Go's compact JSON, start relative."""
        token = encode_continue("/registry/pods/ns/b\x00", "/registry/pods/", 12)
        self.assertNotIn("=", token)
        self.assertEqual(raw(token), b'{"v":"meta.k8s.io/v1","rv":12,"start":"ns/b\\u0000"}')

    def test_encode_html_escaped(self):
        """Like Go's json.Marshal, C{<>&} are escaped."""
        token = encode_continue("/p/a<&>", "/p/", 1)
        self.assertEqual(raw(token),
                         b'{"v":"meta.k8s.io/v1","rv":1,"start":"a\\u003c\\u0026\\u003e"}')

    def test_round_trip(self):
        """decode_continue gives back the absolute key and revision."""
        token = encode_continue("/registry/pods/ns/b\x00", "/registry/pods/", 12)
        self.assertEqual(decode_continue(token, "/registry/pods/"), ("/registry/pods/ns/b\x00", 12))

    def test_negative_revision(self):
        """rv -1 (continue at the latest revision) round-trips."""
        token = encode_continue("/p/a", "/p/", -1)
        self.assertEqual(decode_continue(token, "/p/"), ("/p/a", -1))

    def test_path_traversal_rejected(self):
        """A start key that is not clean (C{../}) is invalid."""
        token = base64.urlsafe_b64encode(b'{"v":"meta.k8s.io/v1","rv":1,"start":"../x"}').decode()
        with self.assertRaises(InvalidContinueError) as e:
            decode_continue(token, "/registry/pods/")
        self.assertEqual(str(e.exception), "continue key is not valid: ../x")

    def test_not_json(self):
        """A token that is not JSON gets Go's encoding/json message, bytes outside printable
        ASCII as C{\\xNN} (kube-apiserver v1.32, C{tests/vectors/core.jsonl})."""
        for token, message in [
                ("garbage", "invalid character '\\x81' looking for beginning of value"),
                ("abc", "invalid character 'i' looking for beginning of value")]:
            with self.assertRaises(InvalidContinueError) as e:
                decode_continue(token, "/p/")
            self.assertEqual(str(e.exception), "continue key is not valid: " + message)

    def test_bad_versions(self):
        """Unknown versions, rv 0 and empty start give upstream's messages."""
        cases = [
            (b'{"v":"x","rv":1,"start":"a"}',
             "continue key is not valid: server does not recognize this encoded version x"),
            (b'{"v":"meta.k8s.io/v1","rv":0,"start":"a"}',
             "continue key is not valid: incorrect encoded start resourceVersion "
             "(version meta.k8s.io/v1)"),
            (b'{"v":"meta.k8s.io/v1","rv":1,"start":""}',
             "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"),
        ]
        for data, message in cases:
            with self.assertRaises(InvalidContinueError) as e:
                decode_continue(base64.urlsafe_b64encode(data).decode(), "/p/")
            self.assertEqual(str(e.exception), message)


class KeyTests(SynchronousTestCase):
    """Keys, prefixes and range ends."""

    def test_prepare_key(self):
        """The prefix is prepended unless present; recursive adds a trailing slash."""
        self.assertEqual(prepare_key("/registry", "/pods/a"), "/registry/pods/a")
        self.assertEqual(prepare_key("/registry", "/registry/pods/a"), "/registry/pods/a")
        self.assertEqual(prepare_key("/registry", "/pods/a", True), "/registry/pods/a/")
        self.assertEqual(prepare_key("", "/pods/a"), "/pods/a")
        self.assertEqual(normalize_prefix("registry/"), "/registry")

    def test_prepare_key_invalid(self):
        """Dot segments and empty keys are refused."""
        for key in ("/a/../b", "..", "/a/.", "", "/"):
            self.assertRaises(ValueError, prepare_key, "/registry", key)

    def test_prefix_range_end(self):
        """etcd's GetPrefixRangeEnd."""
        self.assertEqual(prefix_range_end(b"/a/"), b"/a0")
        self.assertEqual(prefix_range_end(b"a\xff"), b"b")
        self.assertEqual(prefix_range_end(b"\xff\xff"), b"\x00")


class ListOptionsTests(SynchronousTestCase):
    """Upstream C{ValidateListOptions} and C{ParseResourceVersion}."""

    def test_resource_versions(self):
        """Exact pins; NotOlderThan and legacy unpaged read latest; legacy paged pins."""
        self.assertEqual(validate_list_options("/p/", True, "", "", 0, ""), (0, "", False))
        self.assertEqual(validate_list_options("/p/", True, "5", "Exact", 0, ""), (5, "", False))
        self.assertEqual(validate_list_options("/p/", True, "5", "NotOlderThan", 0, ""),
                         (0, "", False))
        self.assertEqual(validate_list_options("/p/", True, "5", "", 0, ""), (0, "", False))
        self.assertEqual(validate_list_options("/p/", True, "5", "", 10, ""), (5, "", False))

    def test_continue(self):
        """A continue token gives its key and revision; rv -1 means latest."""
        token = encode_continue("/p/a\x00", "/p/", 7)
        self.assertEqual(validate_list_options("/p/", True, "", "", 1, token),
                         (7, "/p/a\x00", True))
        latest = encode_continue("/p/a\x00", "/p/", -1)
        self.assertEqual(validate_list_options("/p/", True, "0", "", 1, latest),
                         (0, "/p/a\x00", True))

    def test_parse_resource_version(self):
        """Only non-negative decimals parse."""
        self.assertEqual(parse_resource_version(""), 0)
        self.assertEqual(parse_resource_version("42"), 42)
        self.assertRaises(InvalidResourceVersionError, parse_resource_version, "-1")
        self.assertRaises(InvalidResourceVersionError, parse_resource_version, "1.5")


class TransformEventTests(SynchronousTestCase):
    """Upstream etcd3 watch filtering."""

    hot = SelectionPredicate(lambda o: o.get("hot") is True)

    def test_modified_everything(self):
        """Without a predicate a modification is MODIFIED at the event revision."""
        ev = transform_event(RawEvent("/k", 5, b'{"a":1}', b'{"a":0}'), EVERYTHING)
        self.assertEqual((ev.type, ev.object), ("MODIFIED",
                                                {"a": 1, "metadata": {"resourceVersion": "5"}}))

    def test_transitions(self):
        """Starts matching: ADDED; stops: DELETED with the old object; neither: nothing."""
        ev = transform_event(RawEvent("/k", 5, b'{"hot":true}', b'{"hot":false}'), self.hot)
        self.assertEqual(ev.type, "ADDED")
        ev = transform_event(RawEvent("/k", 6, b'{"hot":false}', b'{"hot":true}'), self.hot)
        self.assertEqual((ev.type, ev.object), ("DELETED",
                                                {"hot": True, "metadata": {
                                                    "resourceVersion": "6"}}))
        self.assertIsNone(transform_event(RawEvent("/k", 7, b'{}', b'{}'), self.hot))

    def test_deleted(self):
        """A delete carries the previous value at the delete's revision."""
        ev = transform_event(RawEvent("/k", 9, None, b'{"hot":true}', is_deleted=True), self.hot)
        self.assertEqual((ev.type, ev.object), ("DELETED",
                                                {"hot": True, "metadata": {
                                                    "resourceVersion": "9"}}))
