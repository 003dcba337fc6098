"""Failures stay inside their incident; disk failures stop cleanly and corrupt nothing."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pytest
from collector_helpers import TransientCounter, write_campaign

from r2act.collector import collect, layout, open_target, plan_collection, store
from r2act.collector.journal import Journal
from r2act.errors import DataError, PermanentClusterError


def _journal(directory: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (directory / layout.JOURNAL).read_text().splitlines()]


def _digest(directory: Path) -> dict[str, str]:
    return {
        str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(directory.rglob("*"))
        if p.is_file()
    }


def test_transient_errors_are_retried_and_journalled_and_a_broken_incident_only_fails_itself(
    tmp_path: Path,
) -> None:
    probe = write_campaign(tmp_path, "probe", faults=("pod_failure", "cpu_saturation", "dns_fault"))
    doomed = plan_collection(probe).items[1].incident.id
    campaign = write_campaign(
        tmp_path,
        "flaky",
        faults=("pod_failure", "cpu_saturation", "dns_fault"),
        glitches={"transient_api_error": 0.1, "fail_incidents": [doomed]},
    )
    plan = plan_collection(campaign)
    spies: list[TransientCounter] = []

    def factory(manifest: Any, run_dir: Path) -> Any:
        spies.append(TransientCounter(open_target(manifest, run_dir)))
        return spies[-1]

    run_dir = tmp_path / "run"
    summary = collect(plan, run_dir, cluster_factory=factory)
    assert (summary.completed, summary.failed) == (len(plan.items) - 1, 1)
    failed = next(r for r in summary.results if r.status == "failed")
    assert failed.incident_id == doomed
    records = [r for item in plan.items for r in _journal(run_dir / "raw" / item.incident.id)]
    retries = [r for r in records if r["status"] == "retry"]
    # on the simulator every incident runs on a freshly opened cluster (collector.fresh)
    assert len(spies) == 1 + len(plan.items)
    assert len(retries) == sum(sum(spy.counts.values()) for spy in spies) > 0
    assert all(r["error"] and r["attempt"] >= 1 for r in retries)
    doomed_records = _journal(run_dir / "raw" / doomed)
    assert any(r["status"] == "failed" and r["error"] for r in doomed_records)
    assert not layout.is_complete(run_dir / "raw" / doomed)
    assert open_target(plan.manifest, run_dir).leftovers() == []


def test_disk_full_mid_incident_stops_with_one_line_and_keeps_completed_ones(
    tiny_campaign: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_collection(tiny_campaign)
    run_dir = tmp_path / "run"
    first, second = (item.incident.id for item in plan.items)
    real_atomic = store.atomic_file

    @contextmanager
    def filling(path: Path) -> Iterator[IO[bytes]]:
        if path.parent.name == "during" and path.parent.parent.name == second:
            with store.writing(path):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        with real_atomic(path) as handle:
            yield handle

    collect(plan_collection(tiny_campaign, [first]), run_dir)
    before = _digest(run_dir / "raw" / first)
    monkeypatch.setattr(store, "atomic_file", filling)
    with pytest.raises(DataError) as caught:
        collect(plan, run_dir)
    message = str(caught.value)
    assert "\n" not in message and second in message and "No space left" in message
    assert _digest(run_dir / "raw" / first) == before
    assert not layout.is_complete(run_dir / "raw" / second)
    assert open_target(plan.manifest, run_dir).leftovers() == []
    monkeypatch.undo()
    summary = collect(plan, run_dir)
    assert [r.incident_id for r in summary.results] == [second]


@contextmanager
def _read_only(directory: Path) -> Iterator[None]:
    """Make ``directory`` read-only for real: chmod for users, a read-only bind mount for root."""
    if os.geteuid() != 0:
        modes = {p: p.stat().st_mode for p in [directory, *directory.rglob("*")]}
        for p, mode in modes.items():
            p.chmod(mode & ~0o222)
        try:
            yield
        finally:
            for p, mode in modes.items():
                p.chmod(mode)
        return
    mounted = subprocess.run(  # noqa: PLW1510 - the return code is asserted
        ["mount", "--bind", "-o", "ro", str(directory), str(directory)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip("cannot make a read-only directory as root here (no bind mount)")
    try:
        yield
    finally:
        subprocess.run(["umount", str(directory)], check=True)


def test_read_only_run_dir_gives_one_line_exit_2_and_corrupts_nothing(
    tiny_campaign: Path, tmp_path: Path
) -> None:
    plan = plan_collection(tiny_campaign)
    run_dir = tmp_path / "run"
    collect(plan_collection(tiny_campaign, [plan.items[0].incident.id]), run_dir)
    before = _digest(run_dir)
    with _read_only(run_dir):
        done = subprocess.run(  # noqa: PLW1510 - the return code is asserted
            [
                sys.executable,
                "-m",
                "r2act",
                "collect",
                str(tiny_campaign),
                "--out",
                str(run_dir),
                "-q",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and str(run_dir) in lines[0], done.stderr
    assert _digest(run_dir) == before


def test_an_unexpected_error_in_cleanup_closes_the_journal_and_the_guard_removes_the_fault(
    tiny_campaign: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plan = plan_collection(tiny_campaign)
    run_dir = tmp_path / "run"
    closed: list[Path] = []
    real_close = Journal.close

    def close(self: Journal) -> None:
        closed.append(self._path)
        real_close(self)

    class Broken:
        """A cluster whose pod listing fails permanently and whose first removal crashes."""

        def __init__(self, inner: Any) -> None:
            self._inner, self.removals = inner, 0

        def __getattr__(self, name: str) -> Any:
            return getattr(self._inner, name)

        def pod_names(self) -> set[str]:  # read only while confirming the injection
            raise PermanentClusterError("pods unreadable")

        def remove(self, ref: Any, timeout_s: float = 60.0) -> None:
            self.removals += 1
            if self.removals == 1:
                raise RuntimeError("adapter bug")
            self._inner.remove(ref, timeout_s)

    monkeypatch.setattr(Journal, "close", close)
    with pytest.raises(RuntimeError, match="adapter bug"):
        collect(plan, run_dir, cluster_factory=lambda m, d: Broken(open_target(m, d)))
    first = run_dir / "raw" / plan.items[0].incident.id
    assert closed == [first / layout.JOURNAL]
    assert open_target(plan.manifest, run_dir).leftovers() == []
