"""``merge`` carries only the bytes that were collected: digests checked, no links, no strays.

Each test tampers with a copy of one real (simulated) shard run, then merges it with the
other shard; merge must refuse at the first bad file, name it, exit 2 and write nothing.
"""

from __future__ import annotations

import os
import shutil
import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from collector_helpers import write_campaign
from typer.testing import CliRunner

from r2act.cli import _register_commands, app, main
from r2act.collector import layout
from r2act.collector.merge import merge_runs
from r2act.errors import DataError

_register_commands()
runner = CliRunner()


@pytest.fixture(scope="module")
def shards(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("shards")
    campaign = write_campaign(root, faults=("pod_failure", "cpu_saturation"), repetitions=2)
    runs = (root / "shard-1", root / "shard-2")
    for index, out in enumerate(runs, start=1):
        result = runner.invoke(
            app, ["collect", str(campaign), "--out", str(out), "-q", "--shard", f"{index}/2"]
        )
        assert result.exit_code == 0, result.output
    return runs


@pytest.fixture
def copies(shards: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path]:
    """Fresh copies per test (no hard links: tampering must not reach the module's runs)."""
    one, two = (shutil.copytree(run, tmp_path / run.name) for run in shards)
    return Path(one), Path(two)


def _incident(run: Path) -> Path:
    return sorted(p for p in layout.raw_dir(run).iterdir() if layout.is_complete(p))[0]


@pytest.fixture
def refused(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Callable[..., str]:
    """Merge through the CLI: exit 2, one error line naming the file, nothing written."""

    def check(runs: tuple[Path, Path], out: Path, *names: str) -> str:
        monkeypatch.setattr(sys, "argv", ["r2act", "merge", *map(str, runs), "--out", str(out)])
        with pytest.raises(SystemExit) as exited:
            main()
        assert exited.value.code == 2
        captured = capsys.readouterr()
        err = [line for line in captured.err.splitlines() if line.strip()]
        assert len(err) == 1 and "Traceback" not in captured.err, captured.err
        assert all(name in err[0] for name in names), err[0]
        assert not out.exists()
        with pytest.raises(DataError):
            merge_runs(runs, out)
        assert not out.exists()
        return err[0]

    return check


def test_a_byte_flipped_parquet_file_is_refused(
    copies: tuple[Path, Path], tmp_path: Path, refused: Callable[..., str]
) -> None:
    victim = _incident(copies[1]) / "during" / layout.METRICS
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0x01
    victim.write_bytes(bytes(data))
    output = refused(copies, tmp_path / "merged", str(victim), "SHA-256")
    assert "collect that incident again" in output


def test_a_symlink_to_a_file_outside_the_run_is_refused(
    copies: tuple[Path, Path], tmp_path: Path, refused: Callable[..., str]
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("not part of any run\n")
    link = _incident(copies[0]) / "pre" / "extra.txt"
    link.symlink_to(outside)
    refused(copies, tmp_path / "merged", str(link), "symbolic link")


def test_a_collected_file_replaced_by_a_link_to_identical_bytes_is_refused(
    copies: tuple[Path, Path], tmp_path: Path, refused: Callable[..., str]
) -> None:
    """The digest would match through the link: links are refused for what they are."""
    victim = _incident(copies[0]) / "post" / layout.STATE
    twin = tmp_path / "state-elsewhere.json"
    shutil.copyfile(victim, twin)
    victim.unlink()
    victim.symlink_to(twin)
    refused(copies, tmp_path / "merged", str(victim), "symbolic link")


def test_a_linked_incident_directory_is_refused(
    copies: tuple[Path, Path], tmp_path: Path, refused: Callable[..., str]
) -> None:
    incident = _incident(copies[1])
    moved = shutil.move(incident, tmp_path / incident.name)
    incident.symlink_to(moved, target_is_directory=True)
    refused(copies, tmp_path / "merged", str(incident), "symbolic link")


def test_files_added_or_removed_after_collection_are_refused(
    copies: tuple[Path, Path], tmp_path: Path, refused: Callable[..., str]
) -> None:
    added = _incident(copies[0]) / "during" / "notes.txt"
    added.write_text("edited by hand\n")
    refused(copies, tmp_path / "m1", str(added), "added after collection")
    added.unlink()
    removed = _incident(copies[1]) / "pre" / layout.EVENTS
    removed.unlink()
    refused(copies, tmp_path / "m2", str(removed), "missing")


def test_complete_without_checksums_is_refused(
    copies: tuple[Path, Path], tmp_path: Path, refused: Callable[..., str]
) -> None:
    marker = _incident(copies[0]) / layout.COMPLETE
    marker.write_text('{"completed_at": 1.0}\n')
    refused(copies, tmp_path / "merged", str(marker), "no checksums")


def test_a_clean_merge_carries_regular_files_only_and_leaves_hidden_leftovers(
    copies: tuple[Path, Path], tmp_path: Path
) -> None:
    leftover = _incident(copies[0]) / "pre" / ".logs.jsonl.gz.tmp-123"
    leftover.write_bytes(b"half a write")
    out = tmp_path / "merged"
    result = runner.invoke(app, ["merge", *map(str, copies), "--out", str(out)])
    assert result.exit_code == 0, result.output
    merged = [p for p in layout.raw_dir(out).rglob("*")]
    assert merged and not any(p.is_symlink() for p in merged)
    assert all(stat.S_ISREG(os.lstat(p).st_mode) or p.is_dir() for p in merged)
    assert not (layout.raw_dir(out) / leftover.relative_to(layout.raw_dir(copies[0]))).exists()
    for run in copies:
        for incident in (p for p in layout.raw_dir(run).iterdir() if p.is_dir()):
            for path in (p for p in incident.rglob("*") if p.is_file() and p != leftover):
                twin = layout.raw_dir(out) / path.relative_to(layout.raw_dir(run))
                assert twin.read_bytes() == path.read_bytes()
