"""Small, vectorised readings of one incident's observations, shared by the baselines.

Every helper compares the ``during`` window with the ``pre`` window of the same incident
(rates per second, so windows of different length compare), because a symptom that was
already there before the injection is not evidence about the fault. Names found in
observations (pods, events' objects, metric labels) are mapped to deployments by the
longest deployment name that prefixes them, the way Kubernetes names a Deployment's pods.

A healthy cluster is not a clean room: probes time out now and then, callers warn, CPU is
bursty and throttled, heaps saw up and down. So the helpers below read like a careful
operator: the during window is cut into ``SUBWINDOWS`` slices and a symptom counts only
when it holds in ``PERSIST`` consecutive ones (a one-off blip does not), and "higher" means
beyond the pre window's own spread (mean + ``K_SD`` standard deviations of its slices or
samples) as well as by a ratio, never "any line more than before".
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from r2act.schema import Topology

ERRORISH = (
    r'"(?:severity|level)":\s*"?(?:error|warn|warning|50|40)\b'
    r"|\berror\b|\bfail|exception|rpc error|refused|timed? ?out|deadline|unavailable"
    r'|"http\.resp\.status":5\d\d|no such host|canceled'
)
"""A line that reports trouble, whatever the service's log format (case-insensitive)."""


def contains(lines: pd.Series, pattern: str) -> np.ndarray:
    """Case-insensitive regex match per line, as a boolean array.

    Runs in Arrow's RE2 engine: a paper-scale pass over millions of lines takes seconds,
    where Python's ``re`` through pandas takes tens of minutes."""
    if lines.empty:
        return np.zeros(0, dtype=bool)
    try:
        array = pa.array(lines.array)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = pa.array(lines.astype(str).tolist(), type=pa.string())
    if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)):
        array = array.cast(pa.string())
    found = pc.match_substring_regex(array, pattern, ignore_case=True).fill_null(False)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)


def app_of(name: str, topology: Topology) -> str | None:
    """The deployment a pod (or ReplicaSet, or the deployment itself) belongs to."""
    best: str | None = None
    for deployment in topology.names:
        if (name == deployment or name.startswith(deployment + "-")) and (
            best is None or len(deployment) > len(best)
        ):
            best = deployment
    return best


def window(frame: pd.DataFrame | None, phase: str) -> pd.DataFrame:
    """The rows of one phase (an empty frame when there are none)."""
    if frame is None or frame.empty:
        return pd.DataFrame(columns=[] if frame is None else frame.columns)
    return frame[frame["phase"] == phase]


def span_s(frame: pd.DataFrame, phase: str) -> float:
    """Length of a phase as its rows show it (at least one second)."""
    rows = window(frame, phase)
    if rows.empty:
        return 1.0
    return max(1.0, float(rows["ts"].max() - rows["ts"].min()))


def error_lines(logs: pd.DataFrame, phase: str = "during") -> pd.DataFrame:
    """The lines of a phase that report trouble."""
    rows = window(logs, phase)
    if rows.empty:
        return rows
    return rows[contains(rows["line"], ERRORISH)]


def error_rate_increase(logs: pd.DataFrame) -> dict[str, float]:
    """Per service: error lines per second during minus before the fault (only rises)."""
    during = Counter(error_lines(logs, "during")["service"])
    before = Counter(error_lines(logs, "pre")["service"])
    d_s, p_s = span_s(logs, "during"), span_s(logs, "pre")
    out: dict[str, float] = {}
    for service, n in during.items():
        rise = n / d_s - before.get(service, 0) / p_s
        if rise > 0:
            out[service] = rise
    return out


def _series_means(metrics: pd.DataFrame | None, query: str, phase: str) -> pd.Series:
    rows = window(metrics, phase)
    if rows.empty:
        return pd.Series(dtype=float)
    rows = rows[rows["query"] == query]
    return rows.groupby("labels", sort=False)["value"].mean()


def metric_ratio(
    metrics: pd.DataFrame | None, query: str, topology: Topology, floor: float
) -> dict[str, float]:
    """Per app, the largest during/pre ratio of one metric over the app's series.

    Ratios are taken per series (one pod, one container) so a pod that appears or goes
    away during the fault does not look like growth; ``floor`` keeps tiny baselines sane."""
    pre = {str(k): float(v) for k, v in _series_means(metrics, query, "pre").items()}
    out: dict[str, float] = {}
    for labels, value in _series_means(metrics, query, "during").items():
        before = pre.get(str(labels))
        parsed = json.loads(str(labels))
        app = app_of(str(parsed.get("pod") or parsed.get("deployment") or ""), topology)
        if before is not None and app is not None:
            out[app] = max(out.get(app, 0.0), float(value) / max(before, floor))
    return out


SUBWINDOWS = 6
"""Slices of a phase a symptom is checked in (20 s each for the default 120 s fault window,
one or two metric scrapes)."""
PERSIST = 3
"""Consecutive slices a symptom must hold in: half the default fault window, so a blip
that straddles one slice boundary (two slices) never counts."""
K_SD = 3.0
"""Standard deviations above the pre window's mean a value must reach (about 1 in 700 of a
normal background per slice)."""


def slices(
    frame: pd.DataFrame | None,
    phase: str,
    n: int = SUBWINDOWS,
    bounds: tuple[float, float] | None = None,
) -> list[pd.DataFrame]:
    """The rows of a phase cut into ``n`` equal slices of its time span (empty ones kept).

    ``bounds`` (the phase's start and end as another table shows them) keeps sparse tables
    such as events on the same slices as the logs; by default the rows' own span."""
    rows = window(frame, phase)
    if rows.empty:
        return [rows] * n if bounds is not None else []
    ts = rows["ts"].astype(float)
    low, high = bounds or (float(ts.min()), float(ts.max()))
    width = (high - low) / n or 1.0
    index = ((ts - low) / width).astype(int).clip(0, n - 1).to_numpy()
    return [rows[index == i] for i in range(n)]


def bounds_of(frame: pd.DataFrame | None, phase: str) -> tuple[float, float] | None:
    """A phase's first and last timestamp as a table shows them (None when it has none)."""
    rows = window(frame, phase)
    if rows.empty:
        return None
    return float(rows["ts"].min()), float(rows["ts"].max())


def persists(flags: Sequence[bool | None], need: int = PERSIST) -> bool:
    """Whether ``need`` consecutive slices hold (None: a slice with no data, which neither
    breaks nor extends a run: a scrape gap is not evidence either way)."""
    run = 0
    for flag in flags:
        if flag is None:
            continue
        run = run + 1 if flag else 0
        if run >= need:
            return True
    return False


def spread(values: Sequence[float]) -> tuple[float, float]:
    """Mean and standard deviation (population) of a baseline; (0, 0) when empty."""
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def beyond(baseline: Sequence[float], value: float, ratio: float, floor: float) -> bool:
    """``value`` above the baseline's mean + ``K_SD`` sd and at least ``ratio`` times its
    mean (``floor`` stands in for a mean near zero, so tiny baselines stay sane)."""
    mean, sd = spread(baseline)
    return value > mean + K_SD * sd and value >= ratio * max(mean, floor)


def persistent_rise(
    metrics: pd.DataFrame | None,
    query: str,
    topology: Topology,
    *,
    ratio: float,
    floor: float,
    bounds: tuple[float, float] | None = None,
) -> dict[str, float]:
    """Per app, the largest median during/pre ratio of a series that stays ``beyond`` its
    own pre samples in ``PERSIST`` consecutive slices of the during window.

    Per series (one pod, one container), so a pod that appears or goes away during the
    fault does not look like growth; a series absent before has no baseline and is
    skipped."""
    pre = window(metrics, "pre")
    if pre.empty:
        return {}
    pre = pre[pre["query"] == query]
    baselines = {str(k): [float(v) for v in g] for k, g in pre.groupby("labels")["value"]}
    during = window(metrics, "during")
    during = during[during["query"] == query] if not during.empty else during
    out: dict[str, float] = {}
    for labels, rows in during.groupby("labels") if not during.empty else ():
        baseline = baselines.get(str(labels))
        parsed = json.loads(str(labels))
        app = app_of(str(parsed.get("pod") or parsed.get("deployment") or ""), topology)
        if not baseline or app is None:
            continue
        means = [
            float(part["value"].mean()) if not part.empty else None
            for part in slices(rows, "during", bounds=bounds)
        ]
        flags = [None if m is None else beyond(baseline, m, ratio, floor) for m in means]
        if persists(flags):
            mean = max(spread(baseline)[0], floor)
            risen = sorted(m / mean for m in means if m is not None)
            out[app] = max(out.get(app, 0.0), risen[len(risen) // 2])
    return out
