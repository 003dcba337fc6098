"""The request series' numbers are pandas' group-by numbers, bit for bit (issue 26 item 3).

``datasets.requests`` derives the series with numpy group-bys (``datasets.groupby``) instead
of pandas ones, for speed; a published dataset must keep its bytes, so each aggregation is
compared here with the pandas call it replaces, on values chosen so that the order and the
method of the summation show in the last bit.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from r2act.datasets import groupby, layout, requests
from r2act.datasets.requests import QUANTILES, derive
from r2act.systems.locust import STATS_ROW

CASE = "case-0123456789ab"


def _values(rng: np.random.Generator, n: int) -> np.ndarray:
    """Values whose sums round differently in a different order or without compensation."""
    pool = np.array([0.1, 0.2, 0.3, 1e16, -1e16, 1.0, 3.3, 1e-3, 7.77, 1e8 + 0.5])
    values = rng.choice(pool, n) * rng.choice([1.0, 1.0, 3.0, 0.7], n)
    values[rng.random(n) < 0.1] = np.nan
    return values


@pytest.mark.parametrize("seed", range(5))
def test_sums_and_means_are_pandas_compensated_ones(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, groups = 4000, 300
    group = rng.integers(0, groups, n)
    values = _values(rng, n)
    total, count = groupby.kahan_sums(values, group, groups)
    frame = pd.DataFrame({"g": group, "v": values})
    expected = frame.groupby("g")["v"]
    present = np.unique(group)
    assert total[present].tobytes() == expected.sum().to_numpy().tobytes()
    with np.errstate(invalid="ignore"):
        mean = total[present] / count[present]
    assert mean.tobytes() == expected.mean().to_numpy().tobytes()


def test_a_plain_sum_would_differ_so_the_comparison_above_can_fail() -> None:
    values = np.array([1e16, 1.0, 1.0, 1.0, 1.0])
    total, _ = groupby.kahan_sums(values, np.zeros(5, dtype=np.int64), 1)
    assert total[0] == pd.Series(values).groupby([0] * 5).sum().iloc[0] == 1e16 + 4
    assert float(np.add.reduce(values)) != total[0]


@pytest.mark.parametrize("seed", range(5))
def test_quantiles_are_pandas_linear_group_quantiles(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n, groups = 3000, 200  # some groups empty, some all NaN
    group = rng.integers(0, groups, n)
    values = rng.integers(0, 400, n).astype(np.float64) * rng.choice([1.0, 0.37], n)
    values[rng.random(n) < 0.1] = np.nan
    got = groupby.quantiles(values, group, groups, QUANTILES)
    expected = (
        pd.Series(values).groupby(group).quantile(list(QUANTILES)).unstack().reindex(range(groups))
    )
    for q, column in zip(QUANTILES, got, strict=True):
        assert column.tobytes() == expected[q].to_numpy().tobytes()


def test_last_and_groups_follow_pandas_sorted_group_by() -> None:
    rng = np.random.default_rng(7)
    n = 2000
    keys = [rng.integers(0, 4, n), rng.integers(0, 30, n), rng.choice([1.5, 2.25, 9.0], n)]
    group, first = groupby.groups(*keys)
    frame = pd.DataFrame({"a": keys[0], "b": keys[1], "c": keys[2], "v": _values(rng, n)})
    grouped = frame.groupby(["a", "b", "c"], sort=True)
    assert list(group) == list(grouped.ngroup())
    assert sorted(first) == list(grouped.head(1).index)  # each group's first row...
    assert list(group[first]) == list(range(len(first)))  # ...listed in group order
    order = np.argsort(group, kind="stable")
    last = groupby.last(frame["v"].to_numpy()[order], group[order], len(first))
    assert last.tobytes() == grouped["v"].last().to_numpy().tobytes()


def _stats_row(rng: np.random.Generator) -> str:
    method = rng.choice(["GET", "POST", ""])
    name = "Aggregated" if not method else rng.choice(["/", "/cart", "/product/OLJCESPC7Z"])
    pad = " " * int(rng.integers(1, 80))
    rps, fps = (f"{x:.{int(rng.integers(0, 4))}f}" for x in rng.random(2) * 50)
    return (
        f"{method:<8} {name}{pad}{rng.integers(0, 99999)}     {rng.integers(0, 99)}(1.00%) |"
        f"{' ' * int(rng.integers(0, 6))}28       9     112 {rng.integers(0, 999)} |"
        f"{' ' * int(rng.integers(0, 6))}{rps}{' ' * int(rng.integers(1, 9))}{fps}"
    )


def test_the_short_patterns_extract_what_the_whole_stats_row_pattern_does() -> None:
    rng = np.random.default_rng(3)
    lines = [_stats_row(rng) for _ in range(500)]
    whole = re.compile(STATS_ROW)
    assert all(whole.match(line) for line in lines)
    head = pc.extract_regex(pa.array(lines), requests._ROW_HEAD).to_pylist()
    tail = pc.extract_regex(pa.array(lines), requests._ROW_TAIL).to_pylist()
    for line, first, last in zip(lines, head, tail, strict=True):
        match = whole.match(line)
        assert match is not None
        assert (first["method"], first["name"]) == (match["method"] or "", match["name"])
        assert (last["med"], last["rps"], last["fps"]) == (match["med"], match["rps"], match["fps"])


def test_locust_rates_are_the_mean_over_prints_of_the_per_print_sums_in_pandas_order() -> None:
    rng = np.random.default_rng(11)
    lines, prints = [], []
    for k in range(8):  # eight prints in one 15 s step, nine product rows each
        for product in range(9):
            rps = float(rng.choice([1e16, 1.0, 1.0, 0.1, 0.7]))
            name = f"/product/{'OLJCESPC7Z' if product % 2 else '66VCHSJNUP'}"
            lines.append(
                (
                    101.0 + k,
                    f"GET      {name}{' ' * 60}100     2(2.00%) |     28       9     112"
                    f"     28 |    {rps:.1f}        0.00",
                )
            )
            prints.append((101.0 + k, rps))
    n = len(lines)
    logs = pa.table(
        {
            "case_id": [CASE] * n,
            "phase": ["during"] * n,
            "ts": [ts for ts, _ in lines],
            "pod": ["lg-1"] * n,
            "container": ["main"] * n,
            "service": ["loadgenerator"] * n,
            "line": [text for _, text in lines],
        }
    ).cast(layout.LOG_TABLE)
    metrics = pa.table(
        {
            "case_id": [CASE] * 2,
            "phase": ["during"] * 2,
            "ts": [100.0, 115.0],
            "query": ["cpu"] * 2,
            "labels": ["{}"] * 2,
            "value": [0.0] * 2,
        }
    ).cast(layout.METRIC_TABLE)
    frame = derive(CASE, logs, metrics, ["during"]).to_pandas()
    printed = pd.DataFrame(prints, columns=["ts", "rps"]).groupby("ts")["rps"].sum()
    expected = printed.groupby(np.zeros(len(printed))).mean().iloc[0]
    got = frame.loc[frame.route == "GET /product/*", "requests_per_s"].iloc[0]
    assert np.float64(got).tobytes() == np.float64(expected).tobytes()
    plain = (
        pd.DataFrame(prints, columns=["ts", "rps"])
        .groupby("ts")["rps"]
        .agg(lambda v: float(np.add.reduce(v.to_numpy())))
    )
    assert (plain != printed).any()  # a plain per-print sum would give other bytes
