"""Shards: a deterministic 1/N of a campaign's incidents, for collecting on N machines.

An incident's shard depends only on its cell (system, service, fault type, intensity) and
its repetition number: ``(offset(cell) + repetition - 1) mod N``, where the offset is a
stable hash of the cell. So

- every shard gets an equal share of every cell, up to one incident (a cell of 8 on three
  shards splits 3/3/2), which keeps shard sizes and fault mixes balanced;
- adding repetitions to a cell (spare incidents, a bigger campaign) places the new ones and
  moves none of the old ones, so shards already collected stay valid;
- the hash is SHA-256, never Python's salted ``hash``: every machine computes the same split.

Which shard an incident is in never changes what is collected for it.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

from r2act.campaigns.manifest import Manifest
from r2act.errors import DataError
from r2act.schema import PlannedIncident

_SHARD = re.compile(r"^([1-9][0-9]*)/([1-9][0-9]*)$")
MAX_SHARDS = 10_000
"""More shards than any campaign has incidents is a typo."""


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` (1-based, as a user writes it) of ``count``."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, incident: PlannedIncident) -> bool:
        """Whether ``incident`` belongs to this shard."""
        return shard_of(incident, self.count) == self.index


def parse_shard(text: str, *, option: str = "--shard") -> Shard:
    """``"2/3"`` -> ``Shard(2, 3)``; anything else is a one-line ``DataError``."""
    match = _SHARD.match(text.strip())
    if match is None:
        raise DataError(f"{option} {text!r}: expected I/N such as 1/3 (I from 1 to N)")
    index, count = int(match.group(1)), int(match.group(2))
    if count > MAX_SHARDS:
        raise DataError(f"{option} {text}: at most {MAX_SHARDS} shards")
    if index > count:
        raise DataError(
            f"{option} {text}: shard {index} of {count} does not exist (use 1..{count})"
        )
    return Shard(index, count)


def _cell_offset(incident: PlannedIncident, count: int) -> int:
    cell = "|".join(
        (
            incident.system,
            incident.service,
            incident.fault.type.value,
            incident.fault.intensity.value,
        )
    )
    digest = hashlib.sha256(cell.encode()).digest()
    return int.from_bytes(digest[:8], "big") % count


def shard_of(incident: PlannedIncident, count: int) -> int:
    """The 1-based shard of ``count`` that collects ``incident``."""
    return (_cell_offset(incident, count) + incident.repetition - 1) % count + 1


def select(incidents: Sequence[PlannedIncident], shard: Shard) -> list[PlannedIncident]:
    """The incidents of ``shard``, in plan order."""
    return [i for i in incidents if shard.holds(i)]


def plan_sha256(manifest: Manifest, incidents: Sequence[PlannedIncident]) -> str:
    """A digest of what a campaign collects, whatever its target.

    Shards collected on different clusters or namespaces use manifests that differ only in
    ``target`` (and so in the namespace substituted into the metric queries); they belong
    to one campaign when the whole plan (every incident with its fault, phases and seed),
    the load, the health probe and the metric step agree. ``incidents`` is the whole plan,
    before any shard or ``--only`` selection."""
    document = {
        "campaign": manifest.name,
        "system": manifest.system,
        "incidents": [i.model_dump(mode="json") for i in incidents],
        "load": manifest.load.model_dump(mode="json"),
        "health": manifest.health.model_dump(mode="json"),
        "metric_step_s": manifest.metrics.step_s,
        "metric_queries": sorted(manifest.metrics.queries),
    }
    encoded = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(encoded).hexdigest()
