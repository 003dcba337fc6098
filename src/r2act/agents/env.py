"""A tool environment over one case's snapshot: what an agent may ask, answered from the view.

Every answer is a JSON-able dict built only from :class:`~r2act.agents.cases.CaseInputs`
(the method-visible tables of the chosen view), in a fixed order, and bounded: a list is
cut at its limit and a ``note`` says how much was left out and how to narrow the question.
Asking for a modality the view leaves out is answered with an ``error`` naming the view, so
the paper's modality ablation holds for agents too. No answer carries the case id, and
nothing from a record's labels, plan sets or fault is reachable: those never cross the
:mod:`~r2act.agents.cases` boundary. ``submit`` checks a prediction's shape (not its
correctness) and keeps it.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
import pyarrow.compute as pc
import re2
from pydantic import ValidationError

from r2act.agents.cases import CaseInputs
from r2act.agents.tool_types import MAX_LIMIT, Answer, ToolError
from r2act.schema import PHASES, Prediction
from r2act.schema.traces import SPAN_STATUSES

if TYPE_CHECKING:  # a case arrives as DataFrames, so pandas is loaded by reading the first
    import pandas as pd

DEFAULT_LIMIT = 50
MAX_LINE_CHARS = 400
MAX_POINTS = 60
HIDDEN_ANNOTATION = "r2act.io/"
"""Template annotations with this prefix are the tool's own bookkeeping, never shown."""


def _re2_options() -> Any:
    options = re2.Options()
    options.log_errors = False  # a bad pattern is the agent's error, answered, not logged
    options.dot_nl = True  # Prometheus 3: "." in a label regex matches a newline too
    options.max_mem = 8 << 20  # bounds the compiled program; a larger one is refused
    return options


_RE2 = _re2_options()


def label_regex(value: str) -> Any:
    """``value`` compiled as Prometheus compiles a label regex: RE2 syntax, fully anchored.

    RE2 matches in time linear in the input whatever the pattern, so a pathological
    matcher such as ``(.*.*)*x`` costs what a plain one costs (Python's ``re`` backtracks
    on it for ever). Patterns RE2 does not accept (backreferences, lookarounds) are
    refused, as Prometheus refuses them.
    """
    try:
        return re2.compile(value, _RE2)
    except re2.error as error:
        reason = error.args[0] if error.args else error
        text = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise ToolError(f"metric selector: bad regex {value[:80]!r} ({text})") from None


@dataclass(frozen=True)
class Matcher:
    """One label matcher of a metric selector: ``label op "value"``."""

    label: str
    op: str
    value: str
    pattern: Any = field(default=None, compare=False, repr=False)
    """The compiled RE2 program of ``=~`` and ``!~`` (built by :func:`parse_selector`)."""

    def keep(self, labels: dict[str, str]) -> bool:
        """True when ``labels`` pass this matcher (a missing label reads as '')."""
        have = labels.get(self.label, "")
        if self.op == "=":
            return have == self.value
        if self.op == "!=":
            return have != self.value
        pattern = self.pattern if self.pattern is not None else label_regex(self.value)
        matched = pattern.fullmatch(have) is not None
        return matched if self.op == "=~" else not matched


_SELECTOR = re.compile(r"^\s*([a-zA-Z_:][a-zA-Z0-9_:]*)\s*(?:\{(.*)\})?\s*$")
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*,?')


def parse_selector(selector: str) -> tuple[str, list[Matcher]]:
    """``name`` or ``name{label="v", label=~"re"}`` (the subset the simulator understands)."""
    found = _SELECTOR.match(selector)
    if found is None:
        raise ToolError(
            f'metric selector {selector[:80]!r}: write NAME or NAME{{label="value"}} '
            "(operators = != =~ !~)"
        )
    name, body = found.group(1), found.group(2) or ""
    matchers, position = [], 0
    while position < len(body.strip()):
        step = _MATCHER.match(body, position)
        if step is None:
            raise ToolError(
                f"metric selector {selector[:80]!r}: bad label matcher near "
                f"{body[position:][:30]!r}"
            )
        label, op, value = step.groups()
        pattern = label_regex(value) if op in {"=~", "!~"} else None
        matchers.append(Matcher(label, op, value, pattern))
        position = step.end()
    return name, matchers


def _phases(phase: str | None) -> list[str]:
    if phase is None:
        return list(PHASES)
    if phase not in PHASES:
        raise ToolError(f"phase {phase!r}: use one of {', '.join(PHASES)} (or omit it for all)")
    return [phase]


def _limit(limit: int | None) -> int:
    if limit is None:
        return DEFAULT_LIMIT
    if not 1 <= limit <= MAX_LIMIT:
        raise ToolError(f"limit {limit}: use 1..{MAX_LIMIT}")
    return limit


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[: MAX_LINE_CHARS - 1] + "…"


def _note(shown: int, total: int, how: str) -> Answer:
    if shown >= total:
        return {}
    return {"note": f"showing {shown} of {total}; {total - shown} left out ({how})"}


def _arrow(column: pd.Series[Any]) -> pa.ChunkedArray:
    """A column as Arrow (zero-copy for the Arrow-backed columns a case is read into)."""
    return pa.chunked_array(column)


def _text(column: pd.Series[Any]) -> pa.ChunkedArray:
    """A text column as Arrow strings (a categorical, or an empty untyped column, cast)."""
    array = _arrow(column)
    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return array
    return array.cast(pa.large_string())


def _counts(columns: dict[str, pd.Series[Any]]) -> dict[tuple[str, ...], int]:
    """Rows per distinct combination of ``columns`` (one Arrow group-by, no Python loop)."""
    names = list(columns)
    table = pa.table({n: _text(c) for n, c in columns.items()})
    grouped = table.group_by(names).aggregate([([], "count_all")])
    keys = [grouped.column(n).to_pylist() for n in names]
    counts = grouped.column("count_all").to_pylist()
    return {tuple(map(str, k)): int(n) for *k, n in zip(*keys, counts, strict=True)}


def _windows(tables: list[pd.DataFrame | None]) -> dict[str, list[float]]:
    """First and last timestamp of each phase over ``tables`` (Arrow group-bys)."""
    windows: dict[str, list[float]] = {}
    for frame in tables:
        if frame is None or not len(frame):
            continue
        table = pa.table({"phase": _text(frame["phase"]), "ts": _arrow(frame["ts"])})
        bounds = table.group_by("phase").aggregate([("ts", "min"), ("ts", "max")])
        for phase, low, high in zip(
            bounds.column("phase").to_pylist(),
            bounds.column("ts_min").to_pylist(),
            bounds.column("ts_max").to_pylist(),
            strict=True,
        ):
            old = windows.get(str(phase), [float(low), float(high)])
            windows[str(phase)] = [min(old[0], float(low)), max(old[1], float(high))]
    return {p: windows[p] for p in PHASES if p in windows}


def _equal(column: pd.Series[Any], value: str) -> npt.NDArray[np.bool_]:
    """``column == value`` as a NumPy mask, computed by Arrow."""
    found = pc.equal(_text(column), value)
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)


_RE2_SPECIAL = frozenset("\\.+*?()|[]{}^$")


def _literal(text: str) -> str:
    """An RE2 pattern matching ``text`` literally (every metacharacter escaped)."""
    return "".join("\\" + c if c in _RE2_SPECIAL else c for c in text)


def _among(column: pd.Series[Any], values: list[str]) -> npt.NDArray[np.bool_]:
    """``column in values`` as a NumPy mask, computed by Arrow."""
    array = _text(column)
    found = pc.is_in(array, value_set=pa.array(values, array.type))
    return np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)


def _round(value: float) -> float | None:
    return None if math.isnan(value) or math.isinf(value) else round(value, 6)


Floats = npt.NDArray[np.float64]
MetricIndex = dict[str, dict[str, tuple[dict[str, str], dict[str, tuple[Floats, Floats]]]]]


def _stats(stamps: Floats, values: Floats, step: float | None) -> Answer:
    """Summary of one series in one phase (points averaged per ``step`` when given)."""
    stats: Answer = {
        "n": len(values),
        "min": _round(float(values.min())),
        "mean": _round(float(values.mean())),
        "max": _round(float(values.max())),
        "last": _round(float(values[-1])),
    }
    if step is not None:
        buckets = (stamps // step) * step
        keys, first = np.unique(buckets, return_index=True)
        sums = np.add.reduceat(values, first)
        counts = np.diff(np.append(first, len(values)))
        points = [[float(k), _round(float(v))] for k, v in zip(keys, sums / counts, strict=True)]
        stats["points"] = points[:MAX_POINTS]
        if len(points) > MAX_POINTS:
            stats["note"] = f"{len(points) - MAX_POINTS} later points left out (raise step)"
    return stats


class CaseEnvironment:
    """The tools over one case. Construct one per case; answers never change between calls."""

    def __init__(self, case: CaseInputs) -> None:
        self.case = case
        self.submission: Prediction | None = None
        # log rows in time order, as positions into the stored rows (stored order breaks
        # ties): a tool picks its rows by mask first and reorders only what it returns
        self._order = np.argsort(case.logs["ts"].to_numpy(), kind="stable")
        self._metrics: MetricIndex | None = None
        self._pods = self._pod_services()

    # -- helpers ------------------------------------------------------------------------

    def _pod_services(self) -> dict[str, str]:
        logs = self.case.logs
        pods = {
            pod: service for pod, service in _counts({"pod": logs["pod"], "s": logs["service"]})
        }
        for state in self.case.states.values():
            for pod_state in state.pods:
                pods.setdefault(pod_state.name, pod_state.app)
        return pods

    def _service_of_pod(self, pod: str) -> str:
        if pod in self._pods:
            return self._pods[pod]
        for name in sorted(self.case.topology.names, key=len, reverse=True):
            if pod.startswith(name + "-"):
                return name
        return ""

    def _require(self, what: str, table: object) -> None:
        if table is None or (isinstance(table, dict) and not table):
            raise ToolError(
                f"{what} are not in view {self.case.view!r} "
                "(views: logs, logs+events, full, full+traces)"
            )

    def _service(self, service: str | None) -> str | None:
        if service is not None and service not in self.case.topology.names:
            raise ToolError(
                f"service {service!r}: unknown (services: {', '.join(self.case.topology.names)})"
            )
        return service

    # -- tools --------------------------------------------------------------------------

    def services(self) -> Answer:
        """Every deployment with its pods and per-phase log/event counts, and phase windows."""
        case = self.case
        windows = _windows([case.logs, case.events, case.metrics])
        logs = case.logs
        counts = _counts({"service": logs["service"], "phase": logs["phase"]})
        events_by: dict[tuple[str, ...], int] = {}
        if case.events is not None and len(case.events):
            named = _counts({"name": case.events["object_name"], "phase": case.events["phase"]})
            for (name, phase), n in named.items():
                key = (self._service_of_pod(name) or name, phase)
                events_by[key] = events_by.get(key, 0) + n
        out = []
        for name in self.case.topology.names:
            pods = sorted(p for p, s in self._pods.items() if s == name)
            entry: Answer = {"name": name, "pods": pods}
            entry["log_lines"] = {p: counts.get((name, p), 0) for p in PHASES}
            if case.events is not None:
                entry["events"] = {p: events_by.get((name, p), 0) for p in PHASES}
            out.append(entry)
        return {"services": out, "phases": windows, "view": case.view}

    def topology(self) -> Answer:
        """Deployments, their ports, limits, dependency variables, call graph and HTTP routes."""
        topo = self.case.topology
        return {
            "entrypoint": topo.entrypoint,
            "deployments": [
                {
                    "name": d.name,
                    "language": d.language,
                    "replicas": d.replicas,
                    "endpoint": d.endpoint,
                    "calls": list(d.calls),
                    "env": dict(d.env),
                    "container": d.main.name,
                    "memory_limit": d.main.memory_limit,
                    "cpu_limit": d.main.cpu_limit,
                }
                for d in topo.deployments
            ],
            "routes": [
                {"scope": r.scope, "services": list(r.services), "weight": r.weight}
                for r in topo.routes
            ],
        }

    def logs(  # noqa: PLR0917 - the tool's arguments, in the order agents see them
        self,
        service: str | None = None,
        phase: str | None = None,
        since: float | None = None,
        until: float | None = None,
        contains: str | None = None,
        limit: int | None = None,
    ) -> Answer:
        """Log lines in time order, filtered; each ``[ts, pod, line]``, long lines cut."""
        self._service(service)
        n = _limit(limit)
        logs = self.case.logs
        stamps = logs["ts"].to_numpy(dtype=float)
        mask = _among(logs["phase"], _phases(phase))
        if service is not None:
            mask &= _equal(logs["service"], service)
        if since is not None:
            mask &= stamps >= since
        if until is not None:
            mask &= stamps <= until
        if contains:
            # RE2 finds a literal several times faster than Arrow's substring kernel
            found = pc.match_substring_regex(_text(logs["line"]), _literal(contains))
            mask &= found.to_numpy(zero_copy_only=False)
        picked = self._order[mask[self._order]]  # matching rows, in time order
        head = pa.array(picked[:n], pa.int64())
        pods = _text(logs["pod"]).take(head).to_pylist()
        lines = _text(logs["line"]).take(head).to_pylist()
        rows = [
            [round(float(ts), 3), str(pod), _cut(str(line))]
            for ts, pod, line in zip(stamps[picked[:n]], pods, lines, strict=True)
        ]
        how = "narrow with service, phase, since/until or contains, or raise limit"
        return {"lines": rows, "matched": len(picked), **_note(len(rows), len(picked), how)}

    def events(
        self,
        phase: str | None = None,
        object_name: str | None = None,
        reason: str | None = None,
        type: str | None = None,
        limit: int | None = None,
    ) -> Answer:
        """Kubernetes events in time order, filtered (not in view 'logs')."""
        events = self.case.events
        self._require("events", events)
        assert events is not None
        mask = events["phase"].isin(_phases(phase))
        if object_name is not None:
            mask &= events["object_name"].str.startswith(object_name)
        if reason is not None:
            mask &= events["reason"] == reason
        if type is not None:
            mask &= events["type"] == type
        picked = events[mask].sort_values(["ts", "object_name", "reason", "message"], kind="stable")
        n = _limit(limit)
        rows = [
            {
                "ts": round(float(str(e["ts"])), 3),
                "phase": str(e["phase"]),
                "type": str(e["type"]),
                "reason": str(e["reason"]),
                "object": f"{e['object_kind']}/{e['object_name']}",
                "message": _cut(str(e["message"])),
                "count": int(str(e["count"])),
            }
            for e in picked.head(n).to_dict("records")
        ]
        how = "narrow with phase, object_name, reason or type, or raise limit"
        return {"events": rows, "matched": len(picked), **_note(len(rows), len(picked), how)}

    def metric_names(self) -> Answer:
        """The metric names stored for this case (not in views 'logs' and 'logs+events')."""
        metrics = self.case.metrics
        self._require("metrics", metrics)
        assert metrics is not None
        return {"metrics": sorted(map(str, metrics["query"].unique()))}

    def metrics(self, query: str, phase: str | None = None, step: float | None = None) -> Answer:
        """Series matching a selector, per phase: min/mean/max/last and (with ``step``) points.

        Labels gain ``service`` (the pod's app). ``step`` averages points into buckets of
        that many seconds; at most ``MAX_POINTS`` points per series and phase are shown.
        """
        metrics = self.case.metrics
        self._require("metrics", metrics)
        assert metrics is not None
        name, matchers = parse_selector(query)
        if step is not None and not 1 <= step <= 3600:
            raise ToolError(f"step {step}: use 1..3600 seconds (or omit it for no points)")
        index = self._metric_index()
        if name not in index:
            known = ", ".join(sorted(index))
            raise ToolError(f"metric {name!r}: not stored for this case (stored: {known})")
        wanted = _phases(phase)
        series: dict[str, Answer] = {}
        for key, (labels, by_phase) in sorted(index[name].items()):
            if not all(m.keep(labels) for m in matchers):
                continue
            phases: dict[str, Answer] = {}
            for phase_name in wanted:
                if phase_name in by_phase:
                    stamps, values = by_phase[phase_name]
                    phases[phase_name] = _stats(stamps, values, step)
            if phases:
                series[key] = {"labels": labels, "phases": phases}
        ordered = [series[k] for k in sorted(series)]
        shown = ordered[:MAX_LIMIT]
        how = f'narrow with a label matcher, e.g. {{service="{self.case.topology.entrypoint}"}}'
        return {"metric": name, "series": shown, **_note(len(shown), len(ordered), how)}

    def _metric_index(self) -> MetricIndex:
        """name -> labels JSON -> (labels with service, phase -> (ts, values) in time order)."""
        if self._metrics is not None:
            return self._metrics
        index: MetricIndex = {}
        frame = self.case.metrics
        assert frame is not None
        order = np.lexsort((frame["ts"].to_numpy(), frame["phase"].to_numpy(),
                            frame["labels"].to_numpy(), frame["query"].to_numpy()))  # fmt: skip
        columns = [frame[c].to_numpy()[order] for c in ("query", "labels", "phase", "ts", "value")]
        start = 0
        total = len(order)
        while start < total:
            name, key, phase = columns[0][start], columns[1][start], columns[2][start]
            end = start
            while end < total and (columns[0][end], columns[1][end], columns[2][end]) == (
                name,
                key,
                phase,
            ):
                end += 1
            by_key = index.setdefault(str(name), {})
            if str(key) not in by_key:
                labels: dict[str, str] = json.loads(str(key))
                pod = labels.get("pod", "")
                if pod:
                    labels = {**labels, "service": self._service_of_pod(pod)}
                by_key[str(key)] = (labels, {})
            stamps = columns[3][start:end].astype(float)
            values = columns[4][start:end].astype(float)
            by_key[str(key)][1][str(phase)] = (stamps, values)
            start = end
        self._metrics = index
        return index

    def requests(
        self,
        service: str | None = None,
        route: str | None = None,
        source: str | None = None,
        phase: str | None = None,
        points: bool = False,
    ) -> Answer:
        """Request series per (source, service, route) and phase (view 'full' only).

        ``locust-stats`` is what the users saw (requests and failures per second per
        route, from the load generator's stats table); ``frontend-log`` is what the
        entry point logged (per route, and errors per called backend). Per phase: mean and max
        of each column; ``points`` adds ``[ts, requests/s, errors/s]`` per step.
        """
        table = self.case.requests
        self._require("request series", table)
        assert table is not None
        self._service(service)
        mask = _among(table["phase"], _phases(phase))
        for column, value in (("service", service), ("route", route), ("source", source)):
            if value is not None:
                mask &= _equal(table[column], value)
        rows = np.flatnonzero(mask)
        keys = {c: table[c].to_numpy(dtype=object) for c in ("source", "service", "route", "phase")}
        stamps = table["ts"].to_numpy(dtype=float)
        values = {c: table[c].to_numpy(dtype=float, na_value=np.nan) for c in _REQUEST_COLUMNS}
        series_of = [
            (str(keys["source"][i]), str(keys["service"][i]), str(keys["route"][i])) for i in rows
        ]
        ordered = sorted(range(len(rows)), key=lambda k: (*series_of[k], stamps[rows[k]], k))
        series: list[Answer] = []
        for (src, svc, rte), members in itertools.groupby(ordered, key=lambda k: series_of[k]):
            picked = rows[list(members)]
            phases: dict[str, Answer] = {}
            for phase_name in PHASES:
                part = picked[keys["phase"][picked] == phase_name]
                if len(part):
                    phases[phase_name] = _request_stats(part, stamps, values, points)
            series.append({"source": src, "service": svc, "route": rte, "phases": phases})
        shown = series[:MAX_LIMIT]
        how = "narrow with service, route, source or phase"
        return {"series": shown, **_note(len(shown), len(series), how)}

    def traces(  # noqa: PLR0917 - the tool's arguments, in the order agents see them
        self,
        trace_id: str | None = None,
        service: str | None = None,
        operation: str | None = None,
        status: str | None = None,
        phase: str | None = None,
        since: float | None = None,
        until: float | None = None,
        limit: int | None = None,
    ) -> Answer:
        """Spans (view 'full+traces' only): one whole trace by ``trace_id``, or a search.

        A search filters spans by service, operation (substring of the span name), status,
        phase and start time; it returns the matching spans in start order (at most
        ``limit``) and, over every match, spans, errors and mean/p95 duration per service
        and operation. A trace comes back whole (up to ``MAX_LIMIT`` spans) with each span's
        attributes, parents before children as the start times order them.
        """
        table = self.case.traces
        self._require("traces", table)
        assert table is not None
        if trace_id is not None:
            return self._trace(table, trace_id)
        self._service(service)
        if status is not None and status not in SPAN_STATUSES:
            raise ToolError(f"status {status!r}: use one of {', '.join(SPAN_STATUSES)}")
        n = _limit(limit)
        stamps = table["start"].to_numpy(dtype=float)
        mask = _among(table["phase"], _phases(phase))
        for column, value in (("service", service), ("status", status)):
            if value is not None:
                mask &= _equal(table[column], value)
        if operation:
            found = pc.match_substring(_text(table["operation"]), operation)
            mask &= found.to_numpy(zero_copy_only=False)
        if since is not None:
            mask &= stamps >= since
        if until is not None:
            mask &= stamps <= until
        picked = np.flatnonzero(mask)
        picked = picked[np.argsort(stamps[picked], kind="stable")]
        rows = [_span(table, int(i), attributes=False) for i in picked[:n]]
        how = "narrow with service, operation, status, phase or since/until, or raise limit"
        return {
            "spans": rows,
            "matched": len(picked),
            "operations": _operations(table, picked),
            **_note(len(rows), len(picked), how),
        }

    def _trace(self, table: pd.DataFrame, trace_id: str) -> Answer:
        rows = np.flatnonzero(_equal(table["trace_id"], trace_id))
        if not len(rows):
            raise ToolError(
                f"trace {trace_id[:40]!r}: not in this case (search spans without trace_id "
                "to find trace ids)"
            )
        stamps = table["start"].to_numpy(dtype=float)
        rows = rows[np.argsort(stamps[rows], kind="stable")]
        spans = [_span(table, int(i), attributes=True) for i in rows[:MAX_LIMIT]]
        how = "the trace is longer than the tool returns"
        return {"trace_id": trace_id, "spans": spans, **_note(len(spans), len(rows), how)}

    def state(self, kind: str, name: str | None = None, phase: str = "during") -> Answer:
        """Deployments or pods at the end of a phase (view 'full' only)."""
        self._require("cluster states", self.case.states)
        if phase not in PHASES:
            raise ToolError(f"phase {phase!r}: use one of {', '.join(PHASES)}")
        snapshot = self.case.states.get(phase)
        if snapshot is None:
            raise ToolError(f"no cluster state was read at the end of phase {phase!r}")
        if kind not in {"deployment", "pod"}:
            raise ToolError(f"kind {kind!r}: use 'deployment' or 'pod'")
        if kind == "deployment":
            items = [
                {
                    **d.model_dump(mode="json", exclude={"template_annotations"}),
                    "template_annotations": {
                        k: v
                        for k, v in d.template_annotations.items()
                        if not k.startswith(HIDDEN_ANNOTATION)
                    },
                }
                for d in snapshot.deployments
                if name is None or d.name == name
            ]
        else:
            items = [
                p.model_dump(mode="json")
                for p in snapshot.pods
                if name is None or name in (p.name, p.app)
            ]
        if name is not None and not items:
            raise ToolError(f"no {kind} named {name!r} at the end of phase {phase!r}")
        return {"phase": phase, "kind": kind, "items": items}

    def action_space(self) -> Answer:
        """The admissible operations, targets and field values a plan may use."""
        return self.case.action_space.model_dump(mode="json")

    def submit(
        self, rca: dict[str, Any] | None = None, plan: dict[str, Any] | None = None
    ) -> Answer:
        """Check and keep the answer; a later submission replaces an earlier one."""
        try:
            prediction = Prediction.model_validate(
                {"incident_id": self.case.case_id, "rca": rca or {}, "plan": plan}
            )
        except ValidationError as error:
            first = error.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise ToolError(f"submission rejected: {where}: {first['msg']}") from None
        if prediction.plan is not None and not _inside(self.case, prediction):
            raise ToolError(
                "submission rejected: the plan is outside the action space (see action_space)"
            )
        self.submission = prediction
        return {"accepted": True}


_SPAN_FIELDS = ("trace_id", "span_id", "parent_id", "service", "operation", "kind", "status")


def _span(table: pd.DataFrame, row: int, *, attributes: bool) -> Answer:
    """One span as an agent sees it: ids, names, phase, start, duration in ms, status."""
    span: Answer = {name: str(table[name].iat[row]) for name in _SPAN_FIELDS}
    span["phase"] = str(table["phase"].iat[row])
    span["start"] = round(float(str(table["start"].iat[row])), 6)
    span["duration_ms"] = round(float(str(table["duration_s"].iat[row])) * 1000, 3)
    if attributes:
        parsed = json.loads(str(table["attributes"].iat[row]))
        span["attributes"] = {str(k): _cut(str(v)) for k, v in sorted(parsed.items())}
    return span


def _operations(table: pd.DataFrame, rows: npt.NDArray[np.int64]) -> list[Answer]:
    """Spans, errors and duration (mean, p95, ms) per (service, operation, kind) of ``rows``,
    the busiest first (at most ``MAX_LIMIT``)."""
    if not len(rows):
        return []
    import pandas as pd

    picked = pd.DataFrame(
        {
            "service": table["service"].to_numpy(dtype=object)[rows],
            "operation": table["operation"].to_numpy(dtype=object)[rows],
            "kind": table["kind"].to_numpy(dtype=object)[rows],
            "error": table["status"].to_numpy(dtype=object)[rows] == "error",
            "ms": table["duration_s"].to_numpy(dtype=float)[rows] * 1000,
        }
    )
    grouped = picked.groupby(["service", "operation", "kind"], sort=True)
    summary = grouped.agg(
        spans=("ms", "size"), errors=("error", "sum"), mean_ms=("ms", "mean")
    ).join(grouped["ms"].quantile(0.95).rename("p95_ms"))
    summary = summary.reset_index().sort_values(
        ["spans", "service", "operation"], ascending=[False, True, True], kind="stable"
    )
    return [
        {
            "service": str(r["service"]),
            "operation": str(r["operation"]),
            "kind": str(r["kind"]),
            "spans": int(r["spans"]),
            "errors": int(r["errors"]),
            "mean_ms": _round(float(r["mean_ms"])),
            "p95_ms": _round(float(r["p95_ms"])),
        }
        for r in summary.head(MAX_LIMIT).to_dict("records")
    ]


_REQUEST_COLUMNS = ("requests_per_s", "errors_per_s", "error_ratio", "latency_p95_ms")


def _request_stats(
    rows: npt.NDArray[np.intp], stamps: Floats, columns: dict[str, Floats], points: bool
) -> Answer:
    """Mean and max of each request column over one phase's steps (nulls skipped).

    ``rows`` are positions (in time order) into ``stamps`` and the ``columns``."""
    stats: Answer = {"steps": len(rows)}
    for column in _REQUEST_COLUMNS:
        values = columns[column][rows]
        values = values[~np.isnan(values)]
        if len(values):
            stats[column] = {
                "mean": _round(float(values.mean())),
                "max": _round(float(values.max())),
            }
    if points:
        triples = zip(
            stamps[rows],
            columns["requests_per_s"][rows],
            columns["errors_per_s"][rows],
            strict=True,
        )
        listed = [
            [round(float(ts), 3), _round(float(req)), _round(float(err))]
            for ts, req, err in triples
        ]
        stats["points"] = listed[:MAX_POINTS]
        if len(listed) > MAX_POINTS:
            stats["note"] = f"{len(listed) - MAX_POINTS} later points left out (narrow phase)"
    return stats


def _inside(case: CaseInputs, prediction: Prediction) -> bool:
    assert prediction.plan is not None
    try:
        return case.action_space.contains(prediction.plan)
    except (KeyError, ValueError):
        return False
