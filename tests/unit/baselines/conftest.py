"""A small dataset made by the real pipeline (smoke campaign -> collect -> audit -> build).

Built once per test session in a temporary directory, through the command line the way a
user runs it, so the baselines are tested on the files the other stages really write.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]


def _r2act(*args: str) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "r2act", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"r2act {' '.join(args)} failed: {done.stderr[-2000:]}")


@pytest.fixture(scope="session")
def smoke_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke campaign's dataset (11-12 incidents on the simulator)."""
    root = tmp_path_factory.mktemp("smoke")
    run, dataset = root / "run", root / "dataset"
    _r2act("collect", str(REPO / "campaigns" / "smoke.yaml"), "--out", str(run), "-q")
    _r2act("audit", str(run))
    _r2act("dataset", "build", str(run), "--out", str(dataset))
    return dataset
