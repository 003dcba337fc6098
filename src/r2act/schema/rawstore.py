"""The raw store's file names: the file contract between the collector and the quality gate.

Both stages import these names from here (the lowest layer) so that neither has to import
the other::

    RUN/raw/<id>/incident.json journal.jsonl chaos.yaml COMPLETE
    RUN/raw/<id>/{pre,during,post}/logs.jsonl.gz events.jsonl metrics.parquet
                                   state.json chaos_status.json
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

LOGS: Final = "logs.jsonl.gz"
EVENTS: Final = "events.jsonl"
METRICS: Final = "metrics.parquet"
STATE: Final = "state.json"
CHAOS_STATUS: Final = "chaos_status.json"
PHASE_FILES: Final = (LOGS, EVENTS, METRICS, STATE, CHAOS_STATUS)
"""The files of each phase directory."""

UNSUMMED: Final = frozenset({JOURNAL, COMPLETE})
"""Files the checksums leave out: the journal is appended to after completion, and
``COMPLETE`` carries the sums."""


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
