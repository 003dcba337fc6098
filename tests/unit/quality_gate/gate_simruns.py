"""Collect a small campaign on the simulator through the CLI and audit it: the path a user
takes, shared by the gate tests that need real simulated incidents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.quality_gate import run_audit

QUIET = {"injection_failure": 0.0, "metric_gap": 0.0, "slow_recovery": 0.0}
"""Simulator glitch rates that never fire: a test turns on only the one it is about."""


def collect_and_audit(tmp_path: Path, manifest: dict[str, Any]) -> Path:
    """Write ``manifest``, run ``r2act collect`` on it, audit the run; the run directory."""
    path = tmp_path / f"{manifest['name']}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    run = tmp_path / "run"
    _register_commands()
    result = CliRunner().invoke(app, ["collect", str(path), "--out", str(run), "--quiet"])
    assert result.exit_code == 0, result.output
    run_audit(run, workers=1)
    return run
