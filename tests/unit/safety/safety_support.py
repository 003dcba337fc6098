"""Shared pieces of the safety tests: tiny campaigns, and a child stopped by a signal."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
QUIET = {"injection_failure": 0.0, "metric_gap": 0.0, "slow_recovery": 0.0}


def tiny_campaign(directory: Path, name: str = "tiny", **extra: object) -> Path:
    """Two incidents on the simulator, short phases, no glitches."""
    manifest = {
        "name": name,
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 11, "glitches": dict(QUIET)},
        "services": ["cartservice", "frontend"],
        "faults": [
            {"type": "pod_failure", "intensities": ["severe"]},
            {"type": "http_error", "intensities": ["severe"]},
        ],
        "cells": [  # an HTTP fault is a frontend route rule (docs/faults.md)
            {"service": "cartservice", "fault": "http_error", "repetitions": 0},
            {"service": "frontend", "fault": "pod_failure", "repetitions": 0},
        ],
        "phases": {"pre_s": 15, "during_s": 20, "post_s": 15, "recovery_timeout_s": 60},
        "seed": 5,
        **extra,
    }
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def run_stopped(
    when: str, signal_name: str, args: list[str], records: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``r2act ARGS`` in a child stopped by ``signal_name`` at ``when`` (see stop_child)."""
    extra = ["--records", str(records)] if records is not None else []
    return subprocess.run(  # noqa: PLW1510 - callers assert the return code
        [sys.executable, str(HERE / "stop_child.py"), when, signal_name, *extra, "--", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )
