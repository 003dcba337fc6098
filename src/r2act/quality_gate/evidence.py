"""Reduce one raw incident to the small facts the checks judge (the only heavy reading).

Every file of an incident is read once, here, and summarised: log counts, error lines,
leak hits, per-series metric statistics, readiness and restarts, chaos status. The checks
then run on these summaries as pure functions, so they are cheap to test with synthetic
evidence and the expensive part (decompressing and parsing logs) happens exactly once.
A file that cannot be read is recorded as unreadable rather than raised, so one corrupt
file costs one incident, never the audit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import yaml

from r2act.quality_gate import rawstore
from r2act.quality_gate.provenance import is_provenance_event, leak_regex, leak_terms
from r2act.quality_gate.rawstore import Annotation, RawIncident
from r2act.schema import PHASES, ChaosStatus, Phase
from r2act.systems.locust import AGGREGATED_ROW_START, FAILS_CELL, LAST_RATE, REQUEST_ROW_START

ERROR_LINE = r"(?i)error|exception|fail|fatal|panic|refused|unavailable|timeout|timed out"
"""A log line that reports something going wrong, across the services' log formats."""
TOOK_MS = r'took_ms\\?"\s*:\s*(?P<ms>[0-9]+(?:\.[0-9]+)?)'
"""A request latency in a log line: the entry point's access-log ``http.resp.took_ms`` field."""


@dataclass(frozen=True)
class LogSummary:
    """Facts about one phase's logs."""

    records: int
    error_lines: int
    services: tuple[str, ...]
    leaks: int = 0
    leak_example: str = ""
    latency_ms: float | None = None
    """Mean request latency the entry point logged (``took_ms``), when it logs one."""
    user_failures_per_s: float | None = None
    """The load generator's current failures/s summed over its stats rows, averaged over the
    phase's prints (``systems.locust``): what users saw fail, when a load generator logs."""


@dataclass(frozen=True)
class EventSummary:
    """Facts about one phase's Kubernetes events, split into visible and provenance."""

    visible: int
    provenance: int
    visible_warnings: int
    chaos_failures: tuple[str, ...]
    leaks: int = 0
    leak_example: str = ""


@dataclass(frozen=True)
class SeriesStats:
    """Mean, standard deviation and sample count of one metric series in one phase."""

    mean: float
    std: float
    count: int


@dataclass(frozen=True)
class MetricSummary:
    """Facts about one phase's metric samples."""

    samples: int
    queries: tuple[str, ...]
    holes: dict[str, float]
    """Per query, the largest span the collection did not see it (seconds): the window's
    edges and stretches no query covers (the scrape answered nothing), and the query's own
    stretches between its first and last sample (``_coverage_holes``)."""
    step_s: float
    """Median spacing of sample times in this phase (0 when too few samples)."""
    series: dict[tuple[str, str], SeriesStats] = field(default_factory=dict)
    leaks: int = 0
    leak_example: str = ""


@dataclass(frozen=True)
class StateSummary:
    """Facts about one phase's cluster state snapshot."""

    pods: int
    not_ready: tuple[str, ...]
    unavailable: tuple[str, ...]
    restarts: int
    leaks: int = 0
    leak_example: str = ""


@dataclass
class PhaseEvidence:
    """Everything the checks need to know about one phase."""

    phase: Phase
    present: bool
    missing: list[str] = field(default_factory=list)
    unreadable: dict[str, str] = field(default_factory=dict)
    window: tuple[float, float] | None = None
    logs: LogSummary | None = None
    events: EventSummary | None = None
    metrics: MetricSummary | None = None
    state: StateSummary | None = None
    chaos: ChaosStatus | None = None
    log_table: pa.Table | None = None
    """The parsed log rows, keyed; kept so an admitted incident can be staged unparsed."""

    @property
    def duration(self) -> float:
        """Window length in seconds (1 when unknown, to keep rates finite)."""
        if self.window is None:
            return 1.0
        return max(self.window[1] - self.window[0], 1.0)


@dataclass
class IncidentEvidence:
    """Everything the checks need to know about one raw incident."""

    incident_id: str
    complete: bool
    annotation: Annotation | None
    annotation_error: str | None
    chaos_yaml_error: str | None
    phases: dict[Phase, PhaseEvidence]
    journal_failures: list[str] = field(default_factory=list)

    @property
    def log_records(self) -> int:
        """Log records over every phase read."""
        return sum(p.logs.records for p in self.phases.values() if p.logs is not None)


def _first_hit(texts: pa.ChunkedArray | pa.Array, pattern: str) -> tuple[int, str]:
    mask = pc.match_substring_regex(texts, pattern)
    hits = int(pc.sum(mask).as_py() or 0)
    if not hits:
        return 0, ""
    example = pc.filter(texts, mask)[0].as_py()
    return hits, str(example)[:200]


def _body(pattern: str) -> str:
    return pattern.removeprefix("(?i)")


@dataclass(frozen=True)
class WrittenLogs:
    """One phase's log lines as the collector has just written them to its log file.

    The summary of a phase's logs reads only the lines and the distinct services and pods,
    so the collector, which has the lines in hand, passes them instead of having the file
    decompressed and parsed again (that parse was most of the cost of judging an incident
    as it is collected). The file and this hold the same rows: ``summarise_written`` and
    ``summarise_logs`` of the parsed file give the same summary.
    """

    lines: pa.Array
    """The ``line`` field of every row, in file order."""
    services: tuple[str, ...]
    """Distinct ``service`` values in order of first appearance."""
    pods: tuple[str, ...]
    """Distinct ``pod`` values in order of first appearance."""


def summarise_logs(table: pa.Table, leak: str, count_errors: bool) -> LogSummary:
    """Counts, services, error lines, latency and leak hits of one phase's log table."""
    if table.num_rows == 0:
        return LogSummary(0, 0, ())
    services = tuple(str(s) for s in pc.unique(table.column("service")).to_pylist())
    pods = pc.unique(table.column("pod"))
    return _summarise(table.column("line"), services, pods, leak, count_errors)


def summarise_written(written: WrittenLogs, leak: str, count_errors: bool) -> LogSummary:
    """``summarise_logs`` of the lines the collector has just written (same summary)."""
    if len(written.lines) == 0:
        return LogSummary(0, 0, ())
    pods = pa.array(written.pods, pa.string())
    return _summarise(written.lines, written.services, pods, leak, count_errors)


def _summarise(
    lines: pa.ChunkedArray | pa.Array,
    services: tuple[str, ...],
    pods: pa.Array,
    leak: str,
    count_errors: bool,
) -> LogSummary:
    """The summary of non-empty ``lines``; ``pods`` distinct, in order of first appearance.

    The ``line`` column is scanned once with the union of the error, leak and stats-row
    patterns; the few lines that match are then classified one pattern at a time, which
    costs a fraction of scanning everything once per pattern. A regex scan costs about
    2 ns a byte whatever the pattern, except a plain literal (RE2 skips ahead to its first
    byte), so the latencies are found by the literal ``took_ms`` on its own pass: with it
    in the union every access-log line was a candidate that each pattern scanned again.
    Each pattern still sees every line it can match, in file order, so every count, first
    example and mean is the one scanning all lines per pattern gives.
    """
    names = tuple(sorted(services))
    union = f"(?i){_body(ERROR_LINE)}|{_body(leak)}|{FAILS_CELL}"
    candidates = pc.filter(lines, pc.match_substring_regex(lines, union))
    errors = 0
    if count_errors and len(candidates):
        errors = int(pc.sum(pc.match_substring_regex(candidates, ERROR_LINE)).as_py() or 0)
    leaks, example = _first_hit(candidates, leak) if len(candidates) else (0, "")
    if not leaks:
        leaks, example = _first_hit(pods, leak)
    latency = failures = None
    if count_errors:
        # every TOOK_MS match holds the literal (case-sensitive, like TOOK_MS itself)
        latency = _mean_latency(pc.filter(lines, pc.match_substring_regex(lines, _TOOK_LITERAL)))
        failures = _user_failures(candidates)
    return LogSummary(len(lines), errors, names, leaks, example, latency, failures)


def _mean_latency(lines: pa.Array) -> float | None:
    # a line without a latency extracts to null: no need to select the timed lines first
    values = pc.struct_field(pc.extract_regex(lines, TOOK_MS), [0])
    mean = pc.mean(pc.cast(values.drop_null(), pa.float64())).as_py()
    return None if mean is None else float(mean)


def _user_failures(lines: pa.Array) -> float | None:
    """Users' failures per second from the load generator's stats rows among ``lines``.

    Per print, the current failures/s of the request rows (every row but Aggregated) add up
    to what users saw fail; averaged over the prints (one Aggregated row each). The rows are
    read rather than the Aggregated total so a table whose total lags its rows still counts.
    """
    # every fails cell holds "%)": a literal leaves the regex few lines (as a regex, since
    # RE2 skips ahead to a literal's first byte; match_substring walks every byte)
    rows = pc.filter(lines, pc.match_substring_regex(lines, _FAILS_LITERAL))
    rows = pc.filter(rows, pc.match_substring_regex(rows, FAILS_CELL))
    prints = int(pc.sum(pc.match_substring_regex(rows, AGGREGATED_ROW_START)).as_py() or 0)
    if not prints:
        return None
    requests = pc.filter(rows, pc.match_substring_regex(rows, REQUEST_ROW_START))
    fps = pc.struct_field(pc.extract_regex(requests, LAST_RATE), [0])
    failures = pc.sum(pc.cast(fps, pa.float64())).as_py() or 0.0
    return float(failures) / prints


_FAILS_LITERAL: Final = r"%\)"
"""A literal in every match of ``FAILS_CELL`` (its percent and parenthesis), as a regex."""
_TOOK_LITERAL: Final = "took_ms"
"""The literal every match of ``TOOK_MS`` begins with."""


def _largest_hole(times: np.ndarray, window: tuple[float, float] | None) -> float:
    """Largest span without samples among sorted distinct ``times``, window edges included."""
    diffs = np.diff(times)
    edges = [times[0] - window[0], window[1] - times[-1]] if window else []
    return max([float(diffs.max()) if diffs.size else 0.0, *(float(e) for e in edges)])


def _interior_hole(times: np.ndarray) -> float:
    """Largest span between consecutive sorted distinct ``times`` (0 for fewer than two)."""
    return float(np.diff(times).max()) if times.size > 1 else 0.0


def _coverage_holes(
    ts: np.ndarray, masks: Mapping[str, np.ndarray], window: tuple[float, float] | None
) -> dict[str, float]:
    """Per query (``masks``: its rows of ``ts``), the largest span the collection missed it.

    A collection gap is a stretch in which the scrape returned nothing, so the window's edges
    are judged over the union of every query's sample times (when Prometheus was answering
    at all), and each query only between its own first and last sample. A series that is
    born mid-window (kube-state-metrics' ``last_terminated_reason`` exists only after the
    first termination) or ends in it (a deleted pod's series goes stale) is not a hole at the
    edge it does not cover; a query that stops in the middle and comes back is one, and so
    is a stretch, edge or interior, that no query covers.
    """
    scrape = _largest_hole(np.unique(ts), window)
    return {name: max(scrape, _interior_hole(np.unique(ts[rows]))) for name, rows in masks.items()}


def _step(times: np.ndarray) -> float:
    """The scrape step as this phase shows it: the median spacing of its sample times.

    Taken over all queries together (a campaign range-queries them with one step). A
    collection gap hitting every query inflates it, so checks use the smallest estimate
    over the incident's phases.
    """
    diffs = np.diff(times)
    positive = diffs[diffs > 0]
    return float(np.median(positive)) if positive.size else 0.0


def summarise_metrics(
    table: pa.Table, window: tuple[float, float] | None, leak: str
) -> MetricSummary:
    """Per-query coverage holes and per-series statistics of one phase's metrics."""
    if table.num_rows == 0:
        return MetricSummary(0, (), {}, 0.0)
    queries = tuple(sorted(str(q) for q in pc.unique(table.column("query")).to_pylist()))
    ts = table.column("ts").to_numpy()
    step = _step(np.unique(ts))
    qcol = table.column("query")
    masks = {q: pc.equal(qcol, q).to_numpy(zero_copy_only=False) for q in queries}
    holes = _coverage_holes(ts, masks, window)
    grouped = table.group_by(["query", "labels"]).aggregate(
        [("value", "mean"), ("value", "stddev"), ("value", "count")]
    )
    series = {
        (str(q), str(lab)): SeriesStats(float(m), float(s or 0.0), int(n))
        for q, lab, m, s, n in zip(
            grouped.column("query").to_pylist(),
            grouped.column("labels").to_pylist(),
            grouped.column("value_mean").to_pylist(),
            grouped.column("value_stddev").to_pylist(),
            grouped.column("value_count").to_pylist(),
            strict=True,
        )
    }
    texts = pa.concat_arrays(
        [pc.unique(table.column("labels")), pa.array(list(queries), pa.string())]
    )
    leaks, example = _first_hit(texts, leak)
    return MetricSummary(table.num_rows, queries, holes, step, series, leaks, example)


def _read_phase(
    incident: RawIncident,
    phase: Phase,
    annotation: Annotation | None,
    written: WrittenLogs | None = None,
) -> PhaseEvidence:
    root = incident.root / phase
    evidence = PhaseEvidence(phase=phase, present=root.is_dir())
    if not evidence.present:
        return evidence
    if annotation is not None:
        evidence.window = annotation.windows.get(phase)
    log_file = rawstore.logs_file(root)  # either format
    present = {rawstore.LOGS} if log_file.is_file() else set()
    present |= {n for n in rawstore.PHASE_FILES[1:] if (root / n).is_file()}
    evidence.missing = [n for n in rawstore.PHASE_FILES if n not in present]
    chaos_name = annotation.chaos_name if annotation else ""
    leak = _leak_pattern(incident, annotation)

    def attempt(name: str, read: Callable[[], None]) -> None:
        if name in evidence.missing:
            return
        try:
            read()
        except (OSError, EOFError, ValueError, pa.ArrowException) as exc:  # corrupt data
            evidence.unreadable[name] = f"{type(exc).__name__}: {str(exc)[:200]}"

    def logs() -> None:
        if written is not None:  # just written by the collector: not parsed again
            evidence.logs = summarise_written(written, leak, count_errors=phase != "post")
            return
        table = rawstore.read_logs(log_file)
        evidence.logs = summarise_logs(table, leak, count_errors=phase != "post")
        evidence.log_table = rawstore.keyed(table, rawstore.STAGED_LOG_SCHEMA, incident.id, phase)

    def events() -> None:
        all_events = rawstore.read_events(root / rawstore.EVENTS)
        visible = [e for e in all_events if not is_provenance_event(e, chaos_name)]
        failures = tuple(
            e.message
            for e in all_events
            if e.reason == "Failed" and is_provenance_event(e, chaos_name)
        )
        texts = pa.array([f"{e.reason} {e.object_name} {e.message} {e.source}" for e in visible])
        leaks, example = _first_hit(texts, leak) if visible else (0, "")
        evidence.events = EventSummary(
            visible=len(visible),
            provenance=len(all_events) - len(visible),
            visible_warnings=sum(e.type == "Warning" for e in visible),
            chaos_failures=failures,
            leaks=leaks,
            leak_example=example,
        )

    def metrics() -> None:
        table = rawstore.read_metrics(root / rawstore.METRICS)
        evidence.metrics = summarise_metrics(table, evidence.window, leak)

    def state() -> None:
        snapshot = rawstore.read_state(root / rawstore.STATE)
        leaks, example = _first_hit(pa.array([snapshot.model_dump_json()]), leak)
        evidence.state = StateSummary(
            pods=len(snapshot.pods),
            not_ready=tuple(sorted(p.name for p in snapshot.pods if not p.ready)),
            unavailable=tuple(
                sorted(d.name for d in snapshot.deployments if d.available_replicas < d.replicas)
            ),
            restarts=sum(c.restart_count for p in snapshot.pods for c in p.containers),
            leaks=leaks,
            leak_example=example,
        )

    def chaos() -> None:
        evidence.chaos = rawstore.read_chaos_status(root / rawstore.CHAOS_STATUS)

    attempt(rawstore.LOGS, logs)
    attempt(rawstore.EVENTS, events)
    attempt(rawstore.METRICS, metrics)
    attempt(rawstore.STATE, state)
    attempt(rawstore.CHAOS_STATUS, chaos)
    return evidence


def _leak_pattern(incident: RawIncident, annotation: Annotation | None) -> str:
    if annotation is None:
        terms = leak_terms(incident_id=incident.id, chaos_name="", fault_type="", namespace="")
    else:
        terms = leak_terms(
            incident_id=incident.id,
            chaos_name=annotation.chaos_name,
            fault_type=annotation.incident.fault.type.value,
            namespace=annotation.target.namespace,
        )
    return leak_regex(terms)


def gather(
    incident_dir: Path, written: Mapping[Phase, WrittenLogs] | None = None
) -> IncidentEvidence:
    """Read one raw incident directory into evidence; never raises for bad data.

    ``written``: phases whose log lines the collector has in hand (``WrittenLogs``); their
    log files are summarised from those, not parsed, and keep no ``log_table``."""
    written = written or {}
    incident = RawIncident(incident_dir)
    annotation: Annotation | None = None
    annotation_error: str | None = None
    try:
        annotation = rawstore.read_annotation(incident)
    except (OSError, ValueError) as exc:
        annotation_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
    chaos_yaml_error: str | None = None
    try:
        loaded = yaml.safe_load(incident.file(rawstore.CHAOS_YAML).read_text(encoding="utf-8"))
        if not isinstance(loaded, dict):
            chaos_yaml_error = "chaos.yaml is not a mapping"
    except (OSError, yaml.YAMLError) as exc:
        chaos_yaml_error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
    journal_failures = [
        f"{r.get('step')}: {r.get('error')}"
        for r in rawstore.read_journal(incident)
        if r.get("status") in {"failed", "interrupted"}
    ]
    return IncidentEvidence(
        incident_id=incident.id,
        complete=incident.complete,
        annotation=annotation,
        annotation_error=annotation_error,
        chaos_yaml_error=chaos_yaml_error,
        phases={p: _read_phase(incident, p, annotation, written.get(p)) for p in PHASES},
        journal_failures=journal_failures,
    )
