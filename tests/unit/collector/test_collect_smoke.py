"""End to end on the simulated cluster: complete raw directories, resume, dry run, refusals."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import zstandard
from collector_helpers import write_campaign
from typer.testing import CliRunner

from r2act import __version__
from r2act.cli import _register_commands, app
from r2act.collector import collect, layout, open_target, plan_collection
from r2act.errors import DataError
from r2act.schema import ChaosStatus, ClusterState

REPO = Path(__file__).resolve().parents[3]
SMOKE = REPO / "campaigns" / "smoke.yaml"
STEPS = [
    "preflight",
    "pre",
    "inject",
    "confirm_injection",
    "during",
    "remove",
    "verify_recovery",
    "post",
    "complete",
]

_register_commands()
runner = CliRunner()


def _records(incident_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (incident_dir / layout.JOURNAL).read_text().splitlines()]


def _steps(incident_dir: Path) -> list[str]:
    return [r["step"] for r in _records(incident_dir) if r["status"] != "retry"]


def test_smoke_campaign_yields_a_complete_raw_directory_per_incident(tmp_path: Path) -> None:
    plan = plan_collection(SMOKE)
    run_dir = tmp_path / "run"
    summary = collect(plan, run_dir)
    assert (summary.completed, summary.failed) == (len(plan.items), 0)
    for item in plan.items:
        directory = run_dir / "raw" / item.incident.id
        assert layout.is_complete(directory)
        assert _steps(directory) == STEPS
        incident = json.loads((directory / layout.INCIDENT_JSON).read_text())
        assert incident["incident"] == item.incident.model_dump(mode="json")
        assert incident["incident"]["fault"]["parameters"]  # the resolved parameters
        assert incident["chaos"] == item.chaos
        assert incident["tool_version"] == __version__
        assert incident["manifest_sha256"] == plan.manifest_sha256
        assert incident["target"]["kind"] == "sim" and incident["target"]["fingerprint"]
        assert incident["target"]["namespace"] == plan.manifest.namespace
        stamps = incident["timestamps"]
        # the simulator's slow-recovery glitch (campaigns.GlitchRates) may outlast the
        # verify timeout: then, and only then, there is no recovery time and the step warns
        verify = next(r for r in _records(directory) if r["step"] == "verify_recovery")
        assert (stamps["recovered_at"] is None) == (verify["status"] == "warning"), verify
        recovered = stamps["recovered_at"] or stamps["removed_at"]
        assert None not in {**stamps, "recovered_at": recovered}.values(), stamps
        assert stamps["pre_start"] < stamps["injected_at"] <= stamps["effect_confirmed_at"]
        assert stamps["effect_confirmed_at"] < stamps["removed_at"] <= recovered
        assert recovered <= stamps["post_end"]
        for record in _records(directory):
            assert {"step", "start", "end", "status", "error"} <= set(record)
            assert record["start"] <= record["end"]
        windows = incident["windows"]
        assert windows["pre"][1] <= windows["during"][0] < windows["during"][1]
        assert windows["during"][1] <= windows["post"][0]
        for phase in ("pre", "during", "post"):
            for name in layout.PHASE_FILES:
                assert (directory / phase / name).is_file(), (phase, name)
        packed = (directory / "during" / layout.LOGS).read_bytes()
        first = json.loads(
            zstandard.ZstdDecompressor().decompressobj().decompress(packed)[:4096].split(b"\n")[0]
        )
        assert incident["formats"] == {"logs": "jsonl+zstd"}
        assert set(first) == {"ts", "pod", "container", "service", "line"}
        assert pq.read_table(directory / "pre" / layout.METRICS).num_rows > 0
        ClusterState.model_validate_json((directory / "post" / layout.STATE).read_text())
        during = ChaosStatus.model_validate_json(
            (directory / "during" / layout.CHAOS_STATUS).read_text()
        )
        assert during.exists and during.name == item.chaos["metadata"]["name"]
    assert not list((run_dir / "raw").glob("**/.*.tmp-*"))
    assert open_target(plan.manifest, run_dir).leftovers() == []


def test_rerunning_a_complete_campaign_does_nothing_and_says_so(tmp_path: Path) -> None:
    campaign = write_campaign(tmp_path)
    run_dir = tmp_path / "run"
    first = runner.invoke(app, ["collect", str(campaign), "--out", str(run_dir)])
    assert first.exit_code == 0, first.output
    assert "completed" in first.output and "nothing to do" not in first.output
    before = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()}
    again = runner.invoke(app, ["collect", str(campaign), "--out", str(run_dir), "--quiet"])
    assert again.exit_code == 0, again.output
    assert "nothing to do" in again.output
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*") if p.is_file()} == before


def test_a_partial_incident_is_moved_aside_and_redone(tiny_campaign: Path, tmp_path: Path) -> None:
    plan = plan_collection(tiny_campaign)
    run_dir = tmp_path / "run"
    collect(plan, run_dir)
    victim = run_dir / "raw" / plan.items[1].incident.id
    (victim / layout.COMPLETE).unlink()
    summary = collect(plan, run_dir)
    assert [r.incident_id for r in summary.results] == [plan.items[1].incident.id]
    assert summary.skipped == 1
    assert layout.is_complete(victim)
    moved = run_dir / "raw" / layout.PARTIAL_DIR / f"{victim.name}-1"
    assert moved.is_dir() and not layout.is_complete(moved)


def test_no_resume_refuses_a_non_empty_run_unless_forced(
    tiny_campaign: Path, tmp_path: Path
) -> None:
    plan = plan_collection(tiny_campaign)
    run_dir = tmp_path / "run"
    collect(plan, run_dir)
    with pytest.raises(DataError, match="--force"):
        collect(plan, run_dir, resume_run=False)
    summary = collect(plan, run_dir, resume_run=False, force=True)
    assert summary.completed == len(plan.items)
    assert len(list((run_dir / "raw" / layout.SUPERSEDED_DIR).iterdir())) == len(plan.items)


def test_dry_run_prints_plan_and_objects_and_touches_nothing(
    tiny_campaign: Path, tmp_path: Path
) -> None:
    run_dir = tmp_path / "run"
    result = runner.invoke(app, ["collect", str(tiny_campaign), "--out", str(run_dir), "--dry-run"])
    assert result.exit_code == 0, result.output
    plan = plan_collection(tiny_campaign)
    for item in plan.items:
        assert item.chaos["metadata"]["name"] in result.output
    assert "apiVersion: chaos-mesh.org/v1alpha1" in result.output
    assert not run_dir.exists()


def test_only_collects_the_named_incidents_and_rejects_unknown_ids(
    tiny_campaign: Path, tmp_path: Path
) -> None:
    plan = plan_collection(tiny_campaign)
    wanted = plan.items[0].incident.id
    run_dir = tmp_path / "run"
    result = runner.invoke(
        app, ["collect", str(tiny_campaign), "--out", str(run_dir), "--only", wanted, "-q"]
    )
    assert result.exit_code == 0, result.output
    assert [p.name for p in (run_dir / "raw").iterdir()] == [wanted]
    bad = runner.invoke(app, ["collect", str(tiny_campaign), "--only", "nope_x_y_severe_r01"])
    assert isinstance(bad.exception, DataError) and bad.exception.exit_code == 2


def _summary_row(output: str) -> list[int]:
    header = next(i for i, line in enumerate(output.splitlines()) if "planned" in line)
    numbers = output.splitlines()[header + 2].split()
    return [int(n) for n in numbers]


def test_the_final_summary_counts_failures_says_how_to_retry_and_exits_1(tmp_path: Path) -> None:
    doomed = plan_collection(write_campaign(tmp_path, "probe")).items[1].incident.id
    campaign = write_campaign(tmp_path, "tiny", glitches={"fail_incidents": [doomed]})
    run_dir = tmp_path / "run"
    args = ["collect", str(campaign), "--out", str(run_dir), "--quiet"]
    first = runner.invoke(app, args)
    assert first.exit_code == 1, first.output
    # planned, completed, failed, skipped (complete), remaining
    assert _summary_row(first.output) == [2, 1, 1, 0, 1]
    assert f"failed {doomed}: PermanentClusterError" in first.output
    assert "1 incidents failed" in first.output
    assert "Rerun the same command to retry them" in first.output
    again = runner.invoke(app, args)  # the complete one is skipped, the doomed one retried
    assert again.exit_code == 1, again.output
    assert _summary_row(again.output) == [2, 0, 1, 1, 1]


def test_out_pointing_at_a_file_is_refused_as_a_file_before_any_write(
    tiny_campaign: Path, tmp_path: Path
) -> None:
    not_a_dir = tmp_path / "notes.txt"
    not_a_dir.write_text("keep me\n")
    result = runner.invoke(app, ["collect", str(tiny_campaign), "--out", str(not_a_dir), "-q"])
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "is a file, not a run directory" in str(result.exception)
    assert not_a_dir.read_text() == "keep me\n"
