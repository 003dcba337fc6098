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
    r2act("audit", str(run), "--workers", "1")
    r2act("dataset", "build", str(run), "--out", str(dataset))
    return dataset


def sample_manifest(path: Path) -> Path:
    """The paper campaign with one incident per realizable cell and intensity, short phases."""
    import yaml

    manifest = yaml.safe_load((REPO / "campaigns" / "r2act-302.yaml").read_text("utf-8"))
    manifest["name"] = "agents-sample"
    manifest["spares"] = 0
    manifest.pop("spare_ratio", None)
    manifest["phases"] = {"pre_s": 60, "during_s": 90, "post_s": 60, "recovery_timeout_s": 90}
    for cell in manifest["cells"]:
        cell["repetitions"] = min(cell["repetitions"], 1)
    path.write_text(yaml.safe_dump(manifest, sort_keys=False), encoding="utf-8")
    return path
