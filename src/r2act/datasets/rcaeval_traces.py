"""Spans in RCAEval's files: ``traces.csv`` and the series ``tracets_err.csv``/``tracets_lat.csv``.

What RCAEval 1.8.1 reads, and so what these files hold:

- ``traces.csv`` is read by ``RCAEval.utility.read_traces`` (every column as text) and
  consumed by ``e2e/tracerca.py`` and ``e2e/microrank.py``: they use ``traceID``,
  ``spanID``, ``parentSpanID``, ``serviceName``, ``methodName`` (filled from
  ``operationName`` where empty), ``startTime`` and ``duration``, both in microseconds
  (their windows compare ``startTime + duration`` with the injection time times 10^6, and
  their latency SLOs divide ``duration`` by 1,000 to get ms). Their operation key is
  ``serviceName + "_" + methodName``. r2act writes ``methodName`` as the span's
  ``rpc.method`` attribute (the gRPC method, as RCAEval's Online Boutique data names it)
  and leaves it empty for other spans, so RCAEval falls back to the span name; the root
  span's ``parentSpanID`` is empty. Two more columns, ``spanKind`` and ``statusCode``
  (OTLP's status code: 0 unset, 1 ok, 2 error), carry what r2act's table has besides;
  RCAEval's code ignores them.
- ``tracets_err.csv`` and ``tracets_lat.csv`` are read by RCAEval's ``main.py`` for the
  multi-source methods (``e2e/baro.py`` ``mmnsigma``/``mmbaro``, ``e2e/mmrcd.py``,
  ``e2e/torai.py``): a ``time`` column in epoch seconds and one numeric column per series,
  forward-filled, zero-filled and z-scored against the pre-injection rows, and ranked by
  column name, whose part before the first underscore RCAEval's evaluator reads as the
  service. RCAEval's code does not derive them and does not document their values, so
  r2act's derivation is its own, stated here: one column per RCAEval operation key
  (``<serviceName>_<methodName>``), one row per row of the case's ``data.csv`` (the
  metric step, each row standing for the step ending at its time; ``mmrcd`` aligns these
  series onto the metrics by time); ``tracets_err`` counts the spans with status error
  that started in the step (0 where none did),
  ``tracets_lat`` is their mean duration in ms (empty where none started, which RCAEval
  forward-fills).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd

TRACE_COLUMNS = (
    "traceID",
    "spanID",
    "parentSpanID",
    "serviceName",
    "methodName",
    "operationName",
    "startTime",
    "duration",
    "spanKind",
    "statusCode",
)
"""``traces.csv``'s columns: RCAEval's eight, then span kind and status code."""
STATUS_CODES = {"unset": 0, "ok": 1, "error": 2}
"""OTLP's ``Status.StatusCode`` values."""


def _method(attributes: str) -> str:
    value = json.loads(attributes).get("rpc.method", "")
    return str(value) if value is not None else ""


def traces_csv(spans: pd.DataFrame) -> pd.DataFrame:
    """``traces.csv`` of one case from its rows of the traces table, in start order."""
    ordered = spans.sort_values("start", kind="stable")
    return pd.DataFrame(
        {
            "traceID": ordered["trace_id"].astype(str),
            "spanID": ordered["span_id"].astype(str),
            "parentSpanID": ordered["parent_id"].astype(str),
            "serviceName": ordered["service"].astype(str),
            "methodName": [_method(str(a)) for a in ordered["attributes"]],
            "operationName": ordered["operation"].astype(str),
            "startTime": (ordered["start"].astype(float) * 1e6).round().astype("int64"),
            "duration": (ordered["duration_s"].astype(float) * 1e6).round().astype("int64"),
            "spanKind": ordered["kind"].astype(str),
            "statusCode": ordered["status"].astype(str).map(STATUS_CODES).astype("int64"),
        },
    ).reset_index(drop=True)


def operation_keys(table: pd.DataFrame) -> pd.Series:
    """RCAEval's operation key of each ``traces.csv`` row: ``serviceName_methodName``,
    with ``operationName`` where the method is empty."""
    method = table["methodName"].where(table["methodName"] != "", table["operationName"])
    return table["serviceName"] + "_" + method


def trace_series(table: pd.DataFrame, times: pd.Series) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``tracets_err`` and ``tracets_lat`` of one case on the step grid ``times`` (the
    ``time`` column of its ``data.csv``, epoch s). A row stands for the step ending at its
    time, as a metric sample and the request table's rows do, so each span counts in the
    first row at or after its start; spans after the last row are left out."""
    grid = np.sort(times.drop_duplicates().to_numpy(dtype="int64"))
    empty = pd.DataFrame({"time": grid})
    if table.empty or len(grid) == 0:
        return empty, empty.copy()
    start_s = table["startTime"].to_numpy(dtype="int64") / 1e6
    slot = np.searchsorted(grid, start_s, side="left")
    keep = slot < len(grid)
    frame = pd.DataFrame(
        {
            "time": grid[slot[keep]],
            "key": operation_keys(table)[keep].to_numpy(),
            "error": (table["statusCode"].to_numpy()[keep] == STATUS_CODES["error"]).astype(int),
            "ms": table["duration"].to_numpy(dtype="int64")[keep] / 1e3,
        }
    )
    keys = sorted(set(frame["key"]))
    errors = frame.pivot_table(index="time", columns="key", values="error", aggfunc="sum")
    errors = errors.reindex(index=grid, columns=keys).fillna(0).astype("int64")
    latency = frame.pivot_table(index="time", columns="key", values="ms", aggfunc="mean")
    latency = latency.reindex(index=grid, columns=keys)
    return _with_time(errors, grid), _with_time(latency, grid)


def _with_time(frame: pd.DataFrame, grid: np.ndarray) -> pd.DataFrame:
    frame = frame.reset_index(drop=True)
    frame.columns.name = None
    frame.insert(0, "time", grid)
    return frame
