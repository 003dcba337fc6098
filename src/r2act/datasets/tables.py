"""The small tables of a dataset: cases (method-visible), incidents and audit trail (answers).

``cases.parquet`` is what a method may know about a case besides its observations: its
fold, system, sizes and action space, keyed by the opaque case id. The records themselves
(labels, gold, plan sets, fault, incident id) go to ``answers/incidents.parquet``, one row
per incident with the labels and plans also as their own columns for other tools, and the
whole record as JSON so ``load_records`` rebuilds exactly the typed records.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from r2act.datasets import layout
from r2act.datasets.folds import Folds
from r2act.quality_gate import Verdict
from r2act.schema import BenchmarkRecord


def as_json(payload: BaseModel | dict[str, Any] | list[Any]) -> str:
    """Compact JSON with sorted keys: the form of every JSON column (stable bytes)."""
    data = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else payload
    return json.dumps(data, sort_keys=True, separators=(",", ":"))


def _table(schema: pa.Schema, rows: list[dict[str, object]]) -> pa.Table:
    return pa.Table.from_pylist(rows, schema=schema)


def cases_table(records: list[BenchmarkRecord], folds: Folds) -> pa.Table:
    """One row per case, in case-id order (the order says nothing about the incident ids)."""
    fold_of = {case: k for k, members in enumerate(folds.folds) for case in members}
    rows: list[dict[str, object]] = []
    for record in sorted(records, key=lambda r: str(r.case_id)):
        refs = record.observations
        rows.append(
            {
                "case_id": record.case_id,
                "fold": fold_of[str(record.case_id)],
                "system": record.metadata.system,
                "target_kind": record.metadata.target_kind,
                "phases": json.dumps(list(refs.phases)),
                "log_records": refs.log_records,
                "event_records": refs.event_records,
                "metric_samples": refs.metric_samples,
                "services_logging": json.dumps(sorted(refs.services_logging)),
                "action_space": as_json(record.action_space),
            }
        )
    return _table(layout.CASE_TABLE, rows)


def incidents_table(records: list[BenchmarkRecord]) -> pa.Table:
    """The answers: one row per incident, in incident-id order."""
    rows: list[dict[str, object]] = [
        {
            "case_id": r.case_id,
            "incident_id": r.incident_id,
            "service": r.labels.service,
            "fault_type": r.labels.fault_type.value,
            "intensity": r.labels.intensity.value,
            "mechanism": r.labels.mechanism,
            "policy": r.policy,
            "gold_plan": as_json(r.gold_plan),
            **_gold_parameters(r),
            "valid_plans": as_json([p.model_dump(mode="json") for p in r.valid_plans]),
            "invalid_plans": as_json([p.model_dump(mode="json") for p in r.invalid_plans]),
            "fault": as_json(r.fault),
            "record": r.model_dump_json(),
        }
        for r in sorted(records, key=lambda r: r.incident_id)
    ]
    return _table(layout.INCIDENT_TABLE, rows)


def _gold_parameters(record: BenchmarkRecord) -> dict[str, object]:
    """The gold plan's operation, target and parameters as columns (null where absent)."""
    gold = record.gold_plan.model_dump(mode="json")
    return {
        "gold_operation": gold["operation"],
        **{f"gold_{k}": gold.get(k) for k in ("target", "replicas", "memory_limit", "scope")},
        "gold_dependency": gold.get("dependency"),
    }


def trail_table(verdicts: list[Verdict]) -> pa.Table:
    """Incidents kept out of the main set, with their reasons (answers: ids name causes)."""
    from r2act.quality_gate import Group

    rows: list[dict[str, object]] = [
        {
            "incident_id": v.incident_id,
            "group": v.group.value,
            "reasons": json.dumps(v.reasons),
            "verdict": v.model_dump_json(),
        }
        for v in sorted(verdicts, key=lambda v: v.incident_id)
        if v.group != Group.MAIN
    ]
    return _table(layout.TRAIL_TABLE, rows)


def read_records(path: Path) -> list[BenchmarkRecord]:
    """The typed records of ``answers/incidents.parquet``; OSError/ValueError when unreadable."""
    column = pq.read_table(path, columns=["record"]).column("record")
    return [BenchmarkRecord.model_validate_json(text) for text in column.to_pylist()]


def read_trail(path: Path) -> list[Verdict]:
    """The audit trail's verdicts."""
    column = pq.read_table(path, columns=["verdict"]).column("verdict")
    return [Verdict.model_validate_json(text) for text in column.to_pylist()]
