"""``r2act agent run`` against a hostile OpenAI-compatible endpoint, as a user runs it.

Every malformed 200 reply (invalid JSON, ``choices`` empty or null, an HTML page), a slow
drip, a 300 MB body and 6 MB tool arguments each end their case within its bound as a
recorded failed attempt: no traceback, small trajectories, and the child process's peak
memory (the kernel's VmHWM of the CLI process) under 300 MB. An endpoint that answers 500 to
everything stops the run after a few cases with one line naming the URL and the cause;
the cases finished before are kept and a rerun resumes the rest. A malformed base URL is
refused up front, and a refused connection is reported with its URL and cause once.
"""

from __future__ import annotations

import json
import socket
import tempfile
import time
from pathlib import Path
from typing import Any

from agent_support import r2act, run_measured
from openai_stub import Drip, Huge, OpenAIStub, Raw, Reply, Status

from r2act.agents.trajectory import Trajectory, trajectory_dir

PLAN = {"operation": "restart_service", "target": "cartservice"}
ANSWER = json.dumps({"rca": {"service": "cartservice", "fault_type": "pod_failure"}, "plan": PLAN})
PEAK_MB = 300


def _cases(dataset: Path, n: int) -> list[str]:
    ids = r2act("agent", "cases", "--dataset", str(dataset)).stdout.split()
    return ids[:n]


def _measured(*args: str) -> tuple[int, str, float, float]:
    """Run the CLI; (exit code, stderr, seconds, peak RSS in MB of that process)."""
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        code, err, peak = run_measured(list(args), Path(scratch) / "peak")
    return code, err, time.monotonic() - started, peak


def _run(stub: OpenAIStub, dataset: Path, out: Path, cases: list[str], *extra: str) -> Any:
    only = [a for c in cases for a in ("--only", c)]
    return _measured(
        "agent", "run", "--dataset", str(dataset), "--model", "stub-model",
        "--base-url", stub.base_url, "--out", str(out), "--backoff", "0.01", *only, *extra,
    )  # fmt: skip


def _trajectory(out: Path, case_id: str) -> Trajectory:
    return Trajectory.model_validate_json((trajectory_dir(out) / f"{case_id}.json").read_text())


def test_malformed_slow_and_huge_replies_are_failed_attempts(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    cases = _cases(smoke_dataset, 7)
    out = tmp_path / "hostile.jsonl"
    script = [
        Raw(b'{"choices": [{"message": {"content": "trunc'),  # invalid JSON
        Raw(b'{"id": "x", "choices": []}'),
        Raw(b'{"id": "x", "choices": null}'),
        Raw(b"<html><body>502 Bad Gateway</body></html>", "text/html"),
        Drip(Reply(content=ANSWER), chunk=2, every=0.25),  # about a minute if read to the end
        Huge(300),
        Reply(content=ANSWER),  # the last case is fine: the run went on
    ]
    with OpenAIStub(script) as stub:
        code, err, _, peak = _run(
            stub, smoke_dataset, out, cases, "--attempts", "1", "--timeout", "2",
            "--stop-after", "0",
        )  # fmt: skip
    assert code == 1, err  # six cases without a line, to be resumed
    assert "Traceback" not in err
    assert peak < PEAK_MB, f"peak RSS {peak:.0f} MB"
    failures = {}
    for case in cases:
        trajectory = _trajectory(out, case)
        assert trajectory.final_metrics is not None
        extra = trajectory.final_metrics.extra
        failures[case] = extra["failure"]
        # each call ends within its bound (2 s; slack for a loaded machine), not the drip's
        assert extra["model_s"] < 2 + 8, (case, extra)
        assert (trajectory_dir(out) / f"{case}.json").stat().st_size < 64_000
    assert list(failures.values()) == [
        "bad_reply", "bad_reply", "bad_reply", "bad_reply", "timeout", "reply_too_large", None,
    ]  # fmt: skip
    why = [_trajectory(out, c).final_metrics.extra["retries"][0] for c in cases[:6]]  # type: ignore[union-attr]
    assert "not JSON" in why[0] and "no choices" in why[1] and "no choices" in why[2]
    assert "text/html" in why[3] and "in total" in why[4] and "exceeds" in why[5]
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["incident_id"] for line in lines] == cases[6:]


def test_a_bad_reply_is_retried_like_a_server_error(smoke_dataset: Path, tmp_path: Path) -> None:
    cases = _cases(smoke_dataset, 1)
    out = tmp_path / "retry.jsonl"
    with OpenAIStub([Raw(b'{"choices": null}'), Reply(content=ANSWER)]) as stub:
        code, err, _, _ = _run(stub, smoke_dataset, out, cases, "--attempts", "2")
    assert code == 0, err
    trajectory = _trajectory(out, cases[0])
    assert trajectory.final_metrics is not None
    assert trajectory.final_metrics.extra["retries"][0].startswith("bad_reply")
    assert json.loads(out.read_text())["plan"] == PLAN


def test_huge_tool_arguments_are_refused_and_not_stored(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    cases = _cases(smoke_dataset, 1)
    out = tmp_path / "tools.jsonl"
    submit = {"rca": {"service": "cartservice", "fault_type": "pod_failure"}, "plan": PLAN}
    # 6 MB of arguments fit the reply cap (8 MiB; 20 MB replies end as reply_too_large,
    # see above) and are refused by the tool-argument cap (64 KiB)
    script = [
        Reply(tool_calls=[("logs", {"contains": "x" * 6_000_000})]),
        Reply(tool_calls=[("submit", submit)]),
    ]
    with OpenAIStub(script) as stub:
        code, err, _, peak = _run(
            stub, smoke_dataset, out, cases, "--mode", "tools", "--attempts", "1"
        )
    assert code == 0, err
    assert peak < PEAK_MB, f"peak RSS {peak:.0f} MB"
    stored = trajectory_dir(out) / f"{cases[0]}.json"
    assert stored.stat().st_size < 200_000, stored.stat().st_size
    # what went back to the model: a refusal, and no 20 MB echo
    second = json.dumps(stub.requests[1]["messages"])
    assert len(second) < 200_000 and "refused" in second
    calls = [c for s in _trajectory(out, cases[0]).steps for c in (s.tool_calls or [])]
    assert "_note" in calls[0].arguments and len(calls[0].arguments["_unparsed"]) == 2000
    assert json.loads(out.read_text())["plan"] == PLAN


def test_an_endpoint_that_always_fails_stops_the_run(smoke_dataset: Path, tmp_path: Path) -> None:
    cases = _cases(smoke_dataset, 12)
    out = tmp_path / "dead.jsonl"
    script: list[Any] = [Reply(content=ANSWER), Reply(content=ANSWER)]  # then 500 for ever
    with OpenAIStub(script) as stub:
        code, err, _, _ = _run(stub, smoke_dataset, out, [], "--mode", "tools", "--attempts", "2")
        requests = len(stub.requests)
        url = stub.base_url
    assert code == 1, err
    stopped = [line for line in err.splitlines() if "run stopped" in line]
    assert len(stopped) == 1 and url in stopped[0] and "server_error" in stopped[0], err
    assert "3 cases in a row" in stopped[0]
    # two answered cases, then three cases of two attempts each; nine cases never started
    assert requests == 2 + 3 * 2, requests
    # the work does not grow with the dataset: a 302-case run stops after the same 8 calls
    # (with the defaults, 3 cases x 4 attempts and 7 s of backoff each: about 25 s)
    assert len(out.read_text().splitlines()) == 2
    with OpenAIStub([Reply(content=ANSWER) for _ in cases]) as stub:
        code, err, _, _ = _run(stub, smoke_dataset, out, [], "--mode", "tools")
        assert len(stub.requests) == len(cases) - 2  # the resumed run asks only the rest
    assert code == 0, err
    assert len(out.read_text().splitlines()) == len(cases)


def test_a_transient_error_still_gets_its_retries(smoke_dataset: Path, tmp_path: Path) -> None:
    cases = _cases(smoke_dataset, 2)
    out = tmp_path / "transient.jsonl"
    script = [Status(500), Reply(content=ANSWER), Status(503), Reply(content=ANSWER)]
    with OpenAIStub(script) as stub:
        code, err, _, _ = _run(stub, smoke_dataset, out, cases, "--attempts", "2")
    assert code == 0, err
    assert len(out.read_text().splitlines()) == 2


def test_a_malformed_base_url_is_refused_up_front(smoke_dataset: Path, tmp_path: Path) -> None:
    for url in ("http://127.0.0.1:/v1", "127.0.0.1:8000/v1", "http:///v1", "http://h:99999/v1"):
        done = r2act("agent", "run", "--dataset", str(smoke_dataset), "--model", "m",
                     "--base-url", url, "--out", str(tmp_path / "x.jsonl"),
                     check=False)  # fmt: skip
        assert done.returncode == 2, (url, done.stderr)
        assert "--base-url" in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_a_refused_connection_names_the_url_and_cause_once(
    smoke_dataset: Path, tmp_path: Path
) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    out = tmp_path / "refused.jsonl"
    code, err, _, _ = _measured(
        "agent", "run", "--dataset", str(smoke_dataset), "--model", "m", "--base-url", url,
        "--out", str(out), "--attempts", "2", "--backoff", "0.01",
    )  # fmt: skip
    assert code == 1, err
    lines = err.splitlines()
    assert lines[0].endswith(")") and url in lines[0] and "refused" in lines[0].lower(), err
    assert sum("run stopped" in line for line in lines) == 1
    assert sum(url in line for line in lines) == 2, err  # the first failure and the stop
