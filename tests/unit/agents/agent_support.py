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


PEAK_WRAPPER = """
import atexit, os, runpy, sys
def _peak():
    with open("/proc/self/status") as status, open(os.environ["R2ACT_PEAK_FILE"], "w") as out:
        out.write(next(l for l in status if l.startswith("VmHWM:")).split()[1])
atexit.register(_peak)
sys.argv = ["r2act", *sys.argv[1:]]
runpy.run_module("r2act", run_name="__main__", alter_sys=True)
"""


def run_measured(args: list[str], peak_file: Path) -> tuple[int, str, float]:
    """Run the CLI; (exit code, stderr, peak RSS in MB of that process alone).

    The kernel's VmHWM of the process after exec: a forked child's ``ru_maxrss`` would
    also count the parent's pages at fork time (a long pytest worker's hundreds of MB).
    """
    import os

    done = subprocess.run(
        [sys.executable, "-c", PEAK_WRAPPER, *args], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, check=False,
        env={**os.environ, "R2ACT_PEAK_FILE": str(peak_file)},
    )  # fmt: skip
    return done.returncode, done.stderr, int(peak_file.read_text()) / 1024
