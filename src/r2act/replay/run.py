"""Replaying a predictions file: resume, journal, one outcome line per prediction.

``replay.jsonl`` is appended one line per finished prediction (flushed and fsynced), so an
interrupted replay loses at most the prediction in flight — whose fault and plan side
effects the runner has already undone — and a rerun skips every id already in the file,
except those whose outcome is an error (the cluster failed, not the plan): those are tried
again and their new outcome appended; the last line per incident is the one that counts.

A rerun reuses an outcome only if it answers the same question: ``settings.json`` records
the settings of the first run, and each kept outcome must carry the plan and method the
predictions file gives now. Anything else (another predictions file or other settings into
the same directory) is refused with a DataError, so no outcome is ever reported for a plan
it did not execute, and nothing already written is overwritten.
"""

from __future__ import annotations

import dataclasses
import json
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
SETTINGS_FILE = "settings.json"


@dataclass
class ReplayRun:
    """The outcomes of a replay (old ones from a resumed file included) and what was skipped."""

    outcomes: list[ReplayOutcome] = field(default_factory=list)
    resumed: int = 0
    unknown_ids: list[str] = field(default_factory=list)


def load_outcomes(path: Path) -> list[ReplayOutcome]:
    """Outcomes already written, the last per incident; a torn last line is dropped."""
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
    latest = {o.incident_id: o for o in outcomes}  # a retried prediction: its last outcome
    return list(latest.values())


def request_of(parsed: ParsedPrediction) -> ReplayRequest:
    """What replay executes for a parsed prediction line."""
    problem = ""
    if parsed.plan_state == "invalid":
        problem = "plan did not parse (invalid structure); not executed"
    return ReplayRequest(plan=parsed.plan, plan_problem=problem, method=parsed.method)


def _check_resumable(
    out_dir: Path,
    previous: Sequence[ReplayOutcome],
    predictions: PredictionFile,
    settings: ReplaySettings,
) -> None:
    """DataError unless the outcomes in ``out_dir`` come from these predictions and settings.

    Writes ``settings.json`` on the first run (and when resuming a directory from before it
    existed).
    """
    path = out_dir / SETTINGS_FILE
    wanted = dataclasses.asdict(settings)
    if path.is_file():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise DataError(
                f"{path}: unreadable ({error}); move {out_dir} aside or pass another --out"
            ) from None
        changed = sorted(k for k in wanted if recorded.get(k) != wanted[k])
        if changed:
            were = ", ".join(f"{k} {recorded.get(k)} -> {wanted[k]}" for k in changed)
            raise DataError(
                f"{out_dir}: was replayed with other settings ({were}); pass another --out, "
                f"the same settings to resume, or remove {out_dir} to start over"
            )
    for outcome in previous:
        parsed = predictions.predictions.get(outcome.incident_id)
        if parsed is None:
            continue
        request = request_of(parsed)
        plan = None if request.plan is None else request.plan.model_dump(mode="json")
        if outcome.plan != plan or outcome.method != request.method:
            raise DataError(
                f"{out_dir / OUTCOMES_FILE}: the outcome of {outcome.incident_id} is for "
                f"another plan than {predictions.source} gives (another predictions file?); "
                f"pass another --out, or remove {out_dir} to start over"
            )
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        if not path.is_file():
            path.write_text(json.dumps(wanted, indent=1) + "\n", encoding="utf-8")
    except OSError as error:
        raise DataError(
            f"{out_dir}: cannot write the replay ({error.strerror or error}); pass another --out"
        ) from None


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
    outcomes_path = out_dir / OUTCOMES_FILE
    previous = load_outcomes(outcomes_path)
    _check_resumable(out_dir, previous, predictions, settings)
    selected = [
        incident
        for incident in records
        if incident in predictions.predictions and (not only or incident in only)
    ]
    wanted = set(selected)
    # an error outcome is the cluster's failure, not a verdict: a rerun tries it again
    run = ReplayRun(
        outcomes=[o for o in previous if o.incident_id in wanted and o.status != "error"]
    )
    done = {o.incident_id for o in run.outcomes}
    run.resumed = len(done)
    run.unknown_ids = sorted(i for i in predictions.predictions if i not in records)
    todo = [incident for incident in selected if incident not in done]
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
