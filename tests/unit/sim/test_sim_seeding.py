"""Keyed draws stay what they were: the raw store's bytes hang on every one of them."""

from __future__ import annotations

import hashlib
import random

import pytest

from r2act.cluster.sim.seeding import Reseeder, key_int, rng, unit


def _reference(seed: int, *parts: object) -> int:
    """The definition: BLAKE2b-64 (big-endian) of ``str`` of the seed and parts, ``|``-joined."""
    text = "|".join(str(x) for x in (seed, *parts))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big")


@pytest.mark.parametrize(
    "parts",
    [(), ("logs",), ("logs", "frontend-7d9f8c6b5-x2x4z", 176722590, 1), ("bg-cpu", ("p", 0, 1.5))],
)
def test_key_int_hashes_the_documented_text(parts: tuple[object, ...]) -> None:
    assert key_int(42, *parts) == _reference(42, *parts)
    assert key_int(43, *parts) != key_int(42, *parts)
    assert unit(42, *parts) == _reference(42, *parts) / 2**64


def test_a_pinned_key_keeps_its_value() -> None:
    # a change here changes every simulated byte: re-record tests/identity on purpose
    assert key_int(7, "logs", "cart-1", 3, 0) == _reference(7, "logs", "cart-1", 3, 0)
    assert key_int(7, "logs", "cart-1", 3, 0) == 0x033F61B0EDCBBF73


def test_the_reseeder_draws_what_a_fresh_generator_of_the_key_draws() -> None:
    draws = Reseeder(42, "bg-net")
    picks = random.Random(1)
    for _ in range(200):
        key = ("container_network_receive_bytes_total", "pod-a", picks.random() * 1e9)
        fresh = rng(42, "bg-net", key)
        reused = draws(key)
        # each leaves a Box-Muller value pending, which the next key must not inherit
        expected = [fresh.random(), fresh.gauss(0.0, 1.0), fresh.gauss(3.0, 2.0), fresh.gauss()]
        assert [
            reused.random(),
            reused.gauss(0.0, 1.0),
            reused.gauss(3.0, 2.0),
            reused.gauss(),
        ] == (expected)
