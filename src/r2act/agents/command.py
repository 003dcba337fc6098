"""A method that is a program: each case's inputs as files, a plan read from its output.

``write_case_dir`` lays out one case for any language (JSON and JSON Lines, nothing
r2act-specific to import)::

    case.json              {"case_id", "view", "files": [...]}
    topology.json          deployments, call graph, routes (the tool environment's answer)
    action_space.json      what a plan may use
    logs.jsonl             {"phase", "ts", "pod", "service", "line"} per line, in time order
    events.jsonl           (views logs+events, full)
    metrics.jsonl          {"phase", "ts", "query", "labels", "value"} (view full)
    state.json             {"pre": ClusterState, ...} (view full)
    answer.schema.json     JSON Schema of the answer

The command gets ``{case_dir}`` substituted (shell-quoted) and runs without a shell. Its
answer is ``case_dir/answer.json`` when it writes one, else the last line of its standard
output that parses as a JSON object.
"""

from __future__ import annotations

import json
import shlex
import subprocess
import time
from pathlib import Path
from typing import Any

import pandas as pd

from r2act import __version__
from r2act.agents.answers import FinalAnswer, answer_schema, parse_answer
from r2act.agents.cases import CaseInputs
from r2act.agents.env import CaseEnvironment
from r2act.agents.outcome import CaseResult
from r2act.agents.trajectory import Agent, Observation, ObservationResult, Trajectory
from r2act.errors import DataError

ANSWER_FILE = "answer.json"
_TAIL = 4000


def _jsonl(path: Path, frame: pd.DataFrame) -> None:
    frame.to_json(path, orient="records", lines=True, force_ascii=False)


def write_case_dir(case: CaseInputs, directory: Path) -> Path:
    """Write ``case``'s method inputs into ``directory`` (created); returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    env = CaseEnvironment(case)
    files = ["topology.json", "action_space.json", "logs.jsonl", "answer.schema.json"]
    (directory / "topology.json").write_text(json.dumps(env.topology(), indent=1), "utf-8")
    (directory / "action_space.json").write_text(json.dumps(env.action_space(), indent=1), "utf-8")
    (directory / "answer.schema.json").write_text(json.dumps(answer_schema(), indent=1), "utf-8")
    _jsonl(directory / "logs.jsonl", case.logs.sort_values(["ts", "pod", "line"], kind="stable"))
    if case.events is not None:
        _jsonl(directory / "events.jsonl", case.events.sort_values(["ts"], kind="stable"))
        files.append("events.jsonl")
    if case.metrics is not None:
        _jsonl(directory / "metrics.jsonl", case.metrics)
        files.append("metrics.jsonl")
    if case.states:
        states = {p: s.model_dump(mode="json") for p, s in sorted(case.states.items())}
        (directory / "state.json").write_text(json.dumps(states), "utf-8")
        files.append("state.json")
    meta = {"case_id": case.case_id, "view": case.view, "files": sorted(files)}
    (directory / "case.json").write_text(json.dumps(meta, indent=1), "utf-8")
    (directory / ANSWER_FILE).unlink(missing_ok=True)
    return directory


def command_argv(template: str, case_dir: Path) -> list[str]:
    """The argv of ``template`` with ``{case_dir}`` substituted; DataError when unusable."""
    if "{case_dir}" not in template:
        raise DataError(f"--command {template!r}: must contain {{case_dir}}")
    try:
        parts = shlex.split(template)
    except ValueError as error:
        raise DataError(f"--command {template!r}: {error} (check its quotes)") from None
    return [p.replace("{case_dir}", str(case_dir)) for p in parts]


class CommandAgent:
    """Runs one program per case."""

    def __init__(self, template: str, work_dir: Path, timeout_s: float = 600.0) -> None:
        command_argv(template, work_dir)  # fail before the first case
        self.template = template
        self.work_dir = work_dir
        self.timeout_s = timeout_s

    @property
    def method(self) -> str:
        """The method name written into predictions (the program's name)."""
        return f"command:{Path(shlex.split(self.template)[0]).name}"

    def solve(self, case: CaseInputs) -> CaseResult:
        """Write the case, run the program, read its answer."""
        started = time.perf_counter()
        case_dir = write_case_dir(case, self.work_dir / _safe(case.case_id))
        argv = command_argv(self.template, case_dir)
        trajectory = Trajectory(
            session_id=f"{case.case_id}:command",
            agent=Agent(
                name="r2act-command-runner", version=__version__, extra={"command": self.template}
            ),
        )
        trajectory.add("user", f"case directory: {case_dir.name}", extra={"argv": argv})
        prepared = time.perf_counter()
        answer: FinalAnswer | None = None
        failure: str | None = None
        info: dict[str, Any] = {}
        try:
            done = subprocess.run(
                argv, capture_output=True, text=True, timeout=self.timeout_s, check=False
            )
        except subprocess.TimeoutExpired:
            failure, info = "timeout", {"timeout_s": self.timeout_s}
            out = ""
        except OSError as error:
            failure, info = "command_failed", {"error": str(error)}
            out = ""
        else:
            out = done.stdout
            info = {"exit_code": done.returncode, "stderr_tail": done.stderr[-_TAIL:]}
            if done.returncode != 0:
                failure = "command_failed"
            else:
                answer, why = self._read(case_dir, out)
                if answer is None:
                    failure, info["why"] = "bad_output", why
        ran = time.perf_counter()
        trajectory.add(
            "agent",
            out[-_TAIL:],
            observation=Observation(results=[ObservationResult(content=json.dumps(info))]),
            extra={"latency_s": round(ran - prepared, 6), **info},
        )
        elapsed = time.perf_counter() - started
        trajectory.finish(
            {
                "outcome": "answered" if answer is not None else "failed",
                "failure": failure,
                "model_calls": 0,
                "latency_s": round(elapsed, 6),
                "harness_s_per_step": round(elapsed - (ran - prepared), 6),
            }
        )
        return CaseResult.of(case.case_id, self.method, answer, failure, trajectory)

    @staticmethod
    def _read(case_dir: Path, stdout: str) -> tuple[FinalAnswer | None, str]:
        written = case_dir / ANSWER_FILE
        if written.is_file():
            return parse_answer(written.read_text("utf-8", errors="replace"))
        for line in reversed(stdout.strip().splitlines()):
            if line.strip().startswith("{"):
                return parse_answer(line)
        return None, f"no {ANSWER_FILE} and no JSON object line on standard output"


def _safe(case_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in case_id)
