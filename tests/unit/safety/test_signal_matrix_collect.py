"""Collect stopped by SIGINT, SIGTERM, SIGHUP or SIGKILL at two moments on the simulator.

After each stop: the exit status is 128+N (SIGKILL: killed), the next collect refuses while
the ledger lists anything, ``r2act cleanup`` leaves nothing behind, and the resumed run's
observations are byte-identical to an uninterrupted run's.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from safety_support import run_stopped, tiny_campaign
from typer.testing import CliRunner

import r2act.cli.collect  # noqa: F401 - registers collect and cleanup on the app
from r2act.cli.app import app
from r2act.collector import collect, ledger, open_target, plan_collection
from r2act.errors import SafetyError

MOMENTS = {
    "fault-live": "inject:1",  # the first fault was just created
    "second-incident": "logs:4",  # the second incident's baseline is being read
}


def _observations(run_dir: Path) -> dict[str, bytes]:
    """Every file of every complete incident, except the journal (it records wall time)."""
    raw = run_dir / "raw"
    return {
        str(path.relative_to(raw)): path.read_bytes()
        for path in sorted(raw.glob("*/**/*"))
        if path.is_file()
        and path.name != "journal.jsonl"
        and not path.parts[-2].startswith(".")
        and ".partial" not in path.parts
    }


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    base = tmp_path_factory.mktemp("uninterrupted")
    plan = plan_collection(tiny_campaign(base))
    summary = collect(plan, base / "run")
    assert summary.completed == 2
    return _observations(base / "run")


@pytest.mark.parametrize(
    ("signal_name", "moment"),
    [
        ("SIGINT", "fault-live"),
        ("SIGTERM", "fault-live"),
        ("SIGHUP", "fault-live"),
        ("SIGHUP", "second-incident"),
        ("SIGKILL", "fault-live"),
        ("SIGKILL", "second-incident"),
    ],
)
def test_collect_stopped_then_cleaned_resumes_to_identical_observations(
    signal_name: str, moment: str, tmp_path: Path, uninterrupted: dict[str, bytes]
) -> None:
    campaign = tiny_campaign(tmp_path)
    plan = plan_collection(campaign)
    run_dir = tmp_path / "run"
    stopped = run_stopped(
        MOMENTS[moment], signal_name, ["collect", str(campaign), "--out", str(run_dir), "-q"]
    )
    signum = signal.Signals[signal_name]
    if signum == signal.SIGKILL:
        assert stopped.returncode == -signal.SIGKILL
    else:
        assert stopped.returncode == 128 + signum, stopped.stderr
        assert "Traceback" not in stopped.stderr
    left = ledger.pending(run_dir)
    if signum == signal.SIGKILL and moment == "fault-live":
        # the fault is on the cluster and in the ledger: the next run refuses, one line
        assert not left.empty and open_target(plan.manifest, run_dir).leftovers()
        with pytest.raises(SafetyError) as refused:
            collect(plan, run_dir)
        assert f"r2act cleanup {campaign} --out {run_dir}" in str(refused.value)
        assert "\n" not in str(refused.value)
        cleaned = CliRunner().invoke(app, ["cleanup", str(campaign), "--out", str(run_dir)])
        assert cleaned.exit_code == 0, cleaned.output
        assert "removed PodChaos/" in cleaned.output
    else:
        assert left.empty  # a handled signal removed the fault; a kill between faults left none
    assert ledger.pending(run_dir).empty
    assert open_target(plan.manifest, run_dir).leftovers() == []
    summary = collect(plan, run_dir)
    assert summary.failed == 0 and summary.remaining == 0
    assert _observations(run_dir) == uninterrupted
