"""Request-level series derived from what a real cluster records (issue 15 item 3).

Online Boutique exports no request metrics, so metric-based RCA sees only resource series.
Two sources in the logs carry request-level signal, and this module turns them into a
table at the metric step (one row per step, phase and series), with plain ``service`` and
``route`` columns:

- ``frontend-log``: the frontend's HTTP middleware logs one ``request complete`` line per
  request (``http.req.method``, ``http.req.path``, ``http.resp.status``,
  ``http.resp.took_ms``) -> per route (``service`` = frontend): requests/s, errors/s
  (status >= 500), error ratio and latency p50/p95/p99. Its ``request error`` lines open
  with the wrap of the handler step that failed (``could not retrieve cart: rpc error
  ...``), which names the called backend (the system's ``error_backend``;
  otherwise a service named in the text) -> that called service gets errors/s per route
  (its own request count is not logged, so requests/s and the ratio stay null).
- ``locust-stats``: the load generator prints a stats table every few seconds (per name:
  cumulative counts, current req/s and failures/s, cumulative median) -> per route the
  mean req/s and failures/s over the prints in the step; the ``Aggregated`` row is route
  ``*`` and also gives its cumulative median as p50.

Routes are ``METHOD /path`` with product ids replaced by ``*`` (``GET /product/*``).
Steps end at the metric samples' timestamps of the phase (the campaign's metric step),
so the series line up with ``metrics``. Everything here is derived: the raw lines stay
in ``logs``; this table only saves every method the parsing.
"""

from __future__ import annotations

import re
from functools import cache
from io import BytesIO
from typing import Final

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from r2act.datasets.layout import REQUEST_TABLE
from r2act.systems import DEFAULT_SYSTEM, System, get_system
from r2act.systems.locust import AGGREGATED, STATS_ROW

DEFAULT_STEP_S: Final = 15.0
_ID_SEGMENT: Final = re.compile(r"^[A-Z0-9]{10}$")
_LOCUST_ROW: Final = re.compile(STATS_ROW)
_FRONTEND_FIELDS: Final = pa.schema(
    [
        pa.field("message", pa.string()),
        pa.field("http.req.method", pa.string()),
        pa.field("http.req.path", pa.string()),
        pa.field("http.resp.status", pa.int64()),
        pa.field("http.resp.took_ms", pa.float64()),
        pa.field("error", pa.string()),
    ]
)


@cache
def route(method: str, path: str) -> str:
    """``METHOD /path`` with id-like path segments (product ids) replaced by ``*``."""
    parts = ["*" if _ID_SEGMENT.match(p) else p for p in path.split("?", 1)[0].split("/")]
    return f"{method} {'/'.join(parts) or '/'}"


def _steps(metric_ts: np.ndarray, event_ts: np.ndarray) -> np.ndarray:
    """Step end times: the phase's metric timestamps, or a grid over the events."""
    ends = np.unique(metric_ts)
    if len(ends) >= 2:
        step = float(np.median(np.diff(ends)))
        return np.concatenate([[ends[0] - step], ends])
    if not len(event_ts):
        return np.array([], dtype=np.float64)
    start = np.floor(event_ts.min() / DEFAULT_STEP_S) * DEFAULT_STEP_S
    stop = np.ceil(event_ts.max() / DEFAULT_STEP_S) * DEFAULT_STEP_S
    return np.arange(start, stop + DEFAULT_STEP_S, DEFAULT_STEP_S)


def _bin(ts: pd.Series, phase: pd.Series, edges: dict[str, np.ndarray]) -> pd.Series:
    """The end of the step each timestamp falls in, within its own phase (NaN outside)."""
    out = np.full(len(ts), np.nan)
    times, phases = ts.to_numpy(), phase.to_numpy()
    for name, bounds in edges.items():
        mask = phases == name
        if len(bounds) < 2 or not mask.any():
            continue
        index = np.searchsorted(bounds, times[mask], side="left")
        inside = (index > 0) & (index < len(bounds))
        out[mask] = np.where(inside, bounds[np.clip(index, 0, len(bounds) - 1)], np.nan)
    return pd.Series(out, index=ts.index)


def _grid(edges: dict[str, np.ndarray], routes: list[str]) -> pd.MultiIndex:
    """Every (phase, step end, route): a step without a request is a zero, not a gap."""
    tuples = [(p, end, r) for p, bounds in edges.items() for end in bounds[1:] for r in routes]
    return pd.MultiIndex.from_tuples(tuples, names=["phase", "step", "route"])


def _step_s(edges: dict[str, np.ndarray], phase: pd.Index | np.ndarray) -> np.ndarray:
    """The step length (s) of each row's phase."""
    length = {p: float(np.median(np.diff(b))) for p, b in edges.items() if len(b) >= 2}
    return np.array([length[p] for p in phase], dtype=np.float64)


def _frontend(
    lines: pa.Table, edges: dict[str, np.ndarray], services: list[str], system: System
) -> pd.DataFrame:
    if not lines.num_rows:
        return pd.DataFrame()
    data = ("\n".join(lines.column("line").to_pylist()) + "\n").encode()
    options = pa_json.ParseOptions(
        explicit_schema=_FRONTEND_FIELDS, unexpected_field_behavior="ignore"
    )
    try:
        parsed = pa_json.read_json(BytesIO(data), parse_options=options).to_pandas()
    except pa.ArrowInvalid:
        return pd.DataFrame()  # not the JSON the frontend writes: nothing derivable
    parsed["ts"] = lines.column("ts").to_numpy()
    parsed["phase"] = lines.column("phase").to_numpy(zero_copy_only=False)
    parsed["step"] = _bin(parsed["ts"], parsed["phase"], edges)
    parsed = parsed[parsed["step"].notna() & parsed["http.req.path"].notna()]
    method = parsed["http.req.method"].fillna("GET").astype(str)
    pairs = method + " " + parsed["http.req.path"].astype(str)
    routes = {pair: route(*pair.split(" ", 1)) for pair in pairs.unique()}  # few distinct
    parsed["route"] = pairs.map(routes)
    done = parsed[parsed["message"] == "request complete"]
    grid = _grid(edges, sorted(set(done["route"])))
    keys = [done["phase"], done["step"], done["route"]]
    counts = pd.DataFrame(
        {
            "requests": done.groupby(keys).size(),
            "errors": (done["http.resp.status"] >= 500).groupby(keys).sum(),
        }
    ).reindex(grid, fill_value=0)
    took = done["http.resp.took_ms"].groupby(keys).quantile([0.5, 0.95, 0.99])
    quantiles = took.unstack().reindex(grid) if len(took) else None
    seconds = _step_s(edges, grid.get_level_values("phase"))
    frame = pd.DataFrame(
        {
            "source": "frontend-log",
            "service": system.topology.entrypoint,
            "phase": grid.get_level_values("phase"),
            "route": grid.get_level_values("route"),
            "ts": grid.get_level_values("step"),
            "requests_per_s": counts["requests"].to_numpy() / seconds,
            "errors_per_s": counts["errors"].to_numpy() / seconds,
            "errors": counts["errors"].to_numpy(),
            "requests": counts["requests"].to_numpy(),
            **{
                column: quantiles[q].to_numpy() if quantiles is not None else np.nan
                for column, q in zip(_COLUMNS[-3:], (0.5, 0.95, 0.99), strict=True)
            },
        }
    )
    failed = parsed[(parsed["message"] == "request error") & parsed["error"].notna()]
    callee = [
        system.error_backend(text) or _named_service(text, services) for text in failed["error"]
    ]
    failed = failed.assign(callee=callee)
    failed = failed[failed["callee"].notna()]
    if failed.empty:
        return frame
    errors = failed.groupby(["phase", "step", "route", "callee"]).size()
    per_s = errors.to_numpy() / _step_s(edges, errors.index.get_level_values("phase"))
    attributed = pd.DataFrame(
        {
            "source": "frontend-log",
            "service": errors.index.get_level_values("callee"),
            "phase": errors.index.get_level_values("phase"),
            "route": errors.index.get_level_values("route"),
            "ts": errors.index.get_level_values("step"),
            "requests_per_s": np.nan,  # calls to the callee are not logged
            "errors_per_s": per_s,
            "errors": errors.to_numpy(),
            "requests": 0,
        }
    )
    return pd.concat([frame, attributed], ignore_index=True)


_COLUMNS: Final = [
    "source",
    "service",
    "route",
    "ts",
    "requests_per_s",
    "errors_per_s",
    "errors",
    "requests",
    "latency_p50_ms",
    "latency_p95_ms",
    "latency_p99_ms",
]


def _named_service(text: str, services: list[str]) -> str | None:
    """The first service the error text names (longest names first: no partial match)."""
    found = [(text.find(s), s) for s in services if s in text]
    return min(found)[1] if found else None


def _locust(lines: pa.Table, edges: dict[str, np.ndarray], entrypoint: str) -> pd.DataFrame:
    if not lines.num_rows:
        return pd.DataFrame()
    parsed = []
    for ts, phase, text in zip(
        lines.column("ts").to_pylist(),
        lines.column("phase").to_pylist(),
        lines.column("line").to_pylist(),
        strict=True,
    ):
        match = _LOCUST_ROW.match(text)
        if match is None:
            continue
        name = match["name"]
        aggregated = name == AGGREGATED and not match["method"]
        parsed.append(
            {
                "ts": ts,
                "phase": phase,
                "route": "*" if aggregated else route(match["method"] or "GET", name),
                "rps": float(match["rps"]),
                "fps": float(match["fps"]),
                "med": float(match["med"]) if aggregated else None,
            }
        )
    if not parsed:
        return pd.DataFrame()
    frame = pd.DataFrame(parsed)
    frame["step"] = _bin(frame["ts"], frame["phase"], edges)
    frame = frame[frame["step"].notna()]
    if frame.empty:
        return pd.DataFrame()
    per_print = (
        frame.groupby(["phase", "step", "route", "ts"], as_index=False)
        .agg(rps=("rps", "sum"), fps=("fps", "sum"), med=("med", "max"))
        .sort_values("ts", kind="stable")
    )
    steps = per_print.groupby(["phase", "step", "route"]).agg(
        rps=("rps", "mean"), fps=("fps", "mean"), med=("med", "last")
    )
    return pd.DataFrame(
        {
            "source": "locust-stats",
            "service": entrypoint,
            "phase": steps.index.get_level_values("phase"),
            "route": steps.index.get_level_values("route"),
            "ts": steps.index.get_level_values("step"),
            "requests_per_s": steps["rps"].to_numpy(),
            "errors_per_s": steps["fps"].to_numpy(),
            "errors": steps["fps"].to_numpy(),
            "requests": steps["rps"].to_numpy(),
            "latency_p50_ms": steps["med"].to_numpy(),
            "latency_p95_ms": np.nan,
            "latency_p99_ms": np.nan,
        }
    )


def derive(
    case_id: str,
    logs: pa.Table,
    metrics: pa.Table,
    phases: list[str],
    services: list[str] | None = None,
    *,
    system: System | None = None,
) -> pa.Table:
    """The request table of one case from its log rows and metric rows (both case-keyed).

    ``services`` are the names an error text may mention (default: the services that
    logged); longer names are tried first so no name matches inside another. ``system``
    says which deployment is the entry point and which the load generator (default: the
    default system)."""
    system = system or get_system(DEFAULT_SYSTEM)
    entrypoint, loadgen = system.topology.entrypoint, system.topology.load_generator
    named = services if services is not None else logs.column("service").to_pylist()
    services = sorted({s for s in named if s not in {loadgen, entrypoint}}, key=len, reverse=True)
    metric_ts = metrics.column("ts").to_numpy()
    metric_phase = metrics.column("phase").to_numpy(zero_copy_only=False)
    front = logs.filter(pc.equal(logs.column("service"), entrypoint))
    front = front.filter(
        pc.match_substring_regex(front.column("line"), r'"request (complete|error)"')
    )
    load = logs.filter(pc.equal(logs.column("service"), loadgen or ""))
    edges: dict[str, np.ndarray] = {}
    for phase in phases:
        events = np.concatenate(
            [
                t.filter(pc.equal(t.column("phase"), phase)).column("ts").to_numpy()
                for t in (front, load)
            ]
        )
        bounds = _steps(metric_ts[metric_phase == phase], events)
        if len(bounds) >= 2:
            edges[phase] = bounds
    parts = (_frontend(front, edges, services, system), _locust(load, edges, entrypoint))
    frames = [f for f in parts if len(f)]
    if not frames:
        return REQUEST_TABLE.empty_table()
    table = pd.concat(frames, ignore_index=True)
    table["case_id"] = case_id
    numeric = ["requests_per_s", "errors_per_s", "errors", "requests", *_COLUMNS[-3:]]
    table[numeric] = table[numeric].astype("float64")
    rate = table["requests_per_s"]
    table["error_ratio"] = table["errors_per_s"] / rate.where(rate > 0)  # NaN: no requests
    table["phase"] = pd.Categorical(table["phase"], categories=phases)
    table = table.sort_values(["phase", "ts", "source", "service", "route"], kind="stable")
    table["phase"] = table["phase"].astype(str)
    out = pa.Table.from_pandas(table[REQUEST_TABLE.names], preserve_index=False)
    return out.cast(REQUEST_TABLE)
