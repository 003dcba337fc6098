"""Locust's ``# fails`` cells known by integers print what the float formatting prints.

``locust_table`` looks a row's cell up by its fails and its percentage's hundredths, worked
out in integers (``loadgen._EXACT_REQS``), instead of formatting ``100.0 * fails / reqs``
per row; these tests hold that to the float's text everywhere it is used, ties to even
included, and a whole table to the one the float alone writes.
"""

from __future__ import annotations

import random

import pytest

from r2act.cluster.sim import loadgen
from r2act.cluster.sim.loadgen import _fails, fails_cell
from r2act.schema import LogLine, NoiseLevel

from .test_sim_locust_counters import _Logger, _scene


def test_every_cell_of_small_counts_is_the_floats() -> None:
    loadgen._CELLS.clear()
    for reqs in range(0, 700):
        for fails in range(0, reqs + 1):
            assert fails_cell(fails, reqs) == _fails(fails, reqs), (fails, reqs)
    # looked up again, from the cells kept
    for reqs, fails in ((8, 1), (32, 1), (400, 3), (699, 698)):
        assert fails_cell(fails, reqs) == _fails(fails, reqs)


@pytest.mark.parametrize(
    ("fails", "reqs"),
    [
        (1, 32),  # 3.125: a tie, exact in binary, rounds to even (3.12)
        (3, 32),  # 9.375 -> 9.38
        (1, 160),  # 0.625 -> 0.62
        (1, 20_000),  # 0.005: a tie in hundredths, not exact in binary
        (3, 20_000),  # 0.015
        (2**20, 2**25),  # 3.125 at large counts
        (0, 1),
        (7, 7),
        (5, 99_999_999),  # just below the integers' bound
        (5, 100_000_000),  # at it: left to the float
        (-1, 10),  # not a count: left to the float
    ],
)
def test_ties_bounds_and_odd_counts_are_the_floats(fails: int, reqs: int) -> None:
    assert fails_cell(fails, reqs) == _fails(fails, reqs)


def test_large_random_counts_are_the_floats() -> None:
    r = random.Random(7)
    for _ in range(200_000):
        reqs = int(10 ** (r.random() * 8))
        fails = int(reqs * r.random() ** 3)
        assert fails_cell(fails, reqs) == _fails(fails, reqs), (fails, reqs)


def test_a_table_is_the_one_the_float_alone_writes(monkeypatch: pytest.MonkeyPatch) -> None:
    """The cells inlined in ``locust_table`` against the float's (integers switched off)."""

    def table() -> list[str]:
        loadgen._LAST.clear()
        out: list[LogLine] = []
        scene = _scene(3.7, 0.013, NoiseLevel.HEAVY)
        ticks = [1e9 + 1000.0 + 2.0 * k for k in range(400)]
        loadgen.locust_table(_Logger(), scene, ticks, 1e9, out, failed=lambda _s, _t: {"/": 9.0})
        return [line.line for line in out]

    fast = table()
    monkeypatch.setattr(loadgen, "_EXACT_REQS", 0)
    loadgen._CELLS.clear()
    plain = table()
    assert fast == plain
    assert any("(0.00%)" not in line and "%)" in line for line in plain)  # some fail
