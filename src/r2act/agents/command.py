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

The command runs without a shell. ``{case_dir}`` standing alone as an argument becomes
the path itself; inside a longer argument (``sh -c 'prog {case_dir}'``, ``--dir={case_dir}``)
it becomes the path shell-quoted (:func:`shlex.quote`), so a path with ``;`` or spaces can
never turn into shell code. Its answer is ``case_dir/answer.json`` when it writes one, else
the last line of its standard output that parses as a JSON object.

Output is untrusted and can be huge: both streams are drained as they come and only their
tails are kept (:data:`STDOUT_TAIL_BYTES`, :data:`STDERR_TAIL_BYTES`); a program that
writes more than :data:`MAX_OUTPUT_BYTES` is stopped (``bad_output``), and an answer larger
than :data:`MAX_ANSWER_BYTES` is refused unread. The program runs in its own process
group, so a timeout stops its children too.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pandas as pd

from r2act import __version__
from r2act.agents.answers import FinalAnswer, answer_schema, case_fault_types, parse_answer
from r2act.agents.cases import CaseInputs
from r2act.agents.env import CaseEnvironment
from r2act.agents.outcome import CaseResult
from r2act.agents.trajectory import Agent, Observation, ObservationResult, Trajectory
from r2act.errors import DataError

ANSWER_FILE = "answer.json"
_TAIL = 4000
MAX_ANSWER_BYTES = 1 << 20
"""An answer (answer.json or the stdout line) is a few hundred bytes; beyond this it is refused."""
MAX_OUTPUT_BYTES = 64 << 20
"""Standard output plus error a program may write per case before it is stopped."""
STDOUT_TAIL_BYTES = 2 * MAX_ANSWER_BYTES
STDERR_TAIL_BYTES = 16 << 10


def _jsonl(path: Path, frame: pd.DataFrame) -> None:
    frame.to_json(path, orient="records", lines=True, force_ascii=False)


def write_case_dir(case: CaseInputs, directory: Path) -> Path:
    """Write ``case``'s method inputs into ``directory`` (created); returns it."""
    directory.mkdir(parents=True, exist_ok=True)
    env = CaseEnvironment(case)
    files = ["topology.json", "action_space.json", "logs.jsonl", "answer.schema.json"]
    (directory / "topology.json").write_text(json.dumps(env.topology(), indent=1), "utf-8")
    (directory / "action_space.json").write_text(json.dumps(env.action_space(), indent=1), "utf-8")
    schema = answer_schema(case_fault_types(case.topology))  # the case's system's fault types
    (directory / "answer.schema.json").write_text(json.dumps(schema, indent=1), "utf-8")
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
    """The argv of ``template`` with ``{case_dir}`` substituted; DataError when unusable.

    A whole argument ``{case_dir}`` is the path; inside a longer argument it is the path
    shell-quoted, since such an argument may be a script a shell parses (``sh -c``).
    """
    if "{case_dir}" not in template:
        raise DataError(f"--command {template!r}: must contain {{case_dir}}")
    try:
        parts = shlex.split(template)
    except ValueError as error:
        raise DataError(f"--command {template!r}: {error} (check its quotes)") from None
    if not parts:
        raise DataError(f"--command {template!r}: names no program")
    path = str(case_dir)
    return [
        path if p == "{case_dir}" else p.replace("{case_dir}", shlex.quote(path)) for p in parts
    ]


@dataclass
class _Drained:
    """What a program wrote: the tail of each stream and how many bytes in all."""

    proc: subprocess.Popen[bytes]
    stdout: bytearray = field(default_factory=bytearray)
    stderr: bytearray = field(default_factory=bytearray)
    total: int = 0
    too_much: bool = False
    lock: threading.Lock = field(default_factory=threading.Lock)


def _drain(stream: IO[bytes], tail: bytearray, keep: int, drained: _Drained) -> None:
    """Read ``stream`` to its end keeping the last ``keep`` bytes; stop the program past the cap."""
    while block := stream.read(1 << 16):
        with drained.lock:
            drained.total += len(block)
            tail += block
            if len(tail) > keep:
                del tail[: len(tail) - keep]
            if drained.total > MAX_OUTPUT_BYTES and not drained.too_much:
                drained.too_much = True
                _stop(drained.proc)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """Kill the program and everything it started (its own process group)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def run_bounded(argv: list[str], timeout_s: float) -> tuple[int | None, _Drained]:
    """Run ``argv``; (exit code, or None on timeout; what it wrote, bounded)."""
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        start_new_session=True,
    )  # fmt: skip
    assert proc.stdout is not None and proc.stderr is not None
    drained = _Drained(proc)
    readers = [
        threading.Thread(target=_drain, args=(stream, tail, keep, drained), daemon=True)
        for stream, tail, keep in (
            (proc.stdout, drained.stdout, STDOUT_TAIL_BYTES),
            (proc.stderr, drained.stderr, STDERR_TAIL_BYTES),
        )
    ]
    for reader in readers:
        reader.start()
    code: int | None
    try:
        code = proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop(proc)
        proc.wait()
        code = None
    for reader in readers:
        reader.join(timeout=5)
    proc.stdout.close()
    proc.stderr.close()
    return code, drained


class CommandAgent:
    """Runs one program per case."""

    def __init__(
        self, template: str, work_dir: Path, timeout_s: float = 600.0, method: str | None = None
    ) -> None:
        command_argv(template, work_dir)  # fail before the first case
        self.template = template
        self.work_dir = work_dir
        self.timeout_s = timeout_s
        self._method = method

    @property
    def method(self) -> str:
        """The method name written into predictions (``--method``, else the program's name)."""
        return self._method or f"command:{Path(shlex.split(self.template)[0]).name}"

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
        out = ""
        try:
            code, drained = run_bounded(argv, self.timeout_s)
        except OSError as error:
            failure, info = "command_failed", {"error": str(error)}
        else:
            out = drained.stdout.decode("utf-8", errors="replace")
            stderr = drained.stderr.decode("utf-8", errors="replace")
            info = {
                "exit_code": code,
                "stderr_tail": stderr[-_TAIL:],
                "output_bytes": drained.total,
            }
            if drained.too_much:
                failure = "bad_output"
                info["why"] = f"wrote more than {MAX_OUTPUT_BYTES} bytes and was stopped"
            elif code is None:
                failure, info = "timeout", {**info, "timeout_s": self.timeout_s}
            elif code != 0:
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
            size = written.stat().st_size
            if size > MAX_ANSWER_BYTES:
                return None, f"{ANSWER_FILE} is {size} bytes (at most {MAX_ANSWER_BYTES})"
            return parse_answer(written.read_text("utf-8", errors="replace"))
        for line in reversed(stdout.strip().splitlines()):
            if line.strip().startswith("{"):
                if len(line) > MAX_ANSWER_BYTES:
                    return (
                        None,
                        f"the answer line is {len(line)} characters (at most {MAX_ANSWER_BYTES})",
                    )
                return parse_answer(line)
        return None, f"no {ANSWER_FILE} and no JSON object line on standard output"


def _safe(case_id: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in case_id)
