"""Helpers of the agent tests: the command line in a child process, pipeline-made datasets."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]


def r2act(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the command line in a child process, the way a user does."""
    done = subprocess.run(
        [sys.executable, "-m", "r2act", *args], capture_output=True, text=True, check=False
    )
    if check and done.returncode != 0:
        raise RuntimeError(
            f"r2act {' '.join(args)} failed ({done.returncode}): {done.stderr[-2000:]}"
        )
    return done


def make_dataset(root: Path, manifest: Path) -> Path:
    """collect -> audit -> dataset build under ``root``; returns the dataset directory."""
    run, dataset = root / "run", root / "dataset"
    r2act("collect", str(manifest), "--out", str(run), "-q")
    r2act("audit", str(run))
    r2act("dataset", "build", str(run), "--out", str(dataset))
    return dataset


SAMPLE = """
name: agents-sample
description: One incident per paper cell and intensity drawn for the agent tests.
system: onlineboutique
target: {kind: sim, seed: 11}
services:
  - frontend
  - checkoutservice
  - recommendationservice
  - cartservice
  - productcatalogservice
  - paymentservice
faults:
  - {type: pod_failure, intensities: [moderate, severe]}
  - {type: cpu_saturation, intensities: [moderate, severe]}
  - {type: memory_pressure, intensities: [moderate, severe]}
  - {type: network_delay, intensities: [moderate, severe]}
  - {type: http_error, intensities: [moderate, severe]}
  - {type: http_abort, intensities: [moderate, severe]}
  - {type: dns_fault, intensities: [moderate, severe]}
  - {type: dns_random, intensities: [moderate, severe]}
repetitions: 1
phases: {pre_s: 60, during_s: 90, post_s: 60, recovery_timeout_s: 90}
load: {users: 10, spawn_rate: 1}
seed: 2024
"""
