"""Shuffle sharding and fair queuing of one priority level (upstream queueset.go)."""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from kubetwist.flowcontrol.queueset import QueueSet, QueuingConfig
from kubetwist.flowcontrol.shufflesharding import Dealer, required_entropy_bits


class DealerTests(SynchronousTestCase):
    def test_deal(self) -> None:
        """Upstream's Deal: remainders of successive divisions, shifted past earlier cards
        (worked by hand: 100 over a deck of 8, hand of 3)."""
        self.assertEqual(Dealer(8, 3).deal(100), [4, 6, 1])
        for h in (0, 1, 2 ** 64 - 1, 123456789):
            hand = Dealer(128, 6).deal(h)
            self.assertEqual(len(set(hand)), 6)
            self.assertTrue(all(0 <= c < 128 for c in hand))
        self.assertEqual(sorted(Dealer(4, 4).deal(7)), [0, 1, 2, 3])

    def test_limits(self) -> None:
        """Upstream NewDealer's errors and RequiredEntropyBits."""
        self.assertEqual(required_entropy_bits(1024, 6), 60)
        self.assertEqual(required_entropy_bits(512, 8), 72)
        for deck, hand, msg in [
            (-100, 8, "deckSize -100 or handSize 8 is not positive"),
            (100, 0, "deckSize 100 or handSize 0 is not positive"),
            (100, 101, "handSize 101 is greater than deckSize 100"),
            (512, 8, "required entropy bits of deckSize 512 and handSize 8 is greater than 60"),
        ]:
            e = self.assertRaises(ValueError, Dealer, deck, hand)
            self.assertEqual(str(e), msg)


class QueueSetTests(SynchronousTestCase):
    def setUp(self) -> None:
        self.clock = Clock()

    def qs(self, queues: int, limit: int, hand: int = 1, length: int = 1) -> QueueSet:
        return QueueSet(self.clock, QueuingConfig("pl", queues, hand, length), limit)

    def test_exempt(self) -> None:
        """Exempt: everything executes, counted."""
        qs = self.qs(-1, 0)
        reqs = [qs.start_request() for _ in range(5)]
        self.assertTrue(all(r.executing for r in reqs))
        self.assertEqual(qs.executing, 5)
        for r in reqs:
            r.finish()
            r.finish()
        self.assertTrue(qs.is_idle())

    def test_reject(self) -> None:
        """Reject: seats up to the limit, then None; a finished request frees its seat; a
        request wider than the limit runs only alone."""
        qs = self.qs(0, 2)
        a, b = qs.start_request(), qs.start_request()
        self.assertIsNone(qs.start_request())
        a.finish()
        c = qs.start_request()
        self.assertTrue(c.executing)
        self.assertEqual((qs.executing, qs.rejected, qs.dispatched), (2, 1, 3))
        b.finish()
        c.finish()
        wide = qs.start_request(seats=5)
        self.assertTrue(wide.executing)
        self.assertIsNone(qs.start_request(seats=5))
        zero = self.qs(0, 0)
        self.assertTrue(zero.start_request().executing)
        self.assertIsNone(zero.start_request())

    def test_queue_length_limit(self) -> None:
        """A queue takes queueLengthLimit waiters while every seat is busy; the next is
        rejected; waiters run in order as seats free (announced on the next turn)."""
        qs = self.qs(1, 1, length=2)
        running = qs.start_request()
        w1, w2 = qs.start_request(), qs.start_request()
        self.assertIsNone(qs.start_request())
        self.assertEqual((qs.waiting, w1.state), (2, "waiting"))
        results: list = []
        w1.wait().addCallback(results.append)
        running.finish()
        self.assertEqual((w1.state, results), ("executing", []))
        self.clock.advance(0)
        self.assertEqual(results, [True])
        w1.finish()
        self.assertTrue(w2.executing)

    def test_cancel(self) -> None:
        """A waiter that gives up leaves its queue and counts as rejected; cancelling an
        executing request does nothing."""
        qs = self.qs(1, 1, length=5)
        running = qs.start_request()
        waiter = qs.start_request()
        results: list = []
        waiter.wait().addCallback(results.append)
        waiter.cancel()
        running.cancel()
        self.clock.advance(0)
        self.assertEqual((results, qs.waiting, qs.timed_out, qs.rejected, running.state),
                         ([False], 0, 1, 1, "executing"))
        running.finish()
        self.assertTrue(qs.is_idle())

    def test_shuffle_sharding_spreads_flows(self) -> None:
        """Each flow joins the least loaded queue of its hand: two flows whose hands share
        no queue never wait behind each other."""
        qs = self.qs(8, 1, hand=2, length=10)
        blocker = qs.start_request(hash_value=0)
        hand_a = qs.dealer.deal(0)
        hash_b = next(h for h in range(1, 100) if not set(qs.dealer.deal(h)) & set(hand_a))
        hand_b = qs.dealer.deal(hash_b)
        a = [qs.start_request(hash_value=0) for _ in range(4)]
        b = qs.start_request(hash_value=hash_b)
        self.assertIn(b.queue.index, hand_b)
        self.assertEqual({r.queue.index for r in a}, set(hand_a))
        self.assertEqual(b.queue.waiting[0], b)
        blocker.finish()
        self.assertTrue(a[0].executing or b.executing)

    def test_fair_dispatch_between_flows(self) -> None:
        """Fair queuing: with one seat, a heavy flow (many waiters in its queue) and a light
        one (one waiter) alternate; the light flow is not served last."""
        qs = self.qs(2, 1, hand=1, length=10)
        heavy_hash = next(h for h in range(100) if qs.dealer.deal(h) == [0])
        light_hash = next(h for h in range(100) if qs.dealer.deal(h) == [1])
        running = qs.start_request(hash_value=heavy_hash)
        heavy = [qs.start_request(hash_value=heavy_hash) for _ in range(5)]
        light = qs.start_request(hash_value=light_hash)
        order = []
        current = running
        for _ in range(7):
            self.clock.advance(0.01)
            current.finish()
            nxt = [r for r in heavy + [light] if r.executing]
            if not nxt:
                break
            current = nxt[0]
            order.append("light" if current is light else "heavy")
        self.assertLess(order.index("light"), 2)

    def test_reconfigure(self) -> None:
        """A larger limit dispatches waiters at once; queues grow with the config."""
        qs = self.qs(1, 1, length=5)
        qs.start_request()
        w = qs.start_request()
        qs.configure(QueuingConfig("pl", 4, 2, 5), 2)
        self.assertTrue(w.executing)
        self.assertEqual(len(qs.queues), 4)
        self.assertRaises(ValueError, qs.configure, QueuingConfig("pl", 4, 5, 5), 2)

    def test_totals_stay_consistent(self) -> None:
        """The running totals behind the virtual-time ratio equal upstream's sums over the
        queues, whatever the sequence of arrivals, dispatches, cancels and finishes."""
        import random

        rng = random.Random(11)
        qs = self.qs(16, 3, hand=4, length=3)
        live: list = []
        for _ in range(2000):
            op = rng.random()
            if op < 0.5:
                r = qs.start_request(hash_value=rng.getrandbits(64), seats=rng.choice([1, 1, 2]))
                if r is not None:
                    live.append(r)
            else:
                state = "executing" if op < 0.85 else "waiting"
                pool = [r for r in live if r.state == state]
                if pool:
                    r = rng.choice(pool)
                    live.remove(r)
                    r.finish() if state == "executing" else r.cancel()
            self.clock.advance(rng.choice([0, 0.001, 0.01]))
            active = sum(1 for q in qs.queues if not q.empty())
            seats = sum(q.seats_in_use + sum(r.seats for r in q.waiting) for q in qs.queues)
            self.assertEqual((qs._active_queues, qs._queued_seats), (active, seats))
            self.assertEqual(qs.waiting, sum(len(q.waiting) for q in qs.queues))
            self.assertEqual(qs._waiting_queues, {q for q in qs.queues if q.waiting})
            self.assertEqual([q.waiting_seats for q in qs.queues],
                             [sum(r.seats for r in q.waiting) for q in qs.queues])
            self.assertLessEqual(qs.seats_in_use, max(qs.concurrency_limit, 2))
        self.assertGreater(qs.dispatched, 100)
        self.assertGreater(qs.rejected, 10)
