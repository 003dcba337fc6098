"""Run a method over a dataset's cases: predictions, one trajectory per case, a run summary.

Predictions are appended one line per finished case and flushed at once, so an interrupted
run loses at most the case in flight and a rerun with the same ``--out`` skips every case
that already has a line (resume). A half-written last line (a crash mid-write) is cut off
before appending. Cases run on ``concurrency`` threads; the model calls dominate, and
reading a case's tables is serialised because one Parquet reader is shared.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from r2act.agents.cases import CaseInputs, CaseSource
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
    written = 0

    def one(case_id: str) -> CaseResult:
        nonlocal written
        with read_lock:
            case = source.inputs(case_id)
        result = solver.solve(case)
        with write_lock:
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
        list(pool.map(one, todo))
    summary = summarize(read_trajectories(trajectories))
    summary["method"] = solver.method
    summary["dataset"] = str(source.root)
    summary["view"] = source.view
    write_json_atomic(summary_path(out), dump(summary))
    return RunReport(out, len(wanted) - len(todo), len(todo), written, summary)
