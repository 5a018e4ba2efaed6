"""
Tests for L{kubetwist.apimachinery.meta}.
"""

import random
import re

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.apimachinery.meta import (
    generate_name,
    human_duration,
    new_uid,
    now_rfc3339,
    parse_rfc3339,
    short_human_duration,
    translate_timestamp_since,
)


class MetaTests(SynchronousTestCase):
    """UIDs, timestamps and generated names."""

    def test_uid(self):
        """UIDs are distinct version-4 UUID strings."""
        u = new_uid()
        self.assertRegex(u,
                         r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")
        self.assertNotEqual(u, new_uid())

    def test_now(self):
        """The injected clock is formatted in UTC at seconds precision."""
        clock = Clock()
        clock.advance(1704164645.9)
        self.assertEqual(now_rfc3339(clock), "2024-01-02T03:04:05Z")

    def test_parse(self):
        """RFC 3339 with offsets and fractions."""
        self.assertEqual(parse_rfc3339("2024-01-02T03:04:05Z"), 1704164645)
        self.assertEqual(parse_rfc3339("2024-01-02T04:04:05+01:00"), 1704164645)
        self.assertRaises(ValueError, parse_rfc3339, "yesterday")

    def test_generate_name(self):
        """Base plus five characters from upstream's alphabet; long bases cut to 58."""
        name = generate_name("web-", random.Random(1))
        self.assertRegex(name, r"^web-[bcdfghjklmnpqrstvwxz2456789]{5}$")
        long = generate_name("a" * 70, random.Random(1))
        self.assertEqual(len(long), 63)
        self.assertTrue(long.startswith("a" * 58))
        self.assertIsNotNone(re.fullmatch(r"a{58}[bcdfghjklmnpqrstvwxz2456789]{5}", long))


class DurationTests(SynchronousTestCase):
    """C{HumanDuration} as in AGE columns."""

    def test_human_duration(self):
        """Each band of upstream's table."""
        m, h, d, y = 60, 3600, 86400, 365 * 86400
        cases = [
            (-2, "<invalid>"), (-1.5, "0s"), (0, "0s"), (59, "59s"), (119, "119s"),
            (2 * m, "2m"), (2 * m + 3, "2m3s"), (9 * m + 59, "9m59s"), (10 * m + 5, "10m"),
            (179 * m, "179m"), (3 * h, "3h"), (3 * h + 4 * m, "3h4m"), (8 * h + 30 * m, "8h"),
            (47 * h, "47h"), (2 * d, "2d"), (2 * d + 3 * h, "2d3h"), (8 * d, "8d"),
            (729 * d, "729d"), (2 * y, "2y"), (3 * y + 45 * d, "3y45d"), (8 * y + 100 * d, "8y"),
        ]
        for seconds, expected in cases:
            self.assertEqual(human_duration(seconds), expected, seconds)

    def test_short_human_duration(self):
        """The short form keeps one unit."""
        self.assertEqual(
            [short_human_duration(s) for s in (59, 61, 3 * 3600, 2 * 86400, 400 * 86400)],
            ["59s", "1m", "3h", "2d", "1y"],
        )

    def test_translate_timestamp_since(self):
        """Missing timestamps are C{<unknown>}."""
        self.assertEqual(translate_timestamp_since(None, 0), "<unknown>")
        self.assertEqual(translate_timestamp_since("2024-01-02T03:04:05Z", 1704164645 + 125),
                         "2m5s")
