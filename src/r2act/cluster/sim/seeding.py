"""Seeded randomness keyed by *what* is generated, not by *when* it is generated.

Every random choice of the simulator is drawn from a generator (or a unit draw) derived
from the cluster seed and a key such as ``("logs", pod, bucket)``. Generation order
therefore never matters: the same seed and the same history give the same bytes, whether
a window is read once, twice, or after another window.
"""

from __future__ import annotations

import hashlib
import random


def key_int(seed: int, *parts: object) -> int:
    """A stable 64-bit integer from the seed and the key parts (not Python's salted hash)."""
    text = "|".join([str(seed), *(str(p) for p in parts)])
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


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
