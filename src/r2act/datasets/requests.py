"""Request-level series derived from what a real cluster records (issue 15 item 3).

Online Boutique exports no request metrics, so metric-based RCA sees only resource series.
Two sources in the logs carry request-level signal, and this module turns them into a
table at the metric step (one row per step, phase and series), with plain ``service`` and
``route`` columns:

- ``frontend-log``: the entry point's HTTP middleware logs one ``request complete`` line
  per request (``http.req.method``, ``http.req.path``, ``http.resp.status``,
  ``http.resp.took_ms``) -> per route (``service`` = the entry point): requests/s,
  errors/s (status >= 500), error ratio and latency p50/p95/p99. Its ``request error``
  lines open with the wrap of the handler step that failed (``could not retrieve <what>: rpc
  error ...``), which names the called backend (the system's ``error_backend``;
  otherwise a service named in the text) -> that called service gets errors/s per route
  (its own request count is not logged, so requests/s and the ratio stay null).
- ``locust-stats``: the load generator prints a stats table every few seconds (per name:
  cumulative counts, current req/s and failures/s, cumulative median) -> per route the
  mean req/s and failures/s over the prints in the step; the ``Aggregated`` row is route
  ``*`` and also gives its cumulative median as p50. A system whose load generator prints
  no table (``System.load_stats`` None: the Astronomy Shop's chart runs Locust with its web
  UI, whose stats no log holds) gets no ``locust-stats`` rows at all: its series are the
  entry point's only, and none where the entry point's requests are not in a pod log
  either (the Astronomy Shop's Envoy sends its access log to the collector), rather than
  numbers no recorded line carries.

Routes are ``METHOD /path`` with product ids replaced by ``*`` (``GET /product/*``).
Steps end at the metric samples' timestamps of the phase (the campaign's metric step),
so the series line up with ``metrics``. Everything here is derived: the raw lines stay
in ``logs``; this table only saves every method the parsing.

The work is vectorised (Arrow's C++ JSON reader and RE2, numpy group-bys on integer keys):
a paper-scale build derives 302 incidents' series, and per-line Python or per-group
pandas calls made this the larger half of the build's CPU (issue 26 item 3). The numbers
are those pandas' group-bys gave, bit for bit (``datasets.groupby``), because a published
dataset must not change its bytes when the code that writes it gets faster.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pa_json

from r2act.datasets import groupby
from r2act.datasets.layout import REQUEST_TABLE
from r2act.systems import DEFAULT_SYSTEM, System, get_system
from r2act.systems.locust import AGGREGATED, STATS_ROW

DEFAULT_STEP_S: Final = 15.0
QUANTILES: Final = (0.5, 0.95, 0.99)
"""The latency quantiles of the entry point's routes (``latency_p50_ms`` ...)."""
_ID_SEGMENT: Final = re.compile(r"^[A-Z0-9]{10}$")
_REQUEST_LINES: Final = r'"request (complete|error)"'
_ROW_HEAD: Final = r"^(?P<method>[A-Z]+)?\s+(?P<name>\S+)"
_ROW_TAIL: Final = r"(?P<med>\d+)\s*\|\s*(?P<rps>[0-9.]+)\s+(?P<fps>[0-9.]+)\s*$"
r"""On a line ``STATS_ROW`` matches, these two give its ``method``, ``name`` and ``med``,
``rps``, ``fps`` (its first tokens; what follows its last but one ``|``): RE2 extracts
groups from these short spans three times faster than from the whole padded row. (RE2's
``\s`` and ``\d`` are ASCII where Python's are Unicode: the same on what Locust prints.)"""
_ENTRY_FIELDS: Final = pa.schema(
    [
        pa.field("message", pa.string()),
        pa.field("http.req.method", pa.string()),
        pa.field("http.req.path", pa.string()),
        pa.field("http.resp.status", pa.int64()),
        pa.field("http.resp.took_ms", pa.float64()),
        pa.field("error", pa.string()),
    ]
)
_JSON_PARSE: Final = pa_json.ParseOptions(
    explicit_schema=_ENTRY_FIELDS, unexpected_field_behavior="ignore"
)
_JSON_READ: Final = pa_json.ReadOptions(use_threads=False)
"""One thread: the build already reads several incidents at once."""

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


@cache
def route(method: str, path: str) -> str:
    """``METHOD /path`` with id-like path segments (product ids) replaced by ``*``."""
    parts = ["*" if _ID_SEGMENT.match(p) else p for p in path.split("?", 1)[0].split("/")]
    return f"{method} {'/'.join(parts) or '/'}"


def _steps(metric_ts: Floats, event_ts: Floats) -> Floats:
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


@dataclass(frozen=True)
class _PhaseSteps:
    """The phases' step edges, in the order of the phases; a row's phase is its index in
    ``names`` and its step the index of the step's end in ``edges[phase][1:]``."""

    edges: dict[str, Floats]

    @property
    def names(self) -> list[str]:
        """The phases that have steps."""
        return list(self.edges)

    def counts(self) -> Ints:
        """How many steps each phase has."""
        return np.array([len(b) - 1 for b in self.edges.values()], dtype=np.int64)

    def seconds(self) -> Floats:
        """The step length (s) of each phase."""
        return np.array([float(np.median(np.diff(b))) for b in self.edges.values()])

    def ends(self, phase_of: Ints, step_of: Ints) -> Floats:
        """The end time of each row's step."""
        flat: Floats = np.concatenate([b[1:] for b in self.edges.values()] or [_nan(0)])
        first = np.cumsum(self.counts()) - self.counts()
        ends: Floats = flat[first[phase_of] + step_of]
        return ends

    def by_name(self, phase_of: Ints) -> Ints:
        """Each row's phase's rank among the phase names sorted (pandas' group-by order)."""
        return _codes(self.names, sorted(self.names))[phase_of]

    def locate(self, ts: Floats, phase: pa.ChunkedArray | pa.Array) -> tuple[Ints, Ints]:
        """Each row's phase and step (-1, -1 outside): a step ends at its edge and excludes
        its start, within the row's own phase."""
        phase_of = np.full(len(ts), -1, dtype=np.int64)
        step_of = np.full(len(ts), -1, dtype=np.int64)
        for index, (name, bounds) in enumerate(self.edges.items()):
            mask = pc.equal(phase, name).to_numpy(zero_copy_only=False)
            position = np.searchsorted(bounds, ts[mask], side="left")
            inside = (position > 0) & (position < len(bounds))
            rows = np.flatnonzero(mask)[inside]
            phase_of[rows] = index
            step_of[rows] = position[inside] - 1
        return phase_of, step_of


def _nan(n: int) -> Floats:
    return np.full(n, np.nan)


def _int(n: int) -> Ints:
    return np.zeros(n, dtype=np.int64)


def _codes(values: list[str], order: list[str]) -> Ints:
    """The index of each value in ``order`` (-1 for a value not in it)."""
    rank = {v: i for i, v in enumerate(order)}
    return np.array([rank.get(v, -1) for v in values], dtype=np.int64)


def _routes(
    methods: pa.Array | pa.ChunkedArray, names: pa.Array | pa.ChunkedArray
) -> tuple[list[str], Ints]:
    """The distinct routes of (method, name) rows, sorted, and each row's index in them."""
    joined = pc.binary_join_element_wise(methods, names, " ")
    if isinstance(joined, pa.ChunkedArray):
        joined = joined.combine_chunks()
    pairs = joined.dictionary_encode()
    named = [route(*pair.split(" ", 1)) for pair in pairs.dictionary.to_pylist()]
    routes = sorted(set(named))
    codes = _codes(named, routes)
    return routes, codes[pairs.indices.to_numpy(zero_copy_only=False)]


def _used(routes: list[str], route_of: Ints) -> tuple[list[str], Ints]:
    """Only the routes some row has, sorted, and each row's index in them."""
    used = [routes[i] for i in np.unique(route_of)]  # np.unique sorts: still sorted
    return used, _codes(routes, used)[route_of]


@dataclass
class _Part:
    """Rows of the request table before the case key and the final order."""

    source: str
    service: list[str]
    phase: list[str]
    ts: Floats
    route: list[str]
    requests_per_s: Floats
    errors_per_s: Floats
    latency: list[Floats]
    """One array per quantile of ``QUANTILES``."""

    def table(self) -> pa.Table:
        """The rows as Arrow columns; NaN becomes null (as pandas' conversion made it)."""
        rate = self.requests_per_s
        with np.errstate(divide="ignore", invalid="ignore"):
            ratio = np.where(rate > 0, self.errors_per_s / rate, np.nan)  # NaN: no requests
        floats = {
            "requests_per_s": rate,
            "errors_per_s": self.errors_per_s,
            "error_ratio": ratio,
            **{
                f"latency_p{round(q * 100)}_ms": v
                for q, v in zip(QUANTILES, self.latency, strict=True)
            },
        }
        return pa.table(
            {
                "phase": pa.array(self.phase, pa.string()),
                "ts": pa.array(self.ts, pa.float64()),
                "source": pa.repeat(pa.scalar(self.source), len(self.ts)),
                "service": pa.array(self.service, pa.string()),
                "route": pa.array(self.route, pa.string()),
                **{k: pa.array(v, pa.float64(), from_pandas=True) for k, v in floats.items()},
            }
        )


def _entry(lines: pa.Table, steps: _PhaseSteps, services: list[str], system: System) -> list[_Part]:
    """The entry point's request and error lines -> its routes' rates and latencies, and the
    errors of the services it called."""
    if not lines.num_rows:
        return []
    text = lines.column("line").combine_chunks()
    whole = pa.ListArray.from_arrays(pa.array([0, len(text)], pa.int32()), text)
    data = pc.binary_join(whole, "\n")[0].as_buffer().to_pybytes() + b"\n"
    try:
        parsed = pa_json.read_json(
            pa.BufferReader(data), read_options=_JSON_READ, parse_options=_JSON_PARSE
        )
    except pa.ArrowInvalid:
        return []  # not the JSON the entry point writes: nothing derivable
    phase_of, step_of = steps.locate(lines.column("ts").to_numpy(), lines.column("phase"))
    path = parsed.column("http.req.path")
    rows = np.flatnonzero((step_of >= 0) & pc.is_valid(path).to_numpy(zero_copy_only=False))
    parsed, phase_of, step_of = parsed.take(rows), phase_of[rows], step_of[rows]
    method = pc.fill_null(parsed.column("http.req.method"), "GET")
    routes, route_of = _routes(method, parsed.column("http.req.path"))
    message = parsed.column("message")

    def rows_where(mask: pa.ChunkedArray) -> Ints:
        return np.flatnonzero(pc.fill_null(mask, False).to_numpy(zero_copy_only=False))

    done = rows_where(pc.equal(message, "request complete"))
    failed = rows_where(pc.and_(pc.equal(message, "request error"), pc.is_valid(parsed["error"])))
    errors = parsed.column("error").take(failed).to_pylist()
    callee_of = {e: system.error_backend(e) or _named_service(e, services) for e in set(errors)}
    callees = [callee_of[e] for e in errors]  # few distinct texts: one look-up each
    failed = failed[np.array([c is not None for c in callees], dtype=bool)]
    return [
        _completed(
            parsed.take(done),
            phase_of[done],
            step_of[done],
            routes,
            route_of[done],
            steps,
            system.topology.entrypoint,
        ),
        _attributed(
            [c for c in callees if c is not None],
            phase_of[failed],
            step_of[failed],
            *_used(routes, route_of[failed]),
            steps,
        ),
    ]


def _completed(  # noqa: PLR0917
    done: pa.Table,
    phase_of: Ints,
    step_of: Ints,
    routes: list[str],
    route_of: Ints,
    steps: _PhaseSteps,
    service: str,
) -> _Part:
    """Every (phase, step, route) of the completed requests' routes, in that order: a step
    without a request is a zero rate, not a gap."""
    routes, route_of = _used(routes, route_of)
    width, counts = len(routes), steps.counts()
    cell = ((np.cumsum(counts) - counts)[phase_of] + step_of) * width + route_of
    size = int(counts.sum()) * width
    status = pc.fill_null(pc.greater_equal(done.column("http.resp.status"), 500), False)
    failed = status.to_numpy(zero_copy_only=False)
    took = done.column("http.resp.took_ms").to_numpy(zero_copy_only=False)
    grid_phase = np.repeat(np.arange(len(counts)), counts * width)
    grid_step = np.concatenate([np.repeat(np.arange(n), width) for n in counts] or [_int(0)])
    seconds = steps.seconds()[grid_phase]
    return _Part(
        source="frontend-log",
        service=[service] * size,
        phase=[steps.names[p] for p in grid_phase],
        ts=steps.ends(grid_phase, grid_step),
        route=routes * int(counts.sum()),
        requests_per_s=np.bincount(cell, minlength=size) / seconds,
        errors_per_s=np.bincount(cell[failed], minlength=size) / seconds,
        latency=groupby.quantiles(np.asarray(took, dtype=np.float64), cell, size, QUANTILES),
    )


def _attributed(  # noqa: PLR0917
    callees: list[str],
    phase_of: Ints,
    step_of: Ints,
    routes: list[str],
    route_of: Ints,
    steps: _PhaseSteps,
) -> _Part:
    """Errors per (phase, step, route, called service), in that order (names sorted)."""
    names = sorted(set(callees))
    callee_of = _codes(callees, names)
    group, first = groupby.groups(steps.by_name(phase_of), step_of, route_of, callee_of)
    phase_of, step_of = phase_of[first], step_of[first]
    n = len(first)
    return _Part(
        source="frontend-log",
        service=[callees[i] for i in first],
        phase=[steps.names[p] for p in phase_of],
        ts=steps.ends(phase_of, step_of),
        route=[routes[i] for i in route_of[first]],
        requests_per_s=_nan(n),  # calls to the callee are not logged
        errors_per_s=np.bincount(group, minlength=n) / steps.seconds()[phase_of],
        latency=[_nan(n) for _ in QUANTILES],
    )


def _named_service(text: str, services: list[str]) -> str | None:
    """The first service the error text names (longest names first: no partial match)."""
    found = [(text.find(s), s) for s in services if s in text]
    return min(found)[1] if found else None


def _locust(lines: pa.Table, steps: _PhaseSteps, entrypoint: str) -> list[_Part]:
    """The load generator's stats rows -> per (phase, step, route) the mean over the prints
    in the step of the rates each print gives (a route's rows in one print summed)."""
    if not lines.num_rows:
        return []
    line = lines.column("line")
    rows = np.flatnonzero(pc.match_substring_regex(line, STATS_ROW).to_numpy(zero_copy_only=False))
    ts = lines.column("ts").to_numpy()[rows]
    phase_of, step_of = steps.locate(ts, lines.column("phase").take(rows))
    inside = step_of >= 0
    rows, ts, phase_of, step_of = rows[inside], ts[inside], phase_of[inside], step_of[inside]
    if not len(rows):
        return []
    line = line.take(rows)
    head, tail = pc.extract_regex(line, _ROW_HEAD), pc.extract_regex(line, _ROW_TAIL)
    method, name = pc.struct_field(head, "method"), pc.struct_field(head, "name")
    aggregated = pc.and_(pc.equal(name, AGGREGATED), pc.equal(method, ""))
    total = aggregated.to_numpy(zero_copy_only=False)
    named, route_of = _routes(pc.if_else(pc.equal(method, ""), "GET", method), name)
    routes, route_of = _used([*named, "*"], np.where(total, len(named), route_of))
    rps, fps, med = (
        pc.cast(pc.struct_field(tail, key), pa.float64()).to_numpy(zero_copy_only=False)
        for key in ("rps", "fps", "med")
    )
    phase_rank = steps.by_name(phase_of)
    # a print: a route's rows at one ts (summed, as pandas' group-by sum did)
    label, first = groupby.groups(phase_rank, step_of, route_of, ts)
    prints = len(first)
    rps_sum, _ = groupby.kahan_sums(rps, label, prints)
    fps_sum, _ = groupby.kahan_sums(fps, label, prints)
    med_max = _nan(prints)
    np.fmax.at(med_max, label, np.where(total, med, np.nan))
    # the prints are in (phase, step, route, ts) order: a step's prints by ascending ts
    step_label, head_of = groupby.groups(phase_rank[first], step_of[first], route_of[first])
    n, rows = len(head_of), first[head_of]
    rps_total, count = groupby.kahan_sums(rps_sum, step_label, n)
    fps_total, _ = groupby.kahan_sums(fps_sum, step_label, n)
    return [
        _Part(
            source="locust-stats",
            service=[entrypoint] * n,
            phase=[steps.names[p] for p in phase_of[rows]],
            ts=steps.ends(phase_of[rows], step_of[rows]),
            route=[routes[i] for i in route_of[rows]],
            requests_per_s=rps_total / count,
            errors_per_s=fps_total / count,
            latency=[groupby.last(med_max, step_label, n), _nan(n), _nan(n)],
        )
    ]


def _times(table: pa.Table, phase: str) -> Floats:
    """The ``ts`` of the rows of ``phase``."""
    mask = pc.equal(table.column("phase"), phase).to_numpy(zero_copy_only=False)
    times: Floats = table.column("ts").to_numpy()[mask]
    return times


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
    named = services if services is not None else pc.unique(logs.column("service")).to_pylist()
    services = sorted({s for s in named if s not in {loadgen, entrypoint}}, key=len, reverse=True)
    lines = logs.select(["ts", "phase", "line"])  # filtering the other columns costs time
    front = lines.filter(pc.equal(logs.column("service"), entrypoint))
    front = front.filter(pc.match_substring_regex(front.column("line"), _REQUEST_LINES))
    # No stats table printed (``System.load_stats`` None): nothing to read from its lines.
    printed = loadgen if system.load_stats is not None else None
    load = lines.filter(pc.equal(logs.column("service"), printed or ""))
    edges: dict[str, Floats] = {}
    for phase in phases:
        events = np.concatenate([_times(front, phase), _times(load, phase)])
        bounds = _steps(_times(metrics, phase), events)
        if len(bounds) >= 2:
            edges[phase] = bounds
    steps = _PhaseSteps(edges)
    parts = [*_entry(front, steps, services, system), *_locust(load, steps, entrypoint)]
    tables = [p.table() for p in parts if len(p.ts)]
    if not tables:
        return REQUEST_TABLE.empty_table()
    table = pa.concat_tables(tables)
    rank = pa.array(_codes(table.column("phase").to_pylist(), phases))
    order = pc.sort_indices(
        table.append_column("rank", rank),
        sort_keys=[(k, "ascending") for k in ("rank", "ts", "source", "service", "route")],
    )
    table = table.take(order)
    table = table.append_column("case_id", pa.repeat(pa.scalar(case_id), table.num_rows))
    return table.select(REQUEST_TABLE.names).cast(REQUEST_TABLE)
