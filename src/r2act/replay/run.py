"""Replaying a predictions file: resume, journal, one outcome line per prediction.

``replay.jsonl`` is appended one line per finished prediction (flushed and fsynced), so an
interrupted replay loses at most the prediction in flight — whose fault and plan side
effects the runner has already undone — and a rerun skips every id already in the file.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from r2act.cluster.base import Cluster
from r2act.collector.guard import CleanupGuard
from r2act.collector.journal import Journal
from r2act.errors import DataError
from r2act.evaluation.predictions import ParsedPrediction, PredictionFile
from r2act.replay.outcomes import ReplayOutcome
from r2act.replay.runner import ReplayRequest, ReplaySettings, replay_one
from r2act.schema import BenchmarkRecord

OUTCOMES_FILE = "replay.jsonl"
JOURNAL_FILE = "journal.jsonl"


@dataclass
class ReplayRun:
    """The outcomes of a replay (old ones from a resumed file included) and what was skipped."""

    outcomes: list[ReplayOutcome] = field(default_factory=list)
    resumed: int = 0
    unknown_ids: list[str] = field(default_factory=list)


def load_outcomes(path: Path) -> list[ReplayOutcome]:
    """Outcomes already written; a torn last line (crash mid-write) is dropped."""
    if not path.exists():
        return []
    outcomes: list[ReplayOutcome] = []
    with path.open(encoding="utf-8") as stream:
        for number, line in enumerate(stream, 1):
            if not line.strip():
                continue
            try:
                outcomes.append(ReplayOutcome.model_validate_json(line))
            except ValidationError as error:
                if line.endswith("\n"):
                    raise DataError(
                        f"{path}:{number}: not a replay outcome ({error.error_count()} errors); "
                        "move the file aside or pass another --out"
                    ) from None
    return outcomes


def request_of(parsed: ParsedPrediction) -> ReplayRequest:
    """What replay executes for a parsed prediction line."""
    problem = ""
    if parsed.plan_state == "invalid":
        problem = "plan did not parse (invalid structure); not executed"
    return ReplayRequest(plan=parsed.plan, plan_problem=problem, method=parsed.method)


def _append(path: Path, outcome: ReplayOutcome) -> None:
    with path.open("a", encoding="utf-8") as stream:
        stream.write(outcome.model_dump_json() + "\n")
        stream.flush()
        os.fsync(stream.fileno())


def run_replay(
    cluster: Cluster,
    records: Mapping[str, BenchmarkRecord],
    predictions: PredictionFile,
    out_dir: Path,
    settings: ReplaySettings,
    *,
    only: Sequence[str] = (),
    on_outcome: Callable[[ReplayOutcome], None] = lambda _o: None,
    on_start: Callable[[str], None] = lambda _i: None,
) -> ReplayRun:
    """Replay every prediction whose id is in ``records`` (and in ``only``, when given)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    outcomes_path = out_dir / OUTCOMES_FILE
    run = ReplayRun(outcomes=load_outcomes(outcomes_path))
    done = {o.incident_id for o in run.outcomes}
    run.resumed = len(done)
    run.unknown_ids = sorted(i for i in predictions.predictions if i not in records)
    todo = [
        incident
        for incident in records
        if incident in predictions.predictions
        and incident not in done
        and (not only or incident in only)
    ]
    journal = Journal(out_dir / JOURNAL_FILE, cluster.clock)
    try:
        with CleanupGuard(cluster.remove) as guard:
            for incident in todo:
                on_start(incident)
                request = request_of(predictions.predictions[incident])
                with journal.step(f"replay {incident}") as step:
                    outcome = replay_one(cluster, records[incident], request, settings, guard)
                    if outcome.status == "error":
                        step.warn(outcome.reason)
                _append(outcomes_path, outcome)
                run.outcomes.append(outcome)
                on_outcome(outcome)
    finally:
        journal.close()
    return run


def write_report_files(out_dir: Path, report_json: str, markdown: str) -> None:
    """Write ``report.json`` and ``report.md`` next to the outcomes."""
    (out_dir / "report.json").write_text(report_json + "\n", encoding="utf-8")
    (out_dir / "report.md").write_text(markdown, encoding="utf-8")
