"""Turn one main incident's raw files into dataset rows: visible tables and provenance lines.

Method-visible rows (logs, events not about chaos objects, metrics, state) get the
``incident_id`` and ``phase`` keys; chaos objects, their status and their events become
provenance lines. The split uses ``quality_gate.provenance`` so it is the same line the
gate checked for leaks. ``read_incident`` is what worker processes run; it returns Arrow
tables (cheap to pickle) and short JSON lines, never Python objects per log line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from r2act.datasets.layout import EVENT_TABLE, LOG_TABLE, METRIC_TABLE
from r2act.quality_gate import rawstore
from r2act.quality_gate.provenance import is_provenance_event
from r2act.quality_gate.rawstore import RawIncident, keyed
from r2act.schema import PHASES


def line(keys: dict[str, str], payload: BaseModel | dict[str, Any]) -> str:
    """One provenance/state JSON line: the keys plus the payload under ``data``."""
    data = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else payload
    return json.dumps({**keys, "data": data}, sort_keys=True, separators=(",", ":"))


@dataclass
class IncidentObservations:
    """Everything one incident contributes to the dataset."""

    incident_id: str
    logs: pa.Table
    events: pa.Table
    metrics: pa.Table
    state: list[str] = field(default_factory=list)
    annotation: str = ""
    chaos_object: str = ""
    chaos_status: list[str] = field(default_factory=list)
    chaos_events: list[str] = field(default_factory=list)


def read_incident(incident_dir: Path, staged_logs: Path | None = None) -> IncidentObservations:
    """Read one raw incident the audit admitted; raises on unreadable data (it was checked).

    Logs come from ``staged_logs`` (the gate's parsed copy) when that file exists, else
    from the raw files.
    """
    incident = RawIncident(incident_dir)
    ann = rawstore.read_annotation(incident)
    iid = incident.id
    logs, events, metrics = [], [], []
    out = IncidentObservations(
        iid, LOG_TABLE.empty_table(), EVENT_TABLE.empty_table(), METRIC_TABLE.empty_table()
    )
    keys = {"incident_id": iid}
    annotation = ann.model_dump(mode="json", exclude={"chaos"})
    out.annotation = line(keys, annotation)
    out.chaos_object = line(keys, ann.chaos)
    for phase in PHASES:
        root = incident.root / phase
        pkeys = {"incident_id": iid, "phase": phase}
        if staged_logs is None or not staged_logs.is_file():
            logs.append(keyed(rawstore.read_logs(root / rawstore.LOGS), LOG_TABLE, iid, phase))
        visible: list[dict[str, Any]] = []
        for event in rawstore.read_events(root / rawstore.EVENTS):
            if is_provenance_event(event, ann.chaos_name):
                out.chaos_events.append(line(pkeys, event))
            else:
                visible.append(event.model_dump(mode="json"))
        events.append(keyed(_event_table(visible), EVENT_TABLE, iid, phase))
        metrics.append(
            keyed(rawstore.read_metrics(root / rawstore.METRICS), METRIC_TABLE, iid, phase)
        )
        out.state.append(line(pkeys, rawstore.read_state(root / rawstore.STATE)))
        out.chaos_status.append(
            line(pkeys, rawstore.read_chaos_status(root / rawstore.CHAOS_STATUS))
        )
    if staged_logs is not None and staged_logs.is_file():
        logs = [pq.read_table(staged_logs).cast(LOG_TABLE)]
    out.logs = pa.concat_tables(logs)
    out.events = pa.concat_tables(events)
    out.metrics = pa.concat_tables(metrics)
    return out


def _event_table(rows: list[dict[str, Any]]) -> pa.Table:
    names = [f.name for f in EVENT_TABLE if f.name not in {"incident_id", "phase"}]
    schema = pa.schema([EVENT_TABLE.field(n) for n in names])
    return pa.Table.from_pylist([{n: r[n] for n in names} for r in rows], schema=schema)
