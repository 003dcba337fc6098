"""The load generator's baseline failures: resets of its fresh connection per request."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.background import (
    NOISE_FACTOR,
    RESET_PER_CONNECTION,
    ResetColumn,
    connection_resets,
)
from r2act.schema import NoiseLevel, TimeWindow, Topology
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES

AGGREGATED = re.compile(r"^\s+Aggregated\s+(\d+)\s+(\d+)\(")


def _aggregated(topology: Topology, tmp_path: Path, noise: NoiseLevel) -> list[tuple[int, int]]:
    """(requests, failures) of every Aggregated row of a healthy ten minutes."""
    cluster = SimulatedCluster(
        tmp_path / noise.value, users=27, glitches=NO_GLITCHES, noise=noise, topology=topology
    )
    start = cluster.clock.now()
    cluster.clock.sleep(660)
    rows = []
    for batch in cluster.logs(TimeWindow(start + 30, start + 630)):
        for line in batch:
            found = AGGREGATED.match(line.line)
            if line.service == "loadgenerator" and found:
                rows.append((int(found.group(1)), int(found.group(2))))
    assert rows
    return rows


T0 = 1_784_000_000.0
"""A virtual start time like the ones the collector's fresh systems have."""


def _resets(elapsed: float, noise: NoiseLevel = NoiseLevel.REALISTIC, start: float = T0) -> int:
    return connection_resets(1, "lg", "GET /", 6.0, started=start, now=start + elapsed, noise=noise)


def test_resets_follow_their_rate_and_never_count_down() -> None:
    rate = 6.0
    seconds = 2e6
    counts = [_resets(t) for t in (0.0, 1e5, 1e6, seconds)]
    assert counts == sorted(counts)
    expected = rate * RESET_PER_CONNECTION * seconds
    assert abs(counts[-1] - expected) < 5 * expected**0.5  # Poisson: within five sigma
    heavy = _resets(seconds, NoiseLevel.HEAVY)
    factor = NOISE_FACTOR[NoiseLevel.HEAVY]
    assert abs(heavy - factor * expected) < 5 * (factor * expected) ** 0.5
    assert _resets(seconds, NoiseLevel.NONE) == 0
    # Keyed draws: asking again, or in another order, reads the same resets.
    assert counts[1] == _resets(1e5)
    # One process on the clock: a longer stretch is the sum of its parts.
    earlier = T0 - 5e5
    assert _resets(6e5, start=earlier) == _resets(5e5, start=earlier) + _resets(1e5)


def test_a_column_asked_table_after_table_reads_the_one_off_counts() -> None:
    """A stats table's reset column (one process held, the count before the start kept)
    gives each tick the count ``connection_resets`` gives it alone, across block edges, a
    restart of the load generator, and ticks before its start. A rate this high makes
    resets in most 10 s tables, so the in-block counting is exercised, not only zeros."""
    rate, noise = 5e3, NoiseLevel.HEAVY
    column = ResetColumn(7, "lg", "GET /x", rate, noise)
    starts = [T0, T0, T0 + 7_000.0, T0 + 7_000.0, T0 - 3e5]
    edge = (int(T0 / 3_600) + 2) * 3_600.0  # a block boundary inside one table
    tables = [[edge - 4, edge - 2, edge, edge + 2, edge + 4]]
    tables += [[T0 + k * 2.0 for k in range(-2, 3)], [T0 + 7_000.0 + k for k in (-4, -2, 0, 8)]]
    tables += [[T0 + 40_000.0 + 2.0 * k for k in range(5)], [T0 + 90_000.0, T0 + 90_002.0]]
    for started, ticks in zip(starts, tables, strict=True):
        one_off = [
            connection_resets(7, "lg", "GET /x", rate, started=started, now=t, noise=noise)
            for t in ticks
        ]
        assert column.at(started, ticks) == one_off
    assert column.at(T0, [T0 + 40_000.0])[0] > 0
    assert ResetColumn(7, "lg", "GET /x", rate, NoiseLevel.NONE).at(T0, [T0 + 9e5]) == [0]


def test_windows_at_different_clock_times_see_their_own_resets() -> None:
    """Every incident's fresh system starts its load generator the same time before the
    incident; the resets of a window must still differ between incidents (a real
    cluster's do), so they follow the clock, not the time since the load generator started."""
    day = 86_400.0
    windows = [
        connection_resets(
            1, "lg", "GET /", 6.0, started=s, now=s + 3_600, noise=NoiseLevel.REALISTIC
        )
        for s in (T0 + day + k * 4_000.0 for k in range(40))
    ]
    assert len(set(windows)) > 1
    mean = sum(windows) / len(windows)
    assert abs(mean - 6.0 * RESET_PER_CONNECTION * 3_600) < 1.0


def test_a_healthy_window_shows_rare_failures_unless_noise_is_none(tmp_path: Path) -> None:
    real = _aggregated(ONLINE_BOUTIQUE, tmp_path, NoiseLevel.REALISTIC)
    reqs, fails = real[-1]
    assert fails > 0
    # The share is the reset rate's, not a fault's: well under a tenth of a percent.
    assert fails / reqs < 10 * RESET_PER_CONNECTION
    assert [f for _, f in real] == sorted(f for _, f in real)  # cumulative counters
    clean = _aggregated(ONLINE_BOUTIQUE, tmp_path, NoiseLevel.NONE)
    assert {f for _, f in clean} == {0}
    # Kept-alive connections (stock Locust) have no per-request churn to reset.
    reuse = ONLINE_BOUTIQUE.model_copy(update={"load_connection_reuse": True})
    assert {f for _, f in _aggregated(reuse, tmp_path / "reuse", NoiseLevel.REALISTIC)} == {0}


def test_the_reset_is_one_of_fasthttpusers_failures(reference_dir: Path) -> None:
    source = reference_dir / "locust-2.43.0" / "locust" / "contrib" / "fasthttp.py"
    if not source.is_file():
        pytest.skip(f"{source} is not in the reference folder")
    lines = source.read_text().splitlines()
    block = "\n".join(lines[78:87])  # L79-87, cited by background.RESET_PER_CONNECTION
    assert block.startswith("FAILURE_EXCEPTIONS = (")
    assert "ConnectionResetError" in block
    assert "HTTPConnectionClosed" in block
    assert 'request_meta["exception"] = e' in lines[301]  # L302


def test_no_high_cpu_warning_is_rendered_without_its_source(reference_dir: Path) -> None:
    """Locust's high-CPU warning lives in runners.py, which the reference folder lacks, so
    the simulator renders no such line (docs/simulator.md, "Background")."""
    folder = reference_dir / "locust-2.43.0"
    if not folder.is_dir():
        pytest.skip(f"{folder} is not in the reference folder")
    texts = [p.read_text(errors="replace") for p in folder.rglob("*.py")]
    assert not any("CPU usage" in text for text in texts)
    from r2act.cluster.sim import texts as sim_texts

    assert "CPU usage" not in Path(sim_texts.__file__).read_text()


def _drawn_by_hand(key: tuple[int, str, str], lam: float, lo: float, hi: float) -> int:
    """Resets in (lo, hi] from the keyed draws themselves: per hour-long block, its count
    from its ``conn-reset`` unit (Poisson inverse transform at the block's mean) and that
    many times from its ``conn-reset-at`` units; nothing kept between calls."""
    import math

    from r2act.cluster.sim.background import RESET_BLOCK_S
    from r2act.cluster.sim.seeding import unit

    seed, pod, entry = key
    total = 0
    for b in range(math.floor(lo / RESET_BLOCK_S), math.floor(hi / RESET_BLOCK_S) + 1):
        u, mean = unit(seed, "conn-reset", pod, entry, b), lam * RESET_BLOCK_S
        n, term = 0, math.exp(-mean)
        cdf = term
        while cdf < u:
            n += 1
            term *= mean / n
            cdf += term
        times = [
            (b + unit(seed, "conn-reset-at", pod, entry, b, i)) * RESET_BLOCK_S for i in range(n)
        ]
        total += sum(lo < t <= hi for t in times)
    return total


def test_a_process_drawn_again_at_another_rate_or_start_counts_its_own_draws() -> None:
    """The process keeps its blocks' unit draws across rates (a scene that changes a
    route's rate draws the process again) and begins at the start it is asked from: the
    counts are those the keyed draws give by hand, whatever was asked before."""
    noise = NoiseLevel.HEAVY
    factor = RESET_PER_CONNECTION * NOISE_FACTOR[noise]
    asks = [
        (200.0, T0, 9e3),
        (400.0, T0, 9e3),
        (200.0, T0, 2e4),
        (200.0, T0 - 8e3, 9e3),
        (400.0, T0 + 5e3, 4e3),
    ]
    for rate, started, elapsed in asks:
        got = connection_resets(
            3, "lg-x", "GET /y", rate, started=started, now=started + elapsed, noise=noise
        )
        assert got == _drawn_by_hand(
            (3, "lg-x", "GET /y"), rate * factor, started, started + elapsed
        )
        assert got > 0
