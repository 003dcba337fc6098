"""Seeded randomness keyed by *what* is generated, not by *when* it is generated.

Every random choice of the simulator is drawn from a generator (or a unit draw) derived
from the cluster seed and a key such as ``("logs", pod, bucket)``. Generation order
therefore never matters: the same seed and the same history give the same bytes, whether
a window is read once, twice, or after another window.
"""

from __future__ import annotations

import _random
import random
from hashlib import blake2b

_from_bytes = int.from_bytes
_seed_generator = _random.Random.seed
"""The C generator's own ``seed`` (``_random.Random.seed``), under ``random.Random.seed``'s
type checks: for an ``int`` those accept it as it is, so they are skipped in ``Reseeder``."""


def key_int(seed: int, *parts: object) -> int:
    """A stable 64-bit integer from the seed and the key parts (not Python's salted hash).

    The text hashed is ``str`` of each of them joined by ``|``, so a key's value never
    depends on how it is built (``Reseeder`` hashes the very same text)."""
    return text_int("|".join(map(str, (seed, *parts))))


def key_start(seed: int, *parts: object) -> str:
    """The text ``key_int`` hashes for a key that begins with ``parts``, up to and including
    the ``|`` before the next part: callers that keep a key's fixed start append the rest."""
    return "|".join(map(str, (seed, *parts))) + "|"


def text_int(text: str) -> int:
    """``key_int``'s value for its key text (the seed and parts already ``|``-joined), for
    callers that keep a key's fixed start and append only the part that changes."""
    return _from_bytes(blake2b(text.encode(), digest_size=8).digest(), "big")


class Reseeder:
    """``rng(seed, *prefix, key)`` for many keys of one stream, from one generator.

    Per sample, the simulator's metric background draws a few numbers from a generator of
    its own key; building a Mersenne Twister for each cost more than the sample, and
    formatting the seed and the stream's name into every key's text cost a part of the
    rest. This keeps one generator and the key text's fixed start, and re-seeds the
    generator as ``random.Random.seed`` does for an integer (the C generator's seed, then
    no Box-Muller value kept for ``gauss``): the same draws as ``rng``. The generator
    returned is valid until the next call."""

    def __init__(self, seed: int, *prefix: object) -> None:
        self._start = key_start(seed, *prefix)
        self._generator = random.Random()

    def __call__(self, key: object) -> random.Random:
        generator = self._generator
        text = self._start + str(key)
        value = _from_bytes(blake2b(text.encode(), digest_size=8).digest(), "big")
        _seed_generator(generator, value)
        generator.gauss_next = None  # type: ignore[attr-defined]
        return generator


def unit(seed: int, *parts: object) -> float:
    """A uniform draw in [0, 1) for one keyed decision (a glitch, a delay)."""
    return key_int(seed, *parts) / 2**64


def between(seed: int, low: float, high: float, *parts: object) -> float:
    """A uniform draw in [low, high) for one keyed decision."""
    return low + (high - low) * unit(seed, *parts)


def rng(seed: int, *parts: object) -> random.Random:
    """A generator for one keyed stream of draws (e.g. one pod's log lines in one bucket)."""
    return random.Random(key_int(seed, *parts))


_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
"""The alphabet Kubernetes uses for generated name suffixes (no vowels, no look-alikes)."""


def k8s_suffix(seed: int, length: int, *parts: object) -> str:
    """A Kubernetes-style random name suffix, stable for the key."""
    value = key_int(seed, *parts)
    out = []
    for _ in range(length):
        value, index = divmod(value, len(_NAME_ALPHABET))
        out.append(_NAME_ALPHABET[index])
    return "".join(out)
