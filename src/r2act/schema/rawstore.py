"""The raw store's file names: the file contract between the collector and the quality gate.

Both stages import these names from here (the lowest layer) so that neither has to import
the other::

    RUN/raw/<id>/incident.json journal.jsonl chaos.yaml COMPLETE
    RUN/raw/<id>/{pre,during,post}/logs.jsonl.zst events.jsonl metrics.parquet
                                   state.json chaos_status.json
                                   [traces.jsonl.zst]
    RUN/raw/<id>/judged.json       the first verdict on it (``quality_gate.judged``)

Logs were gzip-compressed (``logs.jsonl.gz``) before issue 26: zstd level 1 writes them at
about three times the speed and a quarter smaller, and decompresses about four times faster
(``bench/collect.py --codecs``). Runs of either kind are read; ``logs_file`` finds which.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Final

RAW_DIR: Final = "raw"
INCIDENT_JSON: Final = "incident.json"
JOURNAL: Final = "journal.jsonl"
CHAOS_YAML: Final = "chaos.yaml"
COMPLETE: Final = "COMPLETE"
"""Written last: an incident directory without it is partial."""

LOGS: Final = "logs.jsonl.zst"
"""A phase's log lines: JSON lines, one zstd frame (what the collector writes)."""
LOGS_GZIP: Final = "logs.jsonl.gz"
"""The same as one gzip member: what runs collected before the switch hold."""
LOG_FILES: Final = (LOGS, LOGS_GZIP)
"""Every name a phase's logs may have, the current format first."""
LOG_FORMATS: Final = {LOGS: "jsonl+zstd", LOGS_GZIP: "jsonl+gzip"}
"""The format each name stands for, as ``incident.json`` records it."""
TRACES: Final = "traces.jsonl.zst"
"""A phase's kept spans, when the campaign collects traces: one JSON object per line with
the fields of ``schema.traces.Span`` as keys, one zstd frame. Optional: a phase without it
has no traces (the campaign asked for none, or a run collected before issue 24)."""
EVENTS: Final = "events.jsonl"
METRICS: Final = "metrics.parquet"
STATE: Final = "state.json"
CHAOS_STATUS: Final = "chaos_status.json"
PHASE_FILES: Final = (LOGS, EVENTS, METRICS, STATE, CHAOS_STATUS)
"""The files of each phase directory."""

JUDGED: Final = "judged.json"
"""The first verdict on a complete incident with its evidence summaries, written after
``COMPLETE`` by whoever judged it first (the collector); a cache, never required."""

UNSUMMED: Final = frozenset({JOURNAL, COMPLETE, JUDGED})
"""Files the checksums leave out: the journal is appended to after completion,
``COMPLETE`` carries the sums, and ``judged.json`` is written after them."""


def logs_file(phase_dir: Path) -> Path:
    """The log file of a phase directory, whichever format it is in (``LOGS`` when none)."""
    for name in LOG_FILES:
        path = phase_dir / name
        if path.is_file():
            return path
    return phase_dir / LOGS


def file_digests(incident_dir: Path) -> dict[str, str]:
    """SHA-256 of every file of a raw incident directory, by relative path (sorted).

    The collector writes them into ``COMPLETE`` when the incident is finished; the quality
    gate recomputes them, so a changed byte in any file is found before it is admitted.
    """
    digests: dict[str, str] = {}
    for path in sorted(incident_dir.rglob("*")):
        if not path.is_file() or path.name in UNSUMMED or path.name.startswith("."):
            continue
        digest = hashlib.sha256()
        with path.open("rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        digests[path.relative_to(incident_dir).as_posix()] = digest.hexdigest()
    return digests
