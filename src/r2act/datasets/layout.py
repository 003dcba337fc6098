"""Names and table schemas of a published dataset (DESIGN section 7), in one place.

::

    README.md  croissant.json  folds.json  SHA256SUMS  schema/*.schema.json  figures/*.png
    cases.parquet                                 method-visible: one row per case
    observations/{logs,events,metrics,state,requests}.parquet
                                                  method-visible, keyed by case_id + phase
                                                  (requests: derived, see ``requests``)
    observations/traces.parquet                   method-visible, optional: one row per span,
                                                  only when the runs collected traces
    answers/incidents.parquet  answers/key.json   the answers: incident id <-> case id, labels,
    answers/audit_trail.parquet                   gold, valid and invalid plans, the fault;
    answers/provenance/{annotations,chaos_objects,chaos_status,chaos_events}.parquet

Everything a method may read is keyed by an opaque case id (``ids``); everything that
names or implies the answer lives under ``answers/``, which no view includes. Every table
is Parquet (nested values as JSON strings), so one loader reads them all. The schemas are
explicit (never inferred) so a rebuild writes identical bytes and a reader in any language
knows the column types without opening a file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final, Literal

import pyarrow as pa

from r2act.datasets import checksums
from r2act.errors import DataError
from r2act.quality_gate.rawstore import LOG_SCHEMA

README: Final = "README.md"
SHA256SUMS: Final = checksums.SHA256SUMS
"""Named in ``checksums``, which a digest check imports without this module's Arrow schemas."""
CROISSANT: Final = "croissant.json"
FOLDS: Final = "folds.json"
SCHEMA_DIR: Final = "schema"
FIGURES_DIR: Final = "figures"
CASES: Final = "cases.parquet"
OBSERVATIONS: Final = "observations"
LOGS: Final = "observations/logs.parquet"
EVENTS: Final = "observations/events.parquet"
METRICS: Final = "observations/metrics.parquet"
STATE: Final = "observations/state.parquet"
REQUESTS: Final = "observations/requests.parquet"
TRACES: Final = "observations/traces.parquet"
"""Spans (issue 24): written only when a raw incident holds traces, so a dataset of runs
without traces keeps exactly the files (and bytes) it always had."""
ANSWERS: Final = "answers"
INCIDENTS: Final = "answers/incidents.parquet"
KEY: Final = "answers/key.json"
AUDIT_TRAIL: Final = "answers/audit_trail.parquet"
PROVENANCE: Final = "answers/provenance"
ANNOTATIONS: Final = "answers/provenance/annotations.parquet"
CHAOS_OBJECTS: Final = "answers/provenance/chaos_objects.parquet"
CHAOS_STATUS: Final = "answers/provenance/chaos_status.parquet"
CHAOS_EVENTS: Final = "answers/provenance/chaos_events.parquet"

View = Literal["logs", "logs+events", "full", "full+traces"]
PAPER_VIEWS: Final[dict[str, tuple[str, ...]]] = {
    "logs": (CASES, LOGS),
    "logs+events": (CASES, LOGS, EVENTS),
    "full": (CASES, LOGS, EVENTS, METRICS, STATE, REQUESTS),
}
"""The paper's modality ablation: each view is a subset of the method-visible tables."""
VIEWS: Final[dict[str, tuple[str, ...]]] = {
    **PAPER_VIEWS,
    "full+traces": (*PAPER_VIEWS["full"], TRACES),
}
"""Every view: the paper's three and ``full+traces`` (``full`` plus the spans), which only
a dataset holding ``TRACES`` can serve."""

METHOD_VISIBLE: Final = (CASES, LOGS, EVENTS, METRICS, STATE, REQUESTS, FOLDS)
"""Everything a method may read; nothing under ``answers/``."""


def _s(name: str) -> pa.Field:
    return pa.field(name, pa.string(), nullable=False)


def _f(name: str) -> pa.Field:
    return pa.field(name, pa.float64(), nullable=False)


def _i(name: str) -> pa.Field:
    return pa.field(name, pa.int64(), nullable=False)


_KEY = [_s("case_id"), _s("phase")]
CASE_TABLE: Final = pa.schema(
    [
        _s("case_id"),
        _i("fold"),
        _s("system"),
        _s("target_kind"),
        _s("phases"),
        _i("log_records"),
        _i("event_records"),
        _i("metric_samples"),
        _s("services_logging"),
        _s("action_space"),
    ]
)
LOG_TABLE: Final = pa.schema([*_KEY, *LOG_SCHEMA])
EVENT_TABLE: Final = pa.schema(
    [
        *_KEY,
        _f("ts"),
        _s("type"),
        _s("reason"),
        _s("object_kind"),
        _s("object_name"),
        _s("message"),
        _i("count"),
        _s("source"),
    ]
)
METRIC_TABLE: Final = pa.schema([*_KEY, _f("ts"), _s("query"), _s("labels"), _f("value")])
STATE_TABLE: Final = pa.schema([*_KEY, _s("state")])
REQUEST_TABLE: Final = pa.schema(
    [
        *_KEY,
        _f("ts"),
        _s("source"),
        _s("service"),
        _s("route"),
        pa.field("requests_per_s", pa.float64()),
        _f("errors_per_s"),
        pa.field("error_ratio", pa.float64()),
        pa.field("latency_p50_ms", pa.float64()),
        pa.field("latency_p95_ms", pa.float64()),
        pa.field("latency_p99_ms", pa.float64()),
    ]
)
TRACE_TABLE: Final = pa.schema(
    [
        *_KEY,
        _s("trace_id"),
        _s("span_id"),
        _s("parent_id"),
        _s("service"),
        _s("operation"),
        _s("kind"),
        _f("start"),
        _f("duration_s"),
        _s("status"),
        _s("attributes"),
    ]
)
"""One row per span: the fields of ``schema.traces.Span`` (attributes as JSON text)."""
INCIDENT_TABLE: Final = pa.schema(
    [
        _s("case_id"),
        _s("incident_id"),
        _s("service"),
        _s("fault_type"),
        _s("intensity"),
        _s("mechanism"),
        _s("policy"),
        _s("gold_plan"),
        _s("gold_operation"),
        pa.field("gold_target", pa.string()),
        pa.field("gold_replicas", pa.int64()),
        pa.field("gold_memory_limit", pa.string()),
        pa.field("gold_scope", pa.string()),
        pa.field("gold_dependency", pa.string()),
        _s("valid_plans"),
        _s("invalid_plans"),
        _s("fault"),
        _s("record"),
    ]
)
TRAIL_TABLE: Final = pa.schema([_s("incident_id"), _s("group"), _s("reasons"), _s("verdict")])
PROVENANCE_TABLE: Final = pa.schema([_s("incident_id"), _s("phase"), _s("data")])

VISIBLE_TABLES: Final[dict[str, pa.Schema]] = {
    CASES: CASE_TABLE,
    LOGS: LOG_TABLE,
    EVENTS: EVENT_TABLE,
    METRICS: METRIC_TABLE,
    STATE: STATE_TABLE,
    REQUESTS: REQUEST_TABLE,
}
ANSWER_TABLES: Final[dict[str, pa.Schema]] = {
    INCIDENTS: INCIDENT_TABLE,
    AUDIT_TRAIL: TRAIL_TABLE,
    ANNOTATIONS: PROVENANCE_TABLE,
    CHAOS_OBJECTS: PROVENANCE_TABLE,
    CHAOS_STATUS: PROVENANCE_TABLE,
    CHAOS_EVENTS: PROVENANCE_TABLE,
}
TABLES: Final[dict[str, pa.Schema]] = {**VISIBLE_TABLES, **ANSWER_TABLES}
"""Every table of the dataset, method-visible ones first."""
OPTIONAL_TABLES: Final[dict[str, pa.Schema]] = {TRACES: TRACE_TABLE}
"""Method-visible tables a dataset holds only when its runs collected that modality."""
SCHEMAS: Final[dict[str, pa.Schema]] = {**VISIBLE_TABLES, **OPTIONAL_TABLES, **ANSWER_TABLES}
"""The schema of every table a dataset may hold."""


def present_tables(root: Path) -> dict[str, pa.Schema]:
    """The tables of the dataset at ``root``: every table of ``TABLES`` and the optional
    ones it holds, in ``SCHEMAS`` order (method-visible first)."""
    return {p: s for p, s in SCHEMAS.items() if p in TABLES or (root / p).is_file()}


def require_view(root: Path, view: str) -> None:
    """DataError when the dataset lacks an optional table ``view`` needs (``full+traces``
    on a dataset built from runs without traces)."""
    missing = [t for t in VIEWS[view] if t in OPTIONAL_TABLES]
    missing = [t for t in missing if not (root / t).is_file()]
    if missing:
        raise DataError(
            f"{root}: view {view!r} needs {', '.join(missing)}, which this dataset does not "
            "hold (its runs collected no traces); use view 'full', or collect with a "
            "`traces:` section in the manifest"
        )


def is_visible(path: str) -> bool:
    """Whether a method may read the table at ``path`` (nothing under ``answers/``)."""
    return path in VISIBLE_TABLES or path in OPTIONAL_TABLES


OBSERVATION_TABLES: Final = (LOGS, EVENTS, METRICS)
"""Tables whose per-case row counts the records state (``ObservationRefs``)."""

CATEGORICAL: Final[dict[str, tuple[str, ...]]] = {
    LOGS: ("case_id", "phase", "pod", "container", "service"),
    EVENTS: ("case_id", "phase", "type", "reason", "object_kind", "object_name", "source"),
    METRICS: ("case_id", "phase", "query"),
    STATE: ("case_id", "phase"),
    REQUESTS: ("case_id", "phase", "source", "service", "route"),
    TRACES: ("case_id", "phase", "service", "operation", "kind", "status"),
}
"""Low-cardinality columns ``load`` reads as pandas categoricals (memory, issue 15 item 6)."""

ENTRY: Final = "{entry}"
"""Where a description names the system's entry point; ``described`` fills it in."""


def described(text: str, entry: str) -> str:
    """``text`` as a dataset states it: ``entry`` (``card.entry_point``) in place of ENTRY."""
    return text.replace(ENTRY, entry)


FIELD_DOCS: Final[dict[str, str]] = {
    "case_id": "Opaque case id (HMAC of the incident id with the dataset's salt); joins the "
    "method-visible tables.",
    "incident_id": "Incident id; it names the root cause, so it appears only under answers/.",
    "phase": "Collection phase: pre, during or post.",
    "fold": "Cross-validation fold (0-based) of the case; the same as folds.json.",
    "system": "System under test (its topology is in r2act.systems).",
    "target_kind": "Where it ran: sim (r2act's simulator) or kubernetes.",
    "phases": "Phases collected, as a JSON list.",
    "log_records": "Log records over all phases.",
    "event_records": "Method-visible Kubernetes events over all phases.",
    "metric_samples": "Metric samples over all phases.",
    "services_logging": "Services with at least one log record, as a JSON list.",
    "action_space": "The admissible plans as JSON (an ActionSpace). The same for every "
    "case of one system, so it carries no answer.",
    "ts": "Seconds since the epoch (UTC).",
    "pod": "Pod name.",
    "container": "Container name.",
    "service": "The pod's app label (requests: the called service).",
    "line": "The raw log line in the service's own format.",
    "type": "Event type: Normal or Warning.",
    "reason": "Machine-readable event reason.",
    "object_kind": "Kind of the involved object.",
    "object_name": "Name of the involved object.",
    "message": "Human-readable event message.",
    "count": "How many times the event happened.",
    "source": "Component that reported the event (requests: the log or stats it was derived from).",
    "query": "Name of the campaign metric query.",
    "labels": "Series labels as JSON with sorted keys.",
    "value": "Sample value.",
    "state": "Deployments and pods at the end of the phase, as JSON (a ClusterState).",
    "route": "Request route 'METHOD /path', product ids as '*'; '*' alone: all routes.",
    "requests_per_s": "Requests per second in the step ending at ts (null where the source "
    "does not log the calls, e.g. a called service's rows).",
    "errors_per_s": "Failed requests per second in the step (HTTP status >= 500, Locust "
    f"failures, or {ENTRY} errors naming the called service).",
    "error_ratio": "errors_per_s / requests_per_s (null without requests).",
    "latency_p50_ms": "Median latency in ms (null when no request completed).",
    "latency_p95_ms": "95th-percentile latency in ms (null when no request completed).",
    "latency_p99_ms": "99th-percentile latency in ms (null when no request completed).",
    "fault_type": "Root-cause fault type (label).",
    "intensity": "Fault intensity.",
    "mechanism": "Injection mechanism.",
    "policy": "Recovery-semantics policy the plans were labelled under.",
    "gold_plan": "The canonical valid plan as JSON (operation, target and parameters).",
    "gold_operation": "Operation of the gold plan.",
    "gold_target": "Target deployment of the gold plan (null for no_action).",
    "gold_replicas": "scale_out: replica count of the gold plan (else null).",
    "gold_memory_limit": "increase_memory_limit: the gold plan's new limit (else null).",
    "gold_scope": "rollback_config: the gold plan's route-rule scope (else null).",
    "gold_dependency": "repair_dependency: the endpoint the gold plan repairs (else null).",
    "valid_plans": "P+: valid plan patterns as a JSON list.",
    "invalid_plans": "P-: tagged invalid plans as a JSON list.",
    "fault": "The injected fault as JSON (a FaultSpec).",
    "record": "The whole BenchmarkRecord as JSON (what r2act.datasets.load_records reads).",
    "group": "Audit group: warning, failed or pilot.",
    "reasons": "Problem codes that kept the incident out, as a JSON list.",
    "verdict": "The whole audit verdict as JSON.",
    "data": "The provenance item as JSON.",
}
"""One sentence per column, for the schemas and Croissant (through ``described``)."""

TRACE_FIELD_DOCS: Final[dict[str, str]] = {
    "trace_id": "Trace id: 32 lower-case hex digits, shared by every span of one trace.",
    "span_id": "Span id: 16 lower-case hex digits.",
    "parent_id": "The parent span's id; empty for a trace's root span.",
    "service": "The service.name resource attribute of the process that emitted the span.",
    "operation": "The span name, as the service's instrumentation sets it.",
    "kind": "OpenTelemetry span kind, lower case: server, client, internal, producer or consumer.",
    "start": "Span start, seconds since the epoch (UTC).",
    "duration_s": "End minus start, seconds.",
    "status": "OpenTelemetry span status code, lower case: unset, ok or error.",
    "attributes": "The span's attributes as JSON with sorted keys.",
}
"""Columns of the traces table whose meaning differs from (or is absent in) ``FIELD_DOCS``."""


def field_doc(table: str, name: str) -> str:
    """The sentence describing column ``name`` of ``table`` (before ``described``)."""
    if table == TRACES and name in TRACE_FIELD_DOCS:
        return TRACE_FIELD_DOCS[name]
    return FIELD_DOCS[name]
