"""Names of everything in a run directory, in one place.

The raw store's file names are the contract with the quality gate and live in
``r2act.schema.rawstore``; this module adds what only the collector needs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from r2act.schema.rawstore import (
    CHAOS_STATUS,
    CHAOS_YAML,
    COMPLETE,
    EVENTS,
    INCIDENT_JSON,
    JOURNAL,
    LOGS,
    METRICS,
    PHASE_FILES,
    RAW_DIR,
    STATE,
)

PARTIAL_DIR: Final = ".partial"
"""Under ``RUN/raw``: incident directories moved aside by resume (hidden from readers)."""
SUPERSEDED_DIR: Final = ".superseded"
"""Under ``RUN/raw``: incident directories moved aside by ``--no-resume --force``."""

__all__ = [
    "CHAOS_STATUS",
    "CHAOS_YAML",
    "COMPLETE",
    "EVENTS",
    "INCIDENT_JSON",
    "JOURNAL",
    "LOGS",
    "METRICS",
    "PARTIAL_DIR",
    "PHASE_FILES",
    "RAW_DIR",
    "STATE",
    "SUPERSEDED_DIR",
    "is_complete",
    "raw_dir",
]


def raw_dir(run_dir: Path) -> Path:
    """``RUN/raw``: one sub-directory per incident."""
    return run_dir / RAW_DIR


def is_complete(incident_dir: Path) -> bool:
    """An incident directory counts only once its ``COMPLETE`` marker exists."""
    return (incident_dir / COMPLETE).is_file()
