"""The metric background's draw keys built from parts formatted once hash the same text.

``metrics._key_text`` stands for ``str`` of a tuple key and ``Background._ws_unit`` for
``unit(seed, "bg-ws", ...)``: if either formatted one character differently, every draw of
the series would change, so each is checked against the plain form on awkward values."""

from __future__ import annotations

import math

import pytest

from r2act.cluster.sim.metric_noise import REALISTIC, Background
from r2act.cluster.sim.metrics import _key_text
from r2act.cluster.sim.seeding import Reseeder, key_int, text_int, unit

_AWKWARD: list[object] = [
    "frontend-7d9f8c6b5-x2x4z",
    "it's",
    'say "hi"',
    "back\\slash",
    "tab\there",
    "ünïcode",
    "",
    0,
    7,
    -3,
    2**70,
    1234.0,
    0.1 + 0.2,
    1e16,
    1e-7,
    -0.0,
    math.inf,
    True,
]


@pytest.mark.parametrize("size", [2, 3, 4])
def test_key_text_is_str_of_the_tuple(size: int) -> None:
    for start in range(len(_AWKWARD)):
        key = tuple(_AWKWARD[(start + i * 5) % len(_AWKWARD)] for i in range(size))
        assert _key_text(*map(repr, key)) == str(key)


def test_a_reseeder_draws_the_same_from_the_text_as_from_the_tuple() -> None:
    key = ("container_network_receive_bytes_total", "cart-5c9b-q2w8r", 1815.0)
    text = _key_text(*map(repr, key))
    from_text = Reseeder(42, "bg-net")(text)
    draws = [from_text.random(), from_text.gauss(0.0, 1.0), from_text.gauss(0.0, 1.0)]
    from_tuple = Reseeder(42, "bg-net")(key)
    assert draws == [from_tuple.random(), from_tuple.gauss(0.0, 1.0), from_tuple.gauss(0.0, 1.0)]


def test_text_int_is_key_int_of_the_joined_text() -> None:
    for parts in [(), ("bg-ws",), ("bg-ws", "p-1", 0, 12.0), ("bg-cpu", ("p", 0, 1.5))]:
        assert text_int("|".join(map(str, (42, *parts)))) == key_int(42, *parts)


def test_ws_unit_is_the_plain_unit_draw_also_after_its_cache_is_cleared() -> None:
    background = Background(REALISTIC, 42)
    pods = ["web-7d9f-x2x4z", "it's", "ünïcode"]
    for n in range(4200):  # past the 4096 bound: the cache is cleared and refilled
        pod, instance, bucket = pods[n % 3], n // 3, float(n % 50)
        assert background._ws_unit(pod, instance, bucket) == unit(
            42, "bg-ws", pod, instance, bucket
        )
    assert len(background._ws_keys) <= 4097
    assert background._ws_unit("web-7d9f-x2x4z", 0, 3.0) == unit(
        42, "bg-ws", "web-7d9f-x2x4z", 0, 3.0
    )
