"""Without a terminal, ``collect`` still says what it does: header, plain progress, summary.

A real ``python -m r2act collect`` writes to a file (as ``collect ... > log`` or a CI job
does); the log must open with the header before any work, show done/total with the time
left at a bounded rate, and end with the summary. The rate itself is checked on
``PlainProgress`` with a hand-driven clock.
"""

from __future__ import annotations

import io
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from collector_helpers import write_campaign
from rich.console import Console

from r2act.cli._progress import PLAIN_INTERVAL_S, PlainProgress

_PROGRESS = re.compile(r"^collect: (\d+)/(\d+) incidents")


def _collect_to_file(campaign: Path, out: Path, log: Path, *extra: str) -> float:
    started = time.monotonic()
    with log.open("w") as stream:
        child = subprocess.run(
            [sys.executable, "-m", "r2act", "collect", str(campaign), "--out", str(out), *extra],
            stdout=stream,
            stderr=subprocess.STDOUT,
            timeout=600,
            check=False,
        )
    assert child.returncode == 0, log.read_text()
    return time.monotonic() - started


def _check_log(text: str, planned: int, seconds: float) -> list[str]:
    lines = text.splitlines()
    assert "\x1b[" not in text  # plain text, no terminal codes
    assert lines[0].startswith(f"collect lanes-or-not: {planned} incidents in the plan, into ")
    progress = [line for line in lines if _PROGRESS.match(line)]
    counts = [tuple(map(int, _PROGRESS.match(line).groups())) for line in progress]  # type: ignore[union-attr]
    assert (1, planned) in counts and counts[-1] == (planned, planned), progress
    assert [done for done, _ in counts] == sorted(done for done, _ in counts)
    first = progress[counts.index((1, planned))]
    assert "left" in first  # an estimate as soon as one incident ended
    # at most one line per interval, plus the first and the last incident's
    assert len(progress) <= 2 + seconds / PLAIN_INTERVAL_S, progress
    summary = lines.index(
        next(line for line in lines if line.startswith("collect lanes-or-not ->"))
    )
    assert summary > lines.index(progress[-1])
    assert re.search(rf"^\s+{planned}\s+{planned}\s+0\s+0\s+0\s*$", text, re.MULTILINE)
    return progress


@pytest.mark.parametrize("lanes", [None, 2], ids=["one-cluster", "two-lanes"])
def test_collect_to_a_file_prints_header_progress_and_summary(
    tmp_path: Path, lanes: int | None
) -> None:
    campaign = write_campaign(
        tmp_path, "lanes-or-not", faults=("pod_failure", "cpu_saturation"), repetitions=2
    )
    if lanes is not None:
        data = yaml.safe_load(campaign.read_text())
        data["target"]["lanes"] = lanes
        campaign.write_text(yaml.safe_dump(data))
    log = tmp_path / "collect.log"
    seconds = _collect_to_file(campaign, tmp_path / "run", log)
    _check_log(log.read_text(), 4, seconds)


def test_quiet_collect_to_a_file_prints_header_and_summary_only(tmp_path: Path) -> None:
    campaign = write_campaign(tmp_path, "lanes-or-not")
    log = tmp_path / "collect.log"
    _collect_to_file(campaign, tmp_path / "run", log, "-q")
    lines = log.read_text().splitlines()
    assert lines[0].startswith("collect lanes-or-not: 2 incidents in the plan, into ")
    assert not [line for line in lines if _PROGRESS.match(line)]
    assert any(line.startswith("collect lanes-or-not ->") for line in lines)
    again = tmp_path / "again.log"
    _collect_to_file(campaign, tmp_path / "run", again, "-q")  # resumed: nothing to do
    lines = again.read_text().splitlines()
    assert lines[0].startswith("collect lanes-or-not: 2 incidents in the plan")
    assert "nothing to do" in lines[-1]


class _Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_plain_progress_prints_at_most_one_line_per_interval() -> None:
    clock, stream = _Clock(), io.StringIO()
    progress = PlainProgress(Console(file=stream, width=200), interval_s=15.0, clock=clock)
    progress.start(100, skipped=3)
    for n in range(100):
        for step in ("pre", "inject", "during", "post"):
            clock.now += 0.25
            progress.working(f"incident-{n} ({step})")
        progress.finished(failed=n % 10 == 0)
    lines = stream.getvalue().splitlines()
    assert lines[0] == "collect: 100 incidents to collect; 3 already complete, skipped"
    assert lines[1] == "collect: 1/100 incidents (1 failed), 0m 01s elapsed, about 1m 39s left"
    assert lines[-1] == "collect: 100/100 incidents (10 failed), 1m 40s elapsed"
    assert len(lines) == 2 + 100 // 15 + 1  # start, first, one per 15 s, last
    assert all("now incident-" in line for line in lines[2:-1])


def test_a_top_up_round_is_announced_and_grows_the_total() -> None:
    clock, stream = _Clock(), io.StringIO()
    progress = PlainProgress(Console(file=stream, width=200), clock=clock)
    progress.start(2, skipped=0)
    progress.finished(failed=True)
    progress.finished(failed=False)
    progress.grow(1)
    clock.now += 60
    progress.finished(failed=False)
    lines = stream.getvalue().splitlines()
    assert lines[-2] == (
        "collect: top-up round: 1 spare for cells still short of clean incidents (2/3 done)"
    )
    assert lines[-1] == "collect: 3/3 incidents (1 failed), 1m 00s elapsed"
