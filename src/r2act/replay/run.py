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
from r2act.collector.ledger import Ledger
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
    identity: Mapping[str, str] | None = None,
) -> None:
    """DataError unless the outcomes in ``out_dir`` come from these predictions and settings.

    ``identity`` names the dataset and the target (``dataset``, ``target``): a resume that
    would keep verdicts judged on another dataset or another cluster is refused like changed
    settings (while only cluster errors are on file, nothing is kept and another target may
    take over). Writes ``settings.json`` on the first run (and when resuming a directory
    from before it existed).
    """
    path = out_dir / SETTINGS_FILE
    wanted: dict[str, object] = {**dataclasses.asdict(settings), **(identity or {})}
    rewrite = not path.is_file()
    if path.is_file():
        try:
            recorded = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as error:
            raise DataError(
                f"{path}: unreadable ({error}); move {out_dir} aside or pass another --out"
            ) from None
        # a key the first run did not record (an older r2act) cannot be compared
        changed = sorted(k for k in wanted if k in recorded and recorded[k] != wanted[k])
        if {"dataset", "target"}.issuperset(changed) and all(o.status == "error" for o in previous):
            changed, rewrite = [], bool(changed)  # no verdict kept: nothing to mix up
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
        if rewrite:
            path.write_text(json.dumps(wanted, indent=1) + "\n", encoding="utf-8")
    except OSError as error:
        raise DataError(
            f"{out_dir}: cannot write the replay ({error.strerror or error}); pass another --out"
        ) from None


def _append(path: Path, outcome: ReplayOutcome) -> None:
    """Append one outcome (its fault and plan are already reverted when this runs)."""
    try:
        with path.open("a", encoding="utf-8") as stream:
            stream.write(outcome.model_dump_json() + "\n")
            stream.flush()
            os.fsync(stream.fileno())
    except OSError as error:
        raise DataError(
            f"{path}: cannot write the outcome of {outcome.incident_id} "
            f"({error.strerror or error}); its fault and plan were already reverted (free "
            "space or fix permissions, then rerun to resume)"
        ) from None


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
    ledger: Ledger | None = None,
    identity: Mapping[str, str] | None = None,
) -> ReplayRun:
    """Replay every prediction whose id is in ``records`` (and in ``only``, when given).

    With a ``ledger`` (the CLI always passes one), every fault and plan is written down
    before it is sent and every object sent carries the ledger's run label.
    """
    outcomes_path = out_dir / OUTCOMES_FILE
    previous = load_outcomes(outcomes_path)
    _check_resumable(out_dir, previous, predictions, settings, identity)
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
    run_id = None if ledger is None else ledger.run_id
    guard_of = CleanupGuard(cluster.remove)
    if ledger is not None:
        guard_of = CleanupGuard(cluster.remove, on_arm=ledger.fault, on_disarm=ledger.fault_removed)
    try:
        with guard_of as guard:
            for incident in todo:
                on_start(incident)
                request = request_of(predictions.predictions[incident])
                with journal.step(f"replay {incident}") as step:
                    outcome = replay_one(
                        cluster,
                        records[incident],
                        request,
                        settings,
                        guard,
                        ledger=ledger,
                        run_id=run_id,
                    )
                    if outcome.status == "error":
                        step.warn(outcome.reason)
                _append(outcomes_path, outcome)
                run.outcomes.append(outcome)
                on_outcome(outcome)
    finally:
        journal.close()
    return run


def write_report_files(out_dir: Path, report_json: str, markdown: str) -> None:
    """Write ``report.json`` and ``report.md`` next to the outcomes, each atomically.

    A reader (or a second replay) sees the old report or the new one, never half of one;
    the report is recomputed from ``replay.jsonl``, which is only ever appended to.
    """
    for name, text in (("report.json", report_json + "\n"), ("report.md", markdown)):
        target = out_dir / name
        temporary = out_dir / f".{name}.tmp"
        try:
            with temporary.open("w", encoding="utf-8") as stream:
                stream.write(text)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        except OSError as error:
            temporary.unlink(missing_ok=True)
            raise DataError(
                f"{target}: cannot write the report ({error.strerror or error}); the outcomes "
                f"in {out_dir / OUTCOMES_FILE} are kept (free space or fix permissions, rerun)"
            ) from None
