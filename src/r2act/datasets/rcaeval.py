"""Export a dataset in RCAEval's layout, so RCAEval's methods run on it unchanged.

RCAEval (phamquiluan/RCAEval) finds cases with ``glob("<dataset>/**/data.csv")`` and reads
the label from the path: ``<service>_<fault>/<case>/data.csv``, split at the one
underscore. Each case directory holds ``data.csv`` (a ``time`` column in epoch seconds and
one ``<service>_<metric>`` column per series) and ``inject_time.txt`` (the injection time,
epoch seconds); multi-source cases add logs. This export writes::

    OUT/<service>_<fault>/<intensity>-<repetition>/data.csv
                                                  /inject_time.txt
                                                  /logs.csv
                                 (logs.csv: time, timestamp, container_name, message)
    OUT/cases.csv    folder, case_id, incident_id, service, fault_type, intensity, repetition

``<fault>`` is the fault type with hyphens (``pod-failure``), since RCAEval splits the
folder name at its underscore. Intensity and repetition stay two separate parts of the
case folder name (``severe-2``), so moderate and severe incidents of one cell never share a
number. Metrics are summed over a service's pods per timestamp (``cpu_usage`` ->
``<service>_cpu``, ``memory_working_set`` -> ``<service>_mem``, others keep their name with
hyphens). The labels are in the paths by RCAEval's design, so this export is an answer-
carrying copy for RCA methods, not a method-visible view.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol

import pandas as pd

from r2act.datasets.load import load_records
from r2act.errors import DataError
from r2act.schema import BenchmarkRecord, Topology


class CaseTables(Protocol):
    """One case's method-visible tables, as a case reader returns them."""

    @property
    def topology(self) -> Topology: ...
    @property
    def logs(self) -> pd.DataFrame: ...
    @property
    def metrics(self) -> pd.DataFrame | None: ...


class CaseReader(Protocol):
    """A reader of a dataset's ``full`` view by case id (the agents' ``CaseSource`` is one);
    the caller passes it in, so the export needs no reader of its own."""

    def ids(self) -> Iterable[str]: ...
    def inputs(self, case_id: str) -> CaseTables: ...


METRIC_NAMES = {"cpu_usage": "cpu", "memory_working_set": "mem"}


@dataclass(frozen=True)
class ExportSummary:
    """What the export wrote."""

    out: Path
    cases: int
    columns: int


def folder(record: BenchmarkRecord) -> str:
    """``<service>_<fault>/<intensity>-<repetition>`` for one record."""
    fault = record.labels.fault_type.value.replace("_", "-")
    case = f"{record.labels.intensity.value}-{record.metadata.repetition}"
    return f"{record.labels.service}_{fault}/{case}"


def _service(pod: str, services: list[str]) -> str | None:
    for name in sorted(services, key=len, reverse=True):
        if pod == name or pod.startswith(name + "-"):
            return name
    return None


def wide_metrics(metrics: pd.DataFrame, services: list[str]) -> pd.DataFrame:
    """One row per timestamp, one ``<service>_<metric>`` column per series (pods summed)."""
    rows: dict[int, dict[str, float]] = defaultdict(dict)
    for query, labels, ts, value in zip(
        metrics["query"], metrics["labels"], metrics["ts"], metrics["value"], strict=True
    ):
        parsed = json.loads(str(labels))
        owner = parsed.get("deployment") or _service(parsed.get("pod", ""), services)
        if owner is None:
            continue
        name = METRIC_NAMES.get(str(query), str(query).replace("_", "-"))
        column = f"{owner}_{name}"
        row = rows[round(float(ts))]
        row[column] = row.get(column, 0.0) + float(value)
    frame = pd.DataFrame.from_dict(rows, orient="index").sort_index()
    frame = frame.reindex(sorted(frame.columns), axis=1)
    frame.insert(0, "time", frame.index.astype("int64"))
    return frame.reset_index(drop=True)


def _inject_time(record: BenchmarkRecord) -> int:
    stamp = record.metadata.collected_at.replace("Z", "+00:00")
    return int(datetime.fromisoformat(stamp).timestamp())


def export_rcaeval(dataset: Path, out: Path, source: CaseReader) -> ExportSummary:
    """Write ``dataset`` (every case, view ``full``, read through ``source``) in RCAEval's
    layout under ``out``."""
    if out.exists() and any(out.iterdir()):
        raise DataError(f"{out}: exists and is not empty (choose a new --out)")
    records = load_records(dataset)
    known = set(source.ids())
    rows, columns = [], 0
    for record in sorted(records, key=folder):
        case_id = record.case_id or record.incident_id
        if case_id not in known:
            raise DataError(f"{dataset}: {case_id} has no row in cases.parquet")
        inputs = source.inputs(case_id)
        directory = out / folder(record)
        directory.mkdir(parents=True, exist_ok=False)
        assert inputs.metrics is not None
        data = wide_metrics(inputs.metrics, inputs.topology.names)
        columns = max(columns, len(data.columns) - 1)
        data.to_csv(directory / "data.csv", index=False)
        (directory / "inject_time.txt").write_text(f"{_inject_time(record)}\n", "utf-8")
        logs = inputs.logs.sort_values("ts", kind="stable")
        pd.DataFrame(
            {
                "time": logs["ts"].astype(float).round().astype("int64"),
                "timestamp": (logs["ts"].astype(float) * 1e9).round().astype("int64"),
                "container_name": logs["service"].astype(str),
                "message": logs["line"].astype(str),
            }
        ).to_csv(directory / "logs.csv", index=False)
        rows.append(
            [
                folder(record),
                case_id,
                record.incident_id,
                record.labels.service,
                record.labels.fault_type.value,
                record.labels.intensity.value,
                record.metadata.repetition,
            ]
        )
    with (out / "cases.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            ["folder", "case_id", "incident_id", "service", "fault_type", "intensity", "repetition"]
        )
        writer.writerows(rows)
    return ExportSummary(out, len(rows), columns)
