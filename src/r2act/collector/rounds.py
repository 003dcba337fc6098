"""Rounds: collect every quota repetition, then only the spares a short cell needs.

A campaign plans each cell's quota plus spares. Round 0 collects the quota repetitions;
after a round ends (every lane finished its incidents), each incident is judged clean or
not by the quality gate's own per-incident verdict (``quality_gate.verdict``), and the next
round takes, for each cell still short of clean incidents, exactly as many spares as it
lacks, lowest repetition first (``campaigns.quotas.next_round``). A cell therefore stops as
soon as it is full, and the incidents collected depend only on the plan and on each
incident's outcome, never on timing or on the number of lanes.

Resume starts from what ``RUN/raw`` holds: the clean counts are recomputed from the complete
incidents there, so an interrupted run continues where the rule says. Verdicts are kept in
``RUN/.r2act/verdicts.jsonl``, each keyed by the SHA-256 of the incident's ``COMPLETE``
marker (which holds the checksums of all its files) and by r2act's version, so a rerun
judges again only incidents it has no verdict for; deleting the file re-judges everything.
A run whose plan says ``stop_full_cells=False`` (``--only``, ``--all-spares``) collects
every selected incident in one round.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path

from r2act import __version__
from r2act.campaigns.quotas import SpareCount, count_spares, is_spare, next_round
from r2act.collector import layout
from r2act.collector.context import IncidentResult
from r2act.errors import DataError
from r2act.quality_gate.evidence import WrittenLogs
from r2act.quality_gate.verdict import is_clean, judge
from r2act.schema import Phase, PlannedIncident


def judged(
    result: IncidentResult,
    incident_dir: Path,
    written: Mapping[Phase, WrittenLogs] | None = None,
) -> IncidentResult:
    """``result`` with the gate's verdict on the incident just collected at ``incident_dir``
    (``written``: its log lines as the collector wrote them, not parsed back)."""
    if result.status != "completed":
        return result
    cpu = time.process_time()
    try:
        verdict = judge(incident_dir, written)
    except DataError as error:  # unreadable files: the audit would not admit it either
        return replace(result, clean=False, reasons=(str(error),))
    return replace(
        result,
        clean=is_clean(verdict),
        reasons=tuple(verdict.reasons),
        judge_cpu_s=time.process_time() - cpu,
    )


VERDICTS = "verdicts.jsonl"
"""``RUN/.r2act/verdicts.jsonl``: the collector's per-incident verdicts, for resuming."""


class VerdictCache:
    """Verdicts already reached, valid while the incident's ``COMPLETE`` is unchanged."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._known: dict[str, tuple[str, bool]] = {}
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError:
            lines = []
        for line in lines:
            try:
                row = json.loads(line)
                if row["tool_version"] == __version__:
                    self._known[row["incident_id"]] = (row["complete_sha256"], bool(row["clean"]))
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash: judge that incident again

    def get(self, incident_dir: Path) -> bool | None:
        """The kept verdict on ``incident_dir``, None when there is none for these files."""
        known = self._known.get(incident_dir.name)
        if known is None:
            return None
        return known[1] if known[0] == _marker_digest(incident_dir) else None

    def put(self, incident_dir: Path, result: IncidentResult) -> None:
        """Keep the verdict in ``result``; a cache that cannot be written is only slower."""
        digest = _marker_digest(incident_dir)
        if result.clean is None or digest is None:
            return
        row = {
            "incident_id": result.incident_id,
            "complete_sha256": digest,
            "tool_version": __version__,
            "clean": result.clean,
            "reasons": list(result.reasons),
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as out:
                out.write(json.dumps(row, sort_keys=True) + "\n")
        except OSError:
            return
        self._known[result.incident_id] = (digest, result.clean)


def _marker_digest(incident_dir: Path) -> str | None:
    try:
        return hashlib.sha256((incident_dir / layout.COMPLETE).read_bytes()).hexdigest()
    except OSError:
        return None


class Rounds:
    """Which incidents of a selection to collect next, from what was collected so far."""

    def __init__(
        self,
        selection: list[PlannedIncident],
        raw: Path,
        done: Collection[str],
        *,
        stop: bool,
        cache: VerdictCache | None = None,
    ) -> None:
        self.selection = selection
        self.stop = stop
        self.raw = raw
        self.cache = cache
        self.taken: set[str] = set(done)
        """Ids complete before this run, or collected or tried by it."""
        self.complete: set[str] = set(done)
        self._clean: dict[str, bool] = {}
        self.judge_cpu_s = 0.0
        """CPU seconds spent judging incidents found complete (resume)."""
        self.has_spares = any(is_spare(i) for i in selection)

    def next(self) -> list[str]:
        """Ids of the next round, in plan order; empty when collection is over."""
        if not self.stop:
            return [i.id for i in self.selection if i.id not in self.taken]
        return [i.id for i in next_round(self.selection, self.taken, self.clean)]

    def record(self, result: IncidentResult) -> None:
        """Note an incident this run collected or failed to collect."""
        self.taken.add(result.incident_id)
        if result.status == "completed":
            self.complete.add(result.incident_id)
            if result.clean is not None:
                self._clean[result.incident_id] = result.clean
                if self.cache is not None:
                    self.cache.put(self.raw / result.incident_id, result)
        else:
            self._clean[result.incident_id] = False

    def clean(self, incident_id: str) -> bool:
        """Whether a taken incident would pass the gate (judged from its files once)."""
        known = self._clean.get(incident_id)
        if known is None:
            directory = self.raw / incident_id
            if not layout.is_complete(directory):
                known = False
            elif self.cache is not None and (kept := self.cache.get(directory)) is not None:
                known = kept
            else:
                cpu = time.process_time()
                result = judged(IncidentResult(incident_id, "completed"), directory)
                self.judge_cpu_s += time.process_time() - cpu
                known = bool(result.clean)
                if self.cache is not None:
                    self.cache.put(directory, result)
            self._clean[incident_id] = known
        return known

    def spares(self) -> SpareCount:
        """What the rule did with the selection's spares so far."""
        return count_spares(self.selection, self.taken, self.clean)

    def remaining(self) -> int:
        """Incidents a rerun would collect first (failed ones again, spares still needed)."""
        if not self.stop:
            return sum(i.id not in self.complete for i in self.selection)
        return len(next_round(self.selection, self.complete, self.clean))

    def spare_ids(self, ids: Collection[str]) -> int:
        """How many of ``ids`` are spares."""
        wanted = set(ids)
        return sum(is_spare(i) for i in self.selection if i.id in wanted)
