# -*- test-case-name: tests.flowcontrol.test_queueset -*-
"""
Shuffle sharding: upstream C{k8s.io/apiserver/pkg/util/shufflesharding}.

A L{Dealer} deals a hand of C{hand_size} distinct cards out of a deck of C{deck_size}, using a
64-bit hash value as the source of entropy, exactly as upstream's C{Deal} (so a flow lands in
the same queues as it would upstream).
"""

from __future__ import annotations

import math

__all__ = ["MAX_HASH_BITS", "Dealer", "required_entropy_bits"]

#: Upstream C{MaxHashBits}.
MAX_HASH_BITS = 60


def required_entropy_bits(deck_size: int, hand_size: int) -> int:
    """Upstream C{RequiredEntropyBits}: C{ceil(log2(deck_size) * hand_size)}."""
    return int(math.ceil(math.log2(deck_size) * hand_size))


class Dealer:
    """
    @ivar deck_size: the number of cards (queues).
    @ivar hand_size: the cards dealt per hash value.
    """

    def __init__(self, deck_size: int, hand_size: int) -> None:
        """
        @raise ValueError: upstream C{NewDealer}'s conditions (sizes not positive, hand larger
            than deck, deck above C{1<<26}, more than L{MAX_HASH_BITS} bits needed).
        """
        if deck_size <= 0 or hand_size <= 0:
            raise ValueError(f"deckSize {deck_size} or handSize {hand_size} is not positive")
        if hand_size > deck_size:
            raise ValueError(f"handSize {hand_size} is greater than deckSize {deck_size}")
        if deck_size > 1 << 26:
            raise ValueError(f"deckSize {deck_size} is impractically large")
        if required_entropy_bits(deck_size, hand_size) > MAX_HASH_BITS:
            raise ValueError(f"required entropy bits of deckSize {deck_size} and handSize "
                             f"{hand_size} is greater than {MAX_HASH_BITS}")
        self.deck_size = deck_size
        self.hand_size = hand_size

    def deal(self, hash_value: int) -> list[int]:
        """The hand for C{hash_value} (an unsigned 64-bit integer), in upstream's order."""
        remainders = []
        for i in range(self.hand_size):
            hash_value, r = divmod(hash_value, self.deck_size - i)
            remainders.append(r)
        hand = []
        for i in range(self.hand_size):
            card = remainders[i]
            for j in range(i, 0, -1):
                if card >= remainders[j - 1]:
                    card += 1
            hand.append(card)
        return hand
