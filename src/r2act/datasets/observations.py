"""Turn one main incident's raw files into dataset rows: visible tables and provenance rows.

Method-visible rows (logs, events not about chaos objects, metrics, state) get the opaque
``case_id`` and ``phase`` keys; chaos objects, their status and their events become
provenance rows keyed by the incident id (they live under ``answers/``). The split uses
``quality_gate.provenance`` so it is the same line the gate checked for leaks.
``read_incident`` returns Arrow tables and short JSON strings, never Python objects per
log line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from r2act.datasets import layout, requests, traces
from r2act.datasets.layout import (
    EVENT_TABLE,
    LOG_TABLE,
    METRIC_TABLE,
    PROVENANCE_TABLE,
    STATE_TABLE,
    TRACE_TABLE,
)
from r2act.datasets.tables import as_json
from r2act.errors import DataError
from r2act.quality_gate import rawstore
from r2act.quality_gate.provenance import is_provenance_event
from r2act.quality_gate.rawstore import LOG_SCHEMA, RawIncident
from r2act.schema import PHASES
from r2act.systems import INSTALLED, SYSTEMS


def keyed(table: pa.Table, schema: pa.Schema, case_id: str, phase: str) -> pa.Table:
    """``table``'s columns of ``schema`` with constant ``case_id`` and ``phase`` keys."""
    return rawstore.keyed(table, schema, case_id, phase, key="case_id")


@dataclass
class IncidentObservations:
    """Everything one incident contributes to the dataset."""

    incident_id: str
    case_id: str
    logs: pa.Table
    events: pa.Table
    metrics: pa.Table
    state: pa.Table
    requests: pa.Table
    traces: pa.Table | None = None
    """Spans (``layout.TRACE_TABLE``), or None when no phase holds a traces file."""
    provenance: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    """Provenance table name -> (phase, JSON) rows; phase is empty for incident-level items."""

    def provenance_table(self, name: str) -> pa.Table:
        """The rows of one provenance table, keyed by the incident id."""
        rows = self.provenance.get(name, [])
        return pa.Table.from_arrays(
            [
                pa.array([self.incident_id] * len(rows), pa.string()),
                pa.array([p for p, _ in rows], pa.string()),
                pa.array([d for _, d in rows], pa.string()),
            ],
            schema=PROVENANCE_TABLE,
        )


def read_incident(
    incident_dir: Path, case_id: str, staged_logs: Path | None = None
) -> IncidentObservations:
    """Read one raw incident the audit admitted; raises on unreadable data (it was checked).

    Logs come from ``staged_logs`` (the gate's parsed copy, keyed by incident id) when that
    file exists, else from the raw files; either way they are re-keyed by ``case_id``.
    """
    incident = RawIncident(incident_dir)
    ann = rawstore.read_annotation(incident)
    logs, events, metrics, states = [], [], [], []
    status: list[tuple[str, str]] = []
    chaos_events: list[tuple[str, str]] = []
    staged = staged_logs is not None and staged_logs.is_file()
    for phase in PHASES:
        root = incident.root / phase
        if not staged:
            logs.append(
                keyed(rawstore.read_logs(rawstore.logs_file(root)), LOG_TABLE, case_id, phase)
            )
        visible: list[dict[str, Any]] = []
        for event in rawstore.read_events(root / rawstore.EVENTS):
            if is_provenance_event(event, ann.chaos_name):
                chaos_events.append((phase, as_json(event)))
            else:
                visible.append(event.model_dump(mode="json"))
        events.append(keyed(_event_table(visible), EVENT_TABLE, case_id, phase))
        metrics.append(
            keyed(rawstore.read_metrics(root / rawstore.METRICS), METRIC_TABLE, case_id, phase)
        )
        state = as_json(rawstore.read_state(root / rawstore.STATE))
        states.append(pa.table({"state": pa.array([state], pa.string())}))
        states[-1] = keyed(states[-1], STATE_TABLE, case_id, phase)
        status.append((phase, as_json(rawstore.read_chaos_status(root / rawstore.CHAOS_STATUS))))
    if staged:
        assert staged_logs is not None
        table = pq.read_table(staged_logs)
        phases = table.column("phase")
        logs = [
            pa.Table.from_arrays(
                [pa.repeat(pa.scalar(case_id, pa.string()), table.num_rows), phases]
                + [table.column(f.name) for f in LOG_SCHEMA],
                schema=LOG_TABLE,
            )
        ]
    all_logs, all_metrics = pa.concat_tables(logs), pa.concat_tables(metrics)
    spans = _spans(incident, case_id, ann.chaos_name)
    return IncidentObservations(
        incident_id=incident.id,
        case_id=case_id,
        logs=all_logs,
        events=pa.concat_tables(events),
        metrics=all_metrics,
        state=pa.concat_tables(states),
        requests=requests.derive(
            case_id,
            all_logs,
            all_metrics,
            list(PHASES),
            _services(ann.incident.system),
            system=INSTALLED.get(ann.incident.system),
        ),
        traces=spans,
        provenance={
            layout.ANNOTATIONS: [("", as_json(ann.model_dump(mode="json", exclude={"chaos"})))],
            layout.CHAOS_OBJECTS: [("", as_json(ann.chaos))],
            layout.CHAOS_STATUS: status,
            layout.CHAOS_EVENTS: chaos_events,
        },
    )


def _spans(incident: RawIncident, case_id: str, chaos_name: str) -> pa.Table | None:
    """Every phase's spans keyed by case id, or None when the incident has no traces;
    DataError when a span names the answer (it must never reach a method)."""
    if not traces.has_traces(incident.root, PHASES):
        return None
    table = pa.concat_tables(
        keyed(traces.read_spans(incident.root / phase), TRACE_TABLE, case_id, phase)
        for phase in PHASES
    )
    leaks = traces.answer_leaks(table, traces.forbidden_words(incident.id, chaos_name))
    if leaks:
        raise DataError(
            f"{incident.root}: spans carry the answer ({', '.join(leaks)}); fix the trace "
            "collection so no span names the incident, its chaos object or its fault"
        )
    return table


def _services(system: str) -> list[str] | None:
    """The deployments of ``system`` (None for an unknown system: use who logged)."""
    topology = SYSTEMS.get(system)
    return None if topology is None else [d.name for d in topology.deployments]


def _event_table(rows: list[dict[str, Any]]) -> pa.Table:
    names = [f.name for f in EVENT_TABLE if f.name not in {"case_id", "phase"}]
    schema = pa.schema([EVENT_TABLE.field(n) for n in names])
    return pa.Table.from_pylist([{n: r[n] for n in names} for r in rows], schema=schema)
