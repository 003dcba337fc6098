"""Reading the raw store the collector writes (DESIGN section 6); never writing it.

The file names come from ``r2act.schema.rawstore``, the contract both stages share.
Everything here is I/O with no judgement; checks live in ``checks.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import pyarrow as pa
import pyarrow.json as pa_json
import pyarrow.parquet as pq
from pydantic import BaseModel, ConfigDict, Field

from r2act.schema import (
    PHASES,
    ChaosStatus,
    ClusterState,
    KubeEvent,
    NoiseLevel,
    Phase,
    PlannedIncident,
)
from r2act.schema.rawstore import (
    CHAOS_STATUS,
    CHAOS_YAML,
    COMPLETE,
    EVENTS,
    INCIDENT_JSON,
    JOURNAL,
    JUDGED,
    LOG_FILES,
    LOGS,
    LOGS_GZIP,
    METRICS,
    PHASE_FILES,
    RAW_DIR,
    STATE,
    logs_file,
)

LOG_SCHEMA: Final = pa.schema(
    [
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("pod", pa.string(), nullable=False),
        pa.field("container", pa.string(), nullable=False),
        pa.field("service", pa.string(), nullable=False),
        pa.field("line", pa.string(), nullable=False),
    ]
)
"""One row per log line, exactly the fields of a phase's log file."""

KEY_FIELDS: Final = (
    pa.field("incident_id", pa.string(), nullable=False),
    pa.field("phase", pa.string(), nullable=False),
)
STAGED_LOG_SCHEMA: Final = pa.schema([*KEY_FIELDS, *LOG_SCHEMA])
"""Log rows keyed by incident and phase: what the gate stages and the dataset publishes."""

METRIC_SCHEMA: Final = pa.schema(
    [
        pa.field("ts", pa.float64(), nullable=False),
        pa.field("query", pa.string(), nullable=False),
        pa.field("labels", pa.string(), nullable=False),
        pa.field("value", pa.float64(), nullable=False),
    ]
)
"""Long-format metric samples; ``labels`` is JSON with sorted keys."""

_JSON_READ = pa_json.ReadOptions(use_threads=False, block_size=1 << 20)
_JSON_PARSE = pa_json.ParseOptions(explicit_schema=LOG_SCHEMA, unexpected_field_behavior="error")


class TargetInfo(BaseModel):
    """Which cluster the incident ran on."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    kind: Literal["sim", "kubernetes"] = Field(description="Cluster kind.")
    fingerprint: str = Field(description="Target fingerprint (sim name/seed or context/ns).")
    namespace: str = Field(description="Namespace the system ran in.")
    seed: int | None = Field(default=None, description="Seed of a simulated target.")
    noise: NoiseLevel | None = Field(
        default=None,
        description="Noise level it was collected at; None for runs collected before the "
        "campaign's noise key existed.",
    )


class Timestamps(BaseModel):
    """Lifecycle instants in seconds since the epoch; null when the step never happened."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    pre_start: float | None = None
    injected_at: float | None = None
    effect_confirmed_at: float | None = None
    removed_at: float | None = None
    recovered_at: float | None = None
    post_end: float | None = None


class Annotation(BaseModel):
    """``incident.json``: the collector's annotation of one incident (the raw contract).

    Unknown top-level keys are tolerated so a newer collector does not fail every incident;
    every key the contract names is required and typed.
    """

    model_config = ConfigDict(extra="ignore", frozen=True)

    incident: PlannedIncident = Field(description="The planned incident.")
    chaos: dict[str, Any] = Field(description="The Chaos Mesh object that was sent.")
    tool_version: str = Field(description="r2act version of the collector.")
    manifest_sha256: str = Field(description="SHA-256 of the manifest file.")
    target: TargetInfo = Field(description="Target cluster.")
    campaign: str = Field(description="Campaign name.")
    load: dict[str, Any] = Field(description="Load generator settings.")
    timestamps: Timestamps = Field(description="Lifecycle instants.")
    windows: dict[Phase, tuple[float, float]] = Field(description="Phase windows [start, end].")

    @property
    def chaos_name(self) -> str:
        """``metadata.name`` of the chaos object, or '' when absent."""
        meta = self.chaos.get("metadata")
        return str(meta.get("name", "")) if isinstance(meta, dict) else ""

    @property
    def chaos_kind(self) -> str:
        """``kind`` of the chaos object."""
        return str(self.chaos.get("kind", ""))


@dataclass(frozen=True)
class RawIncident:
    """Paths of one raw incident directory."""

    root: Path

    @property
    def id(self) -> str:
        """The directory name, which is the incident id."""
        return self.root.name

    def file(self, name: str) -> Path:
        """A top-level file of the incident."""
        return self.root / name

    def phase_file(self, phase: Phase, name: str) -> Path:
        """A per-phase file of the incident."""
        return self.root / phase / name

    @property
    def complete(self) -> bool:
        """The collector finished it (``COMPLETE`` exists)."""
        return (self.root / COMPLETE).is_file()


def list_incidents(run_dir: Path) -> list[RawIncident]:
    """Incident directories of ``RUN/raw`` sorted by id; hidden ones (resume debris) skipped."""
    raw = run_dir / RAW_DIR
    if not raw.is_dir():
        return []
    return [
        RawIncident(p)
        for p in sorted(raw.iterdir(), key=lambda p: p.name)
        if p.is_dir() and not p.name.startswith(".")
    ]


def read_annotation(incident: RawIncident) -> Annotation:
    """Parse ``incident.json``; raises ``OSError`` or ``ValueError`` (pydantic) when unusable."""
    return Annotation.model_validate_json(incident.file(INCIDENT_JSON).read_bytes())


def read_logs(path: Path) -> pa.Table:
    """Parse one phase's log file into a LOG_SCHEMA table (C++ zstd or gzip + JSON, one
    thread; the codec follows from the name, ``.zst`` or ``.gz``).

    One phase of one incident is tens of thousands of lines, so a whole file fits easily;
    a campaign is never held (callers go incident by incident). One thread per file: the
    gate runs incidents in parallel processes instead, which scales better on two cores.
    """
    if path.stat().st_size == 0:
        return LOG_SCHEMA.empty_table()
    try:
        table = pa_json.read_json(path, read_options=_JSON_READ, parse_options=_JSON_PARSE)
    except pa.ArrowInvalid:
        if _blank(path):  # a phase in which nobody logged: valid, just empty
            return LOG_SCHEMA.empty_table()
        raise
    return table.select(LOG_SCHEMA.names).cast(LOG_SCHEMA)


def _blank(path: Path) -> bool:
    codec = "gzip" if path.suffix == ".gz" else "zstd"
    with pa.CompressedInputStream(pa.OSFile(str(path), "rb"), codec) as handle:
        while chunk := handle.read(1 << 16):
            if chunk.strip():
                return False
    return True


def keyed(
    table: pa.Table, schema: pa.Schema, ident: str, phase: str, key: str = "incident_id"
) -> pa.Table:
    """``table`` with constant ``key`` (= ``ident``) and ``phase`` columns, laid out as
    ``schema`` (the audit's staging keys by incident id, the dataset by case id)."""
    n = table.num_rows
    keys = {
        key: pa.repeat(pa.scalar(ident, pa.string()), n),
        "phase": pa.repeat(pa.scalar(phase, pa.string()), n),
    }
    columns = [keys[f.name] if f.name in keys else table.column(f.name) for f in schema]
    return pa.Table.from_arrays(columns, schema=schema)


def read_events(path: Path) -> list[KubeEvent]:
    """Parse ``events.jsonl`` (one KubeEvent per line; blank lines ignored)."""
    with path.open("rb") as handle:
        return [KubeEvent.model_validate_json(line) for line in handle if line.strip()]


def read_metrics(path: Path) -> pa.Table:
    """Read ``metrics.parquet`` as a METRIC_SCHEMA table."""
    table = pq.read_table(path, columns=METRIC_SCHEMA.names)
    return table.cast(METRIC_SCHEMA)


def read_state(path: Path) -> ClusterState:
    """Parse ``state.json``."""
    return ClusterState.model_validate_json(path.read_bytes())


def read_chaos_status(path: Path) -> ChaosStatus:
    """Parse ``chaos_status.json``."""
    return ChaosStatus.model_validate_json(path.read_bytes())


def read_journal(incident: RawIncident) -> list[dict[str, Any]]:
    """Journal records; a torn last line (killed collector) is skipped, not fatal."""
    path = incident.file(JOURNAL)
    if not path.is_file():
        return []
    records: list[dict[str, Any]] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            records.append(value)
    return records


__all__ = [
    "CHAOS_STATUS",
    "CHAOS_YAML",
    "COMPLETE",
    "EVENTS",
    "INCIDENT_JSON",
    "JOURNAL",
    "JUDGED",
    "KEY_FIELDS",
    "LOGS",
    "LOGS_GZIP",
    "LOG_FILES",
    "LOG_SCHEMA",
    "METRICS",
    "METRIC_SCHEMA",
    "PHASES",
    "PHASE_FILES",
    "RAW_DIR",
    "STAGED_LOG_SCHEMA",
    "STATE",
    "Annotation",
    "RawIncident",
    "TargetInfo",
    "Timestamps",
    "keyed",
    "list_incidents",
    "logs_file",
    "read_annotation",
    "read_chaos_status",
    "read_events",
    "read_journal",
    "read_logs",
    "read_metrics",
    "read_state",
]
