"""Run a method over a dataset's cases: predictions, one trajectory per case, a run summary.

Predictions are appended one line per finished case and flushed at once, so an interrupted
run loses at most the case in flight and a rerun with the same ``--out`` skips every case
that already has a line (resume). A half-written last line (a crash mid-write) is cut off
before appending. Cases run on ``concurrency`` threads; the model calls dominate, and
reading a case's tables is serialised because one Parquet reader is shared.

A dead endpoint should not cost a whole run's retries: after ``stop_after`` cases in a row
end in an infrastructure failure (no line written), no further case is started, the cases
in flight finish, and the report says why it stopped (the solver's ``endpoint`` and last
error when it has them). Every finished case is on disk, so a rerun resumes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from r2act.agents.outcome import CaseResult
from r2act.agents.trajectory import (
    dump,
    read_trajectories,
    summarize,
    summary_path,
    trajectory_dir,
    write_json_atomic,
)
from r2act.errors import DataError

if TYPE_CHECKING:  # a runner is handed its source: writing predictions needs no Arrow
    from r2act.agents.cases import CaseInputs, CaseSource


class Solver(Protocol):
    """Anything that turns one case into a result."""

    @property
    def method(self) -> str:
        """Method name."""
        ...

    def solve(self, case: CaseInputs) -> CaseResult:
        """Solve one case."""
        ...


@dataclass(frozen=True)
class RunReport:
    """What a run did."""

    out: Path
    skipped: int
    ran: int
    written: int
    summary: dict[str, Any]
    stopped: str | None = None
    """Why the run stopped early (consecutive infrastructure failures), else None."""


def finished_ids(out: Path) -> set[str]:
    """Ids that already have a line in ``out``; cuts a half-written last line."""
    if not out.exists():
        return set()
    if out.is_dir():
        raise DataError(f"{out}: is a directory (pass a .jsonl file as --out)")
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        out.write_bytes(data)
    ids = set()
    for line in data.splitlines():
        try:
            value = json.loads(line)
        except ValueError:
            continue
        if isinstance(value, dict) and isinstance(value.get("incident_id"), str):
            ids.add(value["incident_id"])
    return ids


def _file_name(case_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in case_id) + ".json"


def run_cases(
    source: CaseSource,
    solver: Solver,
    out: Path,
    *,
    only: list[str] | None = None,
    concurrency: int = 1,
    progress: Callable[[CaseResult], None] | None = None,
    stop_after: int | None = None,
) -> RunReport:
    """Solve every selected case not yet in ``out``; write lines, trajectories, summary."""
    wanted = source.select(only)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        done = finished_ids(out)
    except OSError as error:
        raise DataError(f"{out}: cannot use as --out ({error.strerror or error})") from None
    todo = [c for c in wanted if c not in done]
    trajectories = trajectory_dir(out)
    read_lock, write_lock = threading.Lock(), threading.Lock()
    written, streak = 0, 0
    stop = threading.Event()
    stopped: list[str] = []

    def one(case_id: str) -> CaseResult | None:
        nonlocal written, streak
        if stop.is_set():
            return None
        with read_lock:
            case = source.inputs(case_id)
        result = solver.solve(case)
        with write_lock:
            infrastructure = result.prediction is None and result.failure is not None
            streak = streak + 1 if infrastructure else 0
            if stop_after and streak >= stop_after and not stop.is_set():
                stop.set()
                stopped.append(_stop_reason(solver, streak, result))
            write_json_atomic(
                trajectories / _file_name(case_id), result.trajectory.model_dump_json(indent=1)
            )
            if result.prediction is not None:
                with out.open("a", encoding="utf-8", newline="\n") as handle:
                    handle.write(result.prediction.model_dump_json() + "\n")
                    handle.flush()
                written += 1
            if progress is not None:
                progress(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, concurrency)) as pool:
        ran = sum(r is not None for r in pool.map(one, todo))
    summary = summarize(read_trajectories(trajectories))
    summary["method"] = solver.method
    summary["dataset"] = str(source.root)
    summary["view"] = source.view
    write_json_atomic(summary_path(out), dump(summary))
    stop_line = stopped[0] if stopped else None
    return RunReport(out, len(wanted) - len(todo), ran, written, summary, stop_line)


def _stop_reason(solver: Solver, streak: int, last: CaseResult) -> str:
    """One line: where the failures came from and the last cause."""
    where = getattr(solver, "endpoint", None) or solver.method
    cause = getattr(solver, "last_error", "") or str(last.failure)
    return f"{where}: {streak} cases in a row failed ({cause}); stopped starting new cases"
