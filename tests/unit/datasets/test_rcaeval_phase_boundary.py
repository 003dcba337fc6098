"""The RCAEval export counts a sample once when two phases both read it.

A phase window is closed, so the injection instant (pre ends where during starts) is in
both the pre and the during metrics whenever it falls on the metric step. Summing both reads
doubled that row of ``data.csv`` (a memory limit of 2x at the injection time), which ranked
constant series first for methods that score the jump at the injection.
"""

from __future__ import annotations

import json

import pandas as pd

from r2act.datasets.rcaeval import distinct_samples, wide_metrics

POD = json.dumps({"pod": "cartservice-7d9f-abcde"})


def _rows(phase: str, times: list[float], value: float) -> list[dict[str, object]]:
    return [
        {"phase": phase, "ts": t, "query": "memory_limit", "labels": POD, "value": value}
        for t in times
    ]


def test_the_instant_two_phases_share_is_one_row_with_the_later_read() -> None:
    metrics = pd.DataFrame(
        _rows("during", [30.0, 45.0], 2.0) + _rows("pre", [0.0, 15.0, 30.0], 1.0)
    )  # phases out of order on purpose: the later *phase* wins, not the later row
    assert len(distinct_samples(metrics)) == 4
    data = wide_metrics(metrics, ["cartservice"])
    assert data["time"].tolist() == [0, 15, 30, 45]
    assert data["cartservice_memory-limit"].tolist() == [1.0, 1.0, 2.0, 2.0]


def test_two_pods_at_one_instant_are_still_summed() -> None:
    other = json.dumps({"pod": "cartservice-7d9f-fghij"})
    second = {"phase": "pre", "ts": 0.0, "query": "memory_limit", "labels": other, "value": 3.0}
    metrics = pd.DataFrame([*_rows("pre", [0.0], 1.0), second])
    assert wide_metrics(metrics, ["cartservice"])["cartservice_memory-limit"].tolist() == [4.0]
