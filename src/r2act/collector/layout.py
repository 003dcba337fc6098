"""Names of everything in a run directory, in one place.

The quality gate reads what the collector writes, so the names are constants here rather
than string literals scattered over both stages (DESIGN section 6)::

    RUN/raw/<id>/incident.json journal.jsonl chaos.yaml COMPLETE
    RUN/raw/<id>/{pre,during,post}/logs.jsonl.gz events.jsonl metrics.parquet
                                   state.json chaos_status.json
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

RAW_DIR: Final = "raw"
PARTIAL_DIR: Final = ".partial"
"""Under ``RUN/raw``: incident directories moved aside by resume (hidden from readers)."""
SUPERSEDED_DIR: Final = ".superseded"
"""Under ``RUN/raw``: incident directories moved aside by ``--no-resume --force``."""

INCIDENT_JSON: Final = "incident.json"
JOURNAL: Final = "journal.jsonl"
CHAOS_YAML: Final = "chaos.yaml"
COMPLETE: Final = "COMPLETE"

LOGS: Final = "logs.jsonl.gz"
EVENTS: Final = "events.jsonl"
METRICS: Final = "metrics.parquet"
STATE: Final = "state.json"
CHAOS_STATUS: Final = "chaos_status.json"
PHASE_FILES: Final = (LOGS, EVENTS, METRICS, STATE, CHAOS_STATUS)


def raw_dir(run_dir: Path) -> Path:
    """``RUN/raw``: one sub-directory per incident."""
    return run_dir / RAW_DIR


def is_complete(incident_dir: Path) -> bool:
    """An incident directory counts only once its ``COMPLETE`` marker exists."""
    return (incident_dir / COMPLETE).is_file()
