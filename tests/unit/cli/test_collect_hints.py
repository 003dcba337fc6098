"""What ``r2act collect`` tells a user to do next must not throw away finished work."""

from __future__ import annotations

from pathlib import Path

import yaml
from typer.testing import CliRunner

from r2act.cli import _register_commands, app


def _campaign(directory: Path, doomed: str) -> Path:
    quiet = {"injection_failure": 0.0, "metric_gap": 0.0, "slow_recovery": 0.0}
    manifest = {
        "name": "hints",
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 11, "glitches": {**quiet, "fail_incidents": [doomed]}},
        "services": ["cartservice"],
        "faults": [
            {"type": f, "intensities": ["severe"]} for f in ("pod_failure", "network_delay")
        ],
        "phases": {"pre_s": 20, "during_s": 30, "post_s": 20, "recovery_timeout_s": 60},
        "seed": 5,
    }
    path = directory / "hints.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def test_after_a_no_resume_run_the_retry_hint_drops_no_resume(tmp_path: Path) -> None:
    _register_commands()
    doomed = "onlineboutique_cartservice_network_delay_severe_r01"
    campaign = _campaign(tmp_path, doomed)
    args = ["collect", str(campaign), "--out", str(tmp_path / "run"), "--quiet"]
    result = CliRunner().invoke(app, [*args, "--no-resume"])
    assert result.exit_code == 1, result.output
    assert "Rerun without --no-resume/--force to retry them" in result.output
    again = CliRunner().invoke(app, args)  # what the hint says: keeps the complete incident
    assert again.exit_code == 1, again.output
    assert "Rerun the same command to retry them" in again.output
