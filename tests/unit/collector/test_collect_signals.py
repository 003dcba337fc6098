"""A collection stopped by SIGINT or SIGKILL leaves nothing injected and resumes exactly.

The collector runs as a real subprocess (``python -m r2act collect``) so signals arrive as
they would from a terminal or an orchestrator.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from collector_helpers import ALL_FAULTS, write_campaign

from r2act.collector import collect, layout, open_target, plan_collection, resume
from r2act.errors import SafetyError


def _start(campaign: Path, run_dir: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "r2act", "collect", str(campaign), "--out", str(run_dir), "-q"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # its own process group, as a terminal job has
    )


def _wait_for(predicate: object, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        if time.monotonic() > deadline:
            pytest.fail("collection did not reach the expected point in time")
        time.sleep(0.01)


def _injected(run_dir: Path) -> bool:
    """Some incident has journalled a successful inject and no removal yet."""
    for journal in (run_dir / "raw").glob(f"*/{layout.JOURNAL}"):
        steps = [json.loads(x) for x in journal.read_text().splitlines() if x.endswith("}")]
        done = {r["step"] for r in steps if r["status"] == "ok"}
        if "inject" in done and "remove" not in done:
            return True
    return False


@pytest.fixture
def larger(tmp_path: Path) -> Path:
    # long enough (32 incidents) that a signal within a second of the start lands mid-run
    return write_campaign(tmp_path, "larger", faults=ALL_FAULTS, repetitions=4)


@pytest.mark.parametrize(
    ("signals", "to_group"),
    [
        ((signal.SIGINT,), False),
        ((signal.SIGINT,), True),
        ((signal.SIGINT, signal.SIGINT), True),
        ((signal.SIGTERM,), False),
        ((signal.SIGTERM,), True),
    ],
    ids=["sigint", "ctrl-c", "ctrl-c-twice", "sigterm", "sigterm-group"],
)
def test_a_signal_at_a_random_moment_removes_the_fault_and_rerun_completes_the_rest(
    signals: tuple[signal.Signals, ...], to_group: bool, larger: Path, tmp_path: Path
) -> None:
    """``to_group``: the signal reaches the whole process group (a terminal's Ctrl-C, a
    group kill), so r2act's own helper processes get it too."""
    plan = plan_collection(larger)
    run_dir = tmp_path / "run"
    process = _start(larger, run_dir)
    _wait_for(lambda: (run_dir / "raw").is_dir() and any((run_dir / "raw").iterdir()))
    time.sleep(random.uniform(0.0, 1.0))
    for signum in signals:
        if to_group:
            os.killpg(process.pid, signum)
        else:
            process.send_signal(signum)
        time.sleep(0.005)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signals[0], stderr
    assert open_target(plan.manifest, run_dir).leftovers() == []
    complete_before = resume.scan(run_dir / "raw").complete
    summary = collect(plan, run_dir)
    redone = [r.incident_id for r in summary.results]
    assert sorted(redone) == sorted({i.incident.id for i in plan.items} - complete_before)
    assert summary.failed == 0 and summary.skipped == len(complete_before)


def test_after_sigkill_preflight_points_to_cleanup_and_cleanup_lets_it_resume(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "run"
    slow = write_campaign(
        tmp_path,
        "slow",
        faults=ALL_FAULTS[:3],
        phases={"pre_s": 20, "during_s": 300, "post_s": 20, "recovery_timeout_s": 60},
    )
    plan = plan_collection(slow)
    process = _start(slow, run_dir)
    _wait_for(lambda: _injected(run_dir))
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=30)
    leftovers = open_target(plan.manifest, run_dir).leftovers()
    assert len(leftovers) == 1
    with pytest.raises(SafetyError) as caught:
        collect(plan, run_dir)
    assert f"r2act cleanup {slow} --out {run_dir}" in str(caught.value)
    swept = subprocess.run(  # noqa: PLW1510 - the return code is asserted
        [sys.executable, "-m", "r2act", "cleanup", str(slow), "--out", str(run_dir)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert swept.returncode == 0, swept.stderr
    assert leftovers[0].name in swept.stdout
    complete_before = resume.scan(run_dir / "raw").complete
    summary = collect(plan, run_dir)
    assert sorted(r.incident_id for r in summary.results) == sorted(
        {i.incident.id for i in plan.items} - complete_before
    )
    assert open_target(plan.manifest, run_dir).leftovers() == []
