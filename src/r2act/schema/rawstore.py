"""The raw store's file names: the file contract between the collector and the quality gate.

Both stages import these names from here (the lowest layer) so that neither has to import
the other::

    RUN/raw/<id>/incident.json journal.jsonl chaos.yaml COMPLETE
    RUN/raw/<id>/{pre,during,post}/logs.jsonl.gz events.jsonl metrics.parquet
                                   state.json chaos_status.json
"""

from __future__ import annotations

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
