"""``./scripts/test`` says which phase it is in and how long each took (issue 27 item 27).

The script runs here with stand-ins for every tool it calls (a venv whose python, ruff, mypy
and lint-imports only log, and prometheus, promtool, shellcheck and locust present), so the
test checks the script's own behaviour in a second: every phase is announced, the closing
list gives each phase's seconds, also when a phase fails, and the exit code is kept.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
PHASES = ["install (venv, pip)", "system packages (apt)", "Locust venv", "ruff",
          "mypy --strict src", "import-linter", "pytest"]  # fmt: skip


def _bed(tmp_path: Path, failing: str = "") -> tuple[Path, dict[str, str]]:
    (tmp_path / "scripts").mkdir()
    shutil.copy(REPO / "scripts" / "test", tmp_path / "scripts" / "test")
    tools = tmp_path / "bin"
    venv = tmp_path / "venv" / "bin"
    locust = tmp_path / "locust" / "bin"
    for directory in (tools, venv, locust):
        directory.mkdir(parents=True)
    names = {tools: ["prometheus", "promtool", "shellcheck"], locust: ["locust"]}
    names[venv] = ["python", "ruff", "mypy", "lint-imports"]
    for directory, tools_here in names.items():
        for name in tools_here:
            code = 1 if name == failing else 0
            (directory / name).write_text(f"#!/bin/sh\necho {name} \"$@\" >>{tmp_path}/log\n"
                                          f"exit {code}\n")  # fmt: skip
            (directory / name).chmod(0o755)
    env = {
        "PATH": f"{tools}:/usr/bin:/bin",
        "R2ACT_VENV": str(tmp_path / "venv"),
        "R2ACT_LOCUST_VENV": str(tmp_path / "locust"),
    }
    return tmp_path / "scripts" / "test", env


def _report(stdout: str) -> dict[str, int]:
    tail = stdout.split("== phases (", 1)[1]
    return {m[1].strip(): int(m[2]) for m in re.finditer(r"^  (.+?)\s+(\d+) s$", tail, re.M)}


def test_every_phase_is_announced_and_timed(tmp_path: Path) -> None:
    script, env = _bed(tmp_path)
    done = subprocess.run([str(script), "-k", "x"], env=env, capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    for name in PHASES:
        assert f"== {name}\n" in done.stdout
    report = _report(done.stdout)
    assert list(report) == PHASES and all(s >= 0 for s in report.values())
    # extra arguments reach pytest after the slowest-tests listing
    assert (
        "python -m pytest -n 2 --dist worksteal -q --durations=15 -k x"
        in (tmp_path / "log").read_text()
    )


def test_a_failing_phase_still_gets_the_report_and_the_exit_code(tmp_path: Path) -> None:
    script, env = _bed(tmp_path, failing="mypy")
    done = subprocess.run([str(script)], env=env, capture_output=True, text=True, timeout=60,
                          check=False)  # fmt: skip
    assert done.returncode == 1
    assert list(_report(done.stdout)) == PHASES[: PHASES.index("mypy --strict src") + 1]
    assert "lint-imports" not in (tmp_path / "log").read_text()
