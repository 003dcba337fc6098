"""Export a dataset in RCAEval's layout, so RCAEval's methods run on it unchanged.

RCAEval (phamquiluan/RCAEval) finds cases with ``glob("<dataset>/**/data.csv")`` and reads
the label from the path: ``<service>_<fault>/<case>/data.csv``, split at the one
underscore. Each case directory holds ``data.csv`` (a ``time`` column in epoch seconds and
one ``<service>_<metric>`` column per series) and ``inject_time.txt`` (the injection time,
epoch seconds); multi-source cases add logs. This export writes::

    OUT/<service>_<fault>/<intensity>-<repetition>/data.csv
                                                  /inject_time.txt
                                                  /logs.csv
                                                  /traces.csv   (with traces)
                                                  /tracets_err.csv
                                                  /tracets_lat.csv
                                 (logs.csv: time, timestamp, container_name, message;
                                  the trace files: ``rcaeval_traces``)
    OUT/cases.csv    folder, case_id, incident_id, service, fault_type, intensity, repetition,
                     step_s

A dataset of several systems gets one more level, ``OUT/<system>/<service>_<fault>/...``
(two systems may share a service name); a one-system export is unchanged.

``<fault>`` is the fault type with hyphens (``pod-failure``), since RCAEval splits the
folder name at its underscore. Intensity and repetition stay two separate parts of the
case folder name (``severe-2``), so moderate and severe incidents of one cell never share a
number. Metrics are summed over a service's pods per timestamp (``cpu_usage`` ->
``<service>_cpu``, ``memory_working_set`` -> ``<service>_mem``, others keep their name with
hyphens).

Request series come from ``observations/requests.parquet`` (the entry point's request log,
as the users saw it) under RCAEval's names, so the SLI RCAEval's runner looks for
(``<entry point>_latency``, ``frontend_latency`` on Online Boutique) exists and metric-only
methods see HTTP, DNS and delay faults where users see them:

- ``<entry>_latency-50`` and ``<entry>_latency``: the median and the 95th percentile of
  the entry point's request latency in ms, a request-weighted mean over its routes (kubelet
  probes of the health route left out). RCAEval's own data carries ``_latency-50`` and
  ``_latency-90`` and renames the latter ``_latency`` when it reads a case; r2act's request
  table keeps p95, not p90, so the tail is written as ``_latency`` directly.
- ``<entry>_error``: failed requests per second as the users saw them (the load
  generator's aggregated failures/s; an HTTP fault answered in front of the entry point
  never reaches its log), or the entry point's own logged 5xx when the load generator
  printed no stats; ``<service>_error`` for a backend: the failed calls per second the entry
  point's error lines attribute to it.

A step without requests leaves the latency cells empty (RCAEval forward-fills them). Every
row is one step of the dataset's metric samples, the campaign's ``metrics.step_s`` (15 s
unless the manifest says otherwise): the finest step the metrics have, with no resampling;
``cases.csv`` gives it per case. The labels are in the paths by RCAEval's design, so this
export is an answer-carrying copy for RCA methods, not a method-visible view.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pandas as pd

from r2act.datasets import layout
from r2act.datasets.cases import Case, CaseReader
from r2act.datasets.loading import load_records
from r2act.datasets.rcaeval_traces import trace_series, traces_csv
from r2act.errors import DataError
from r2act.schema import PHASES, BenchmarkRecord, Topology

METRIC_NAMES = {"cpu_usage": "cpu", "memory_working_set": "mem"}
_REQUEST_COLUMNS = [
    "case_id",
    "ts",
    "source",
    "service",
    "route",
    "requests_per_s",
    "errors_per_s",
    "latency_p50_ms",
    "latency_p95_ms",
]


@dataclass(frozen=True)
class ExportSummary:
    """What the export wrote."""

    out: Path
    cases: int
    columns: int


def folder(record: BenchmarkRecord, by_system: bool = False) -> str:
    """``<service>_<fault>/<intensity>-<repetition>`` for one record.

    ``by_system`` (a dataset of several systems) puts it under ``<system>/``: two systems
    may give a service the same name, and RCAEval finds cases with
    ``glob("**/data.csv")`` and reads the labels from the two folders above ``data.csv``,
    so one more level leaves its reading unchanged.
    """
    fault = record.labels.fault_type.value.replace("_", "-")
    case = f"{record.labels.intensity.value}-{record.metadata.repetition}"
    path = f"{record.labels.service}_{fault}/{case}"
    return f"{record.metadata.system}/{path}" if by_system else path


def _service(pod: str, services: list[str]) -> str | None:
    for name in sorted(services, key=len, reverse=True):
        if pod == name or pod.startswith(name + "-"):
            return name
    return None


def distinct_samples(metrics: pd.DataFrame) -> pd.DataFrame:
    """Each sample once. A phase's window is closed, so the instant two phases share (the
    injection time: pre ends where during starts) is read by both whenever it falls on the
    metric step, as it does on the simulator (every incident starts on the step grid) and on
    Prometheus (range queries step from their start); summing both reads would double that
    row. The later phase's read stands."""
    if "phase" in metrics.columns:
        rank = metrics["phase"].map({phase: n for n, phase in enumerate(PHASES)})
        metrics = metrics.iloc[rank.argsort(kind="stable")]
    return metrics.drop_duplicates(["query", "labels", "ts"], keep="last")


def wide_metrics(metrics: pd.DataFrame, services: list[str]) -> pd.DataFrame:
    """One row per timestamp, one ``<service>_<metric>`` column per series (pods summed)."""
    metrics = distinct_samples(metrics)
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


def _weighted(frame: pd.DataFrame, column: str) -> pd.Series:
    """Per step, the request-weighted mean of ``column`` over the routes that had requests."""
    usable = frame[frame[column].notna() & (frame["requests_per_s"] > 0)]
    weight = usable["requests_per_s"]
    total = (usable[column] * weight).groupby(usable["step"]).sum()
    return total / weight.groupby(usable["step"]).sum()


def request_series(requests: pd.DataFrame, topology: Topology) -> pd.DataFrame:
    """Latency and error columns under RCAEval's names, one row per step (index: epoch s).

    Named after the system's entry point; its health route (kubelet probes, not user
    traffic) is left out of the latency series."""
    entry = topology.entrypoint
    health_route = f"GET {topology.health_path}"
    logged = requests[requests["source"] == "frontend-log"]
    logged = logged.assign(step=logged["ts"].astype(float).round().astype("int64"))
    if logged.empty:
        return pd.DataFrame()
    own = logged[logged["service"] == entry]
    users = own[own["route"] != health_route]
    columns: dict[str, pd.Series] = {
        f"{entry}_latency-50": _weighted(users, "latency_p50_ms"),
        f"{entry}_latency": _weighted(users, "latency_p95_ms"),
    }
    errors = logged.groupby(["service", "step"])["errors_per_s"].sum(min_count=1)
    for service in sorted(set(logged["service"])):
        columns[f"{service}_error"] = errors.loc[service]
    users = requests[(requests["source"] == "locust-stats") & (requests["route"] == "*")]
    if not users.empty:  # what the users saw, HTTP faults the entry point never logs included
        step = users["ts"].astype(float).round().astype("int64")
        columns[f"{entry}_error"] = users["errors_per_s"].groupby(step).sum(min_count=1)
    steps = sorted(set(logged["step"]) | set(columns[f"{entry}_error"].index))
    frame = pd.DataFrame(columns).reindex(steps)
    error_columns = [c for c in frame.columns if c.endswith("_error")]
    frame[error_columns] = frame[error_columns].fillna(0.0)  # a step with no failed request
    return frame


def _request_tables(dataset: Path) -> dict[str, pd.DataFrame]:
    """Each case's rows of the request table (every column), or nothing for an older dataset."""
    path = dataset / layout.REQUESTS
    if not path.is_file():
        return {}
    table = pd.read_parquet(path, columns=_REQUEST_COLUMNS)
    return {str(case): rows for case, rows in table.groupby("case_id", sort=False)}


def case_table(inputs: Case, requests: pd.DataFrame | None) -> pd.DataFrame:
    """``data.csv`` of one case: metrics and request series, one row per metric step."""
    assert inputs.metrics is not None
    data = wide_metrics(inputs.metrics, inputs.topology.names)
    if requests is None or requests.empty:
        return data
    series = request_series(requests, inputs.topology)
    if series.empty:
        return data
    joined = data.set_index("time").join(series, how="left")
    joined.insert(0, "time", joined.index.astype("int64"))
    return joined.reset_index(drop=True)


def step_s(data: pd.DataFrame) -> float:
    """The median spacing of the rows (the metric step), s."""
    times = data["time"].drop_duplicates().sort_values()
    return float(times.diff().median()) if len(times) > 1 else 0.0


def _write_logs(logs: pd.DataFrame, path: Path) -> None:
    ordered = logs.sort_values("ts", kind="stable")
    pd.DataFrame(
        {
            "time": ordered["ts"].astype(float).round().astype("int64"),
            "timestamp": (ordered["ts"].astype(float) * 1e9).round().astype("int64"),
            "container_name": ordered["service"].astype(str),
            "message": ordered["line"].astype(str),
        }
    ).to_csv(path, index=False)


def _inject_time(record: BenchmarkRecord) -> int:
    stamp = record.metadata.collected_at.replace("Z", "+00:00")
    return int(datetime.fromisoformat(stamp).timestamp())


def _write_traces(spans: pd.DataFrame, data: pd.DataFrame, directory: Path) -> None:
    """``traces.csv``, ``tracets_err.csv`` and ``tracets_lat.csv`` of one case."""
    table = traces_csv(spans)
    table.to_csv(directory / "traces.csv", index=False)
    errors, latency = trace_series(table, data["time"])
    errors.to_csv(directory / "tracets_err.csv", index=False)
    latency.to_csv(directory / "tracets_lat.csv", index=False)


def export_rcaeval(dataset: Path, out: Path, *, logs: bool = True) -> ExportSummary:
    """Write ``dataset`` (every case, view ``full``, and its spans when it holds a traces
    table) in RCAEval's layout under ``out``.

    ``logs=False`` leaves ``logs.csv`` out: RCAEval's metric-based methods never read it,
    and at paper scale it is nearly all of the export (12 million lines, about 3 GB)."""
    if out.exists() and any(out.iterdir()):
        raise DataError(f"{out}: exists and is not empty (choose a new --out)")
    records = load_records(dataset)
    traced = (dataset / layout.TRACES).is_file()
    source = CaseReader(dataset, "full+traces" if traced else "full")
    known = set(source.ids())
    requests = _request_tables(dataset)
    rows, columns = [], 0
    by_system = len({r.metadata.system for r in records}) > 1
    records = sorted(records, key=lambda r: folder(r, by_system))
    for record in records:
        case_id = record.case_id or record.incident_id
        if case_id not in known:
            raise DataError(f"{dataset}: {case_id} has no row in cases.parquet")
        inputs = source.case(case_id)
        directory = out / folder(record, by_system)
        directory.mkdir(parents=True, exist_ok=False)
        data = case_table(inputs, requests.get(case_id))
        columns = max(columns, len(data.columns) - 1)
        data.to_csv(directory / "data.csv", index=False)
        (directory / "inject_time.txt").write_text(f"{_inject_time(record)}\n", "utf-8")
        if logs:
            _write_logs(inputs.logs, directory / "logs.csv")
        if inputs.traces is not None:
            _write_traces(inputs.traces, data, directory)
        rows.append(
            [
                folder(record, by_system),
                case_id,
                record.incident_id,
                record.labels.service,
                record.labels.fault_type.value,
                record.labels.intensity.value,
                record.metadata.repetition,
                f"{step_s(data):g}",
            ]
        )
    with (out / "cases.csv").open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(
            [
                "folder",
                "case_id",
                "incident_id",
                "service",
                "fault_type",
                "intensity",
                "repetition",
                "step_s",
            ]
        )
        writer.writerows(rows)
    return ExportSummary(out, len(rows), columns)
