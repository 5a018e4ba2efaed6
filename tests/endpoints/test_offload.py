# -*- test-case-name: tests.endpoints.test_offload -*-
"""L{kubetwist.endpoints.offload}: large requests' work on a thread pool, small ones inline."""

from __future__ import annotations

import gc
import threading

from twisted.internet import reactor
from twisted.python.threadpool import ThreadPool
from twisted.trial.unittest import TestCase

from kubetwist.endpoints import offload


class OffloadTests(TestCase):
    def setUp(self) -> None:
        pool = ThreadPool(1, 1, name="offload-test")
        pool.start()
        self.addCleanup(pool.stop)
        offload.configure(reactor, pool)
        self.addCleanup(offload.configure, None, None)

    async def test_large_on_pool(self) -> None:
        """Work for a body of THRESHOLD bytes or more runs on the pool; its result and
        errors come back on the reactor."""
        here = threading.get_ident()
        there = await offload.run(offload.THRESHOLD, threading.get_ident)
        self.assertNotEqual(there, here)
        with self.assertRaises(ZeroDivisionError):
            await offload.run(offload.THRESHOLD, lambda: 1 / 0)

    async def test_gc_paused(self) -> None:
        """The cyclic collector is paused while pool work runs, and enabled again after."""
        self.assertTrue(gc.isenabled())
        self.assertFalse(await offload.run(offload.THRESHOLD, gc.isenabled))
        self.assertTrue(gc.isenabled())
        with self.assertRaises(ZeroDivisionError):
            await offload.run(offload.THRESHOLD, lambda: 1 / 0)
        self.assertTrue(gc.isenabled())

    async def test_small_inline(self) -> None:
        """Smaller bodies, and any body without a configured pool, run inline."""
        here = threading.get_ident()
        self.assertEqual(await offload.run(offload.THRESHOLD - 1, threading.get_ident), here)
        offload.configure(None, None)
        self.assertEqual(await offload.run(offload.THRESHOLD, threading.get_ident), here)
