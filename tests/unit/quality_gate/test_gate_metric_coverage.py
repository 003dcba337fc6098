"""Metric coverage holes: a collection gap is rejected, a series born mid-window is not.

``summarise_metrics`` reduces a phase's samples to per-query holes and ``check_metrics``
turns a hole longer than ``GAP_STEPS`` scrape steps into ``METRIC_GAPS``. These tests build
the samples a scrape would return and run both, so each direction can fail on its own.
"""

from __future__ import annotations

import pyarrow as pa

from r2act.quality_gate.checks import GAP_STEPS, check_metrics
from r2act.quality_gate.evidence import IncidentEvidence, PhaseEvidence, summarise_metrics
from r2act.schema import PHASES

STEP = 15.0
WINDOW = (1000.0, 1300.0)
LEAK = "(?i)r2act-never-seen"


def _table(series: dict[str, list[float]]) -> pa.Table:
    rows = [(t, q) for q, times in series.items() for t in times]
    return pa.table(
        {
            "ts": pa.array([t for t, _ in rows], pa.float64()),
            "query": pa.array([q for _, q in rows], pa.string()),
            "labels": pa.array(['{"pod": "a"}'] * len(rows), pa.string()),
            "value": pa.array([1.0] * len(rows), pa.float64()),
        }
    )


def _scrapes(start: float, end: float) -> list[float]:
    """Scrape times every ``STEP`` in [start, end]."""
    count = int((end - start) // STEP) + 1
    return [start + i * STEP for i in range(count)]


def _gaps(during: dict[str, list[float]]) -> list[str]:
    """The METRIC_GAPS problems' queries of an incident whose during window holds
    ``during`` and whose other phases are fully covered."""
    full = {q: _scrapes(*WINDOW) for q in during}
    phases = {}
    for phase in PHASES:
        p = PhaseEvidence(phase=phase, present=True, window=WINDOW)
        p.metrics = summarise_metrics(_table(during if phase == "during" else full), WINDOW, LEAK)
        phases[phase] = p
    evidence = IncidentEvidence("i", True, None, None, None, phases)
    return [str(p.evidence["query"]) for p in check_metrics(evidence) if p.code == "METRIC_GAPS"]


def test_a_series_born_mid_window_is_no_gap() -> None:
    """``last_terminated_reason`` appears at the first OOM kill, 68 s into the window."""
    during = {"cpu": _scrapes(*WINDOW), "last_terminated_reason": _scrapes(1068.0, WINDOW[1])}
    assert _gaps(during) == []


def test_a_series_that_ends_mid_window_is_no_gap() -> None:
    during = {"cpu": _scrapes(*WINDOW), "old_pod_memory": _scrapes(WINDOW[0], 1100.0)}
    assert _gaps(during) == []


def test_a_query_missing_in_the_middle_is_a_gap() -> None:
    times = _scrapes(*WINDOW)
    middle = [t for t in times if not 1060.0 < t < 1160.0]
    assert _gaps({"cpu": times, "memory": middle}) == ["memory"]


def test_a_stretch_no_query_covers_is_a_gap_at_an_edge_too() -> None:
    """The scrape answered nothing for the window's first 100 s: every query starts late."""
    late = _scrapes(1100.0, WINDOW[1])
    assert _gaps({"cpu": late, "memory": late}) != []


def test_a_stretch_no_query_covers_in_the_middle_is_a_gap() -> None:
    times = [t for t in _scrapes(*WINDOW) if not 1060.0 < t < 1160.0]
    assert _gaps({"cpu": times, "memory": times}) != []


def test_a_series_born_after_a_collection_gap_still_shows_the_gap() -> None:
    """The union of sample times has the hole even though the newborn query never saw it."""
    times = [t for t in _scrapes(*WINDOW) if not 1150.0 < t < 1250.0]
    newborn = [t for t in times if t >= 1250.0]
    summary = summarise_metrics(_table({"cpu": times, "born": newborn}), WINDOW, LEAK)
    assert summary.holes["born"] > GAP_STEPS * STEP
