"""Small, vectorised readings of one incident's observations, shared by the baselines.

Every helper compares the ``during`` window with the ``pre`` window of the same incident
(rates per second, so windows of different length compare), because a symptom that was
already there before the injection is not evidence about the fault. Names found in
observations (pods, events' objects, metric labels) are mapped to deployments by the
longest deployment name that prefixes them, the way Kubernetes names a Deployment's pods.
"""

from __future__ import annotations

import json
from collections import Counter

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
