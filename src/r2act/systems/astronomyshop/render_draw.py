"""Per-occurrence value generators: a pure function of the pod and the instant.

One call may be framed twice (the pod's stdout line, the collector's record), by two
renderers the engine calls apart; each draws the occurrence's values from ``occurrence``
so both print the same user, order and trace ids. Seeding a Mersenne Twister costs its
whole state per line, so the generator is a BLAKE2b stream of the key instead.
"""

from __future__ import annotations

import random
from hashlib import blake2b


class Draw(random.Random):
    """A generator whose bits are a BLAKE2b stream of one key: seeding it costs one hash,
    where seeding the Mersenne Twister costs its whole state (a hot path: one per line)."""

    def __init__(self, key: bytes) -> None:
        self._key, self._blocks = key, 0
        self._pool, self._left = 0, 0

    def seed(self, a: object = None, version: int = 2) -> None:
        """Unused: a draw is keyed once, at construction."""

    def getrandbits(self, k: int) -> int:
        while self._left < k:
            block = blake2b(self._key + self._blocks.to_bytes(4), digest_size=64).digest()
            self._pool |= int.from_bytes(block) << self._left
            self._left += 512
            self._blocks += 1
        out = self._pool & ((1 << k) - 1)
        self._pool >>= k
        self._left -= k
        return out

    def random(self) -> float:
        return self.getrandbits(53) * _UNIT


_UNIT = 2.0**-53


class Sample(Draw):
    """The draw a renderer makes once, when it is built, to count an occurrence's lines: a
    stateful speech (a running count) does not advance on it."""


def sample(pod: str) -> random.Random:
    """The generator of the sample occurrence a renderer counts its lines on."""
    return Sample(f"{pod}|sample".encode())


def occurrence(pod: str, ts: float) -> random.Random:
    """The generator of one occurrence's values: a pure function of the pod and the time,
    so every framing of the occurrence draws the same values."""
    return Draw(f"{pod}|{ts!r}".encode())
