"""Whole-trace sampling decides from the trace id alone, at the rate asked."""

from __future__ import annotations

import random

from r2act.schema.traces import keeps_trace


def _ids(count: int) -> list[str]:
    draw = random.Random(7)
    return [f"{draw.getrandbits(128):032x}" for _ in range(count)]


def test_the_kept_share_follows_the_rate() -> None:
    ids = _ids(20_000)
    for rate in (0.1, 0.5):
        kept = sum(keeps_trace(trace_id, rate) for trace_id in ids) / len(ids)
        assert abs(kept - rate) < 0.02


def test_the_bounds_keep_all_or_none() -> None:
    ids = _ids(100)
    assert all(keeps_trace(trace_id, 1.0) for trace_id in ids)
    assert not any(keeps_trace(trace_id, 0.0) for trace_id in ids)


def test_a_lower_rate_keeps_a_subset_of_a_higher_one() -> None:
    ids = _ids(5_000)
    low = {trace_id for trace_id in ids if keeps_trace(trace_id, 0.2)}
    high = {trace_id for trace_id in ids if keeps_trace(trace_id, 0.6)}
    assert low < high


def test_only_the_lower_64_bits_decide() -> None:
    lower = "0000000000000001"
    assert keeps_trace("f" * 16 + lower, 0.01) == keeps_trace("0" * 16 + lower, 0.01)
    assert keeps_trace("0" * 16 + lower, 0.01)
    assert not keeps_trace("0" * 16 + "f" * 16, 0.01)
