"""``math.trunc`` in the hot renderers gives the integer ``int()`` gives, so the same text.

The renderers and time formatters truncate floats with ``math.trunc`` (cheaper per call
than the ``int`` type's constructor); these tests hold it to ``int()`` on awkward floats
and the time formats to their ``int()`` definitions over many instants.
"""

from __future__ import annotations

import random
import sys
from datetime import UTC, datetime
from math import trunc

import pytest

from r2act.systems.logformats import iso_millis, locust_time, redis_time, rfc3339nano, uuid1_text

AWKWARD = [
    0.0,
    -0.0,
    0.9999999999999999,
    -0.9999999999999999,
    1.5,
    -1.5,
    2.0**52 + 0.5,
    2.0**53,
    2.0**63,
    2.0**64 + 2.0**12,
    1e300,
    -1e300,
    5e-324,
    sys.float_info.max,
    1_767_225_608.999999,
    1_767_225_608.140379 * 1e9,
]


@pytest.mark.parametrize("x", AWKWARD)
def test_trunc_is_int_on_awkward_floats(x: float) -> None:
    assert trunc(x) == int(x)
    assert type(trunc(x)) is int


def test_trunc_is_int_on_scaled_draws() -> None:
    r = random.Random(3)
    for _ in range(100_000):
        u = r.random()
        for n in (2, 9, 64, 390, 1500, 6000):
            assert trunc(u * n) == int(u * n)


def _rfc(ts: float) -> str:
    sec = int(ts)
    prefix = datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    frac = f"{int((ts - sec) * 1e9):09d}".rstrip("0")
    return f"{prefix}.{frac}Z" if frac else f"{prefix}Z"


def _millis(ts: float, layout: str, sep: str) -> str:
    sec = int(ts)
    return f"{datetime.fromtimestamp(sec, UTC).strftime(layout)}{sep}{int((ts - sec) * 1000):03d}"


def test_time_formats_are_their_int_definitions() -> None:
    r = random.Random(5)
    instants = [1_767_225_608.0, 1_767_225_608.5, 1_767_225_608.999999999, 1_767_225_609.1]
    instants += [1.7e9 + 4e8 * r.random() for _ in range(20_000)]
    for ts in instants:
        assert rfc3339nano(ts) == _rfc(ts)
        assert iso_millis(ts) == _millis(ts, "%Y-%m-%dT%H:%M:%S", ".") + "Z"
        assert redis_time(ts) == _millis(ts, "%d %b %Y %H:%M:%S", ".")
        assert locust_time(ts) == _millis(ts, "%Y-%m-%d %H:%M:%S", ",")


def test_version_one_uuids_keep_the_int_tick_count() -> None:
    node = "0a1b2c3d4e5f"
    for seed in range(200):
        ts = 1.7e9 + seed * 1234.5678901
        ticks = int(ts * 1e7) + 0x01B21DD213814000
        text = uuid1_text(random.Random(seed), ts, node)
        low, mid, high = text.split("-")[:3]
        assert (int(low, 16), int(mid, 16), int(high[1:], 16)) == (
            ticks & 0xFFFFFFFF,
            (ticks >> 32) & 0xFFFF,
            (ticks >> 48) & 0x0FFF,
        )
