"""Replay stopped by SIGINT, SIGTERM, SIGHUP or SIGKILL while a plan's side effect is live.

The first prediction scales cartservice out (a side effect that must be undone) under a
pod failure. After a handled signal: exit 128+N, nothing left. After SIGKILL: the next
replay refuses with one line pointing to ``r2act cleanup --out``, cleanup undoes the
replicas and removes the fault, and the resumed outcomes equal an uninterrupted replay's.
"""

from __future__ import annotations

import json
import signal
from pathlib import Path

import pytest
from safety_support import run_stopped, tiny_campaign
from typer.testing import CliRunner

import r2act.cli.collect  # noqa: F401 - registers cleanup on the app
from r2act.campaigns import load_manifest, plan_incidents
from r2act.cli.app import app
from r2act.cluster.sim.state import load_state
from r2act.collector import ledger
from r2act.errors import DataError
from r2act.quality_gate import planned_record
from r2act.replay import load_outcomes
from r2act.systems import ONLINE_BOUTIQUE


def _inputs(directory: Path) -> tuple[Path, Path, Path]:
    """(records file, predictions file, dataset directory) for the tiny campaign."""
    manifest = load_manifest(tiny_campaign(directory))
    records = [
        planned_record(i, ONLINE_BOUTIQUE, tool_version="test") for i in plan_incidents(manifest)
    ]
    records_file = directory / "records.jsonl"
    records_file.write_text("".join(r.model_dump_json() + "\n" for r in records))
    plans = {
        "pod_failure": {"operation": "scale_out", "target": "cartservice", "replicas": 3},
        "http_error": None,  # the gold plan
    }
    lines = []
    for record in records:
        plan = plans[record.labels.fault_type.value] or record.gold_plan.model_dump(mode="json")
        lines.append(json.dumps({"incident_id": record.incident_id, "plan": plan}))
    predictions = directory / "mixed.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    dataset = directory / "dataset"
    dataset.mkdir()
    return records_file, predictions, dataset


def _outcomes(out: Path) -> dict[str, dict[str, object]]:
    return {o.incident_id: o.model_dump(mode="json") for o in load_outcomes(out / "replay.jsonl")}


def _replay(when: str, name: str, inputs: tuple[Path, Path, Path], out: Path) -> tuple[int, str]:
    records, predictions, dataset = inputs
    args = ["replay", str(predictions), "--dataset", str(dataset), "--out", str(out), "-q"]
    done = run_stopped(when, name, args, records=records)
    return done.returncode, done.stderr


def _sim_state(out: Path) -> tuple[dict[str, int], list[str]]:
    (path,) = out.glob(".sim/*/state.json")
    state = load_state(path)
    assert state is not None
    live = [c.name for c in state.chaos if c.deleted_at is None]
    return {n: d.replicas for n, d in state.deployments.items()}, live


@pytest.fixture(scope="module")
def uninterrupted(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    base = tmp_path_factory.mktemp("replay-uninterrupted")
    code, err = _replay("never", "SIGINT", _inputs(base), base / "out")
    assert code == 0, err
    outcomes = _outcomes(base / "out")
    assert len(outcomes) == 2
    scaled = next(o for o in outcomes.values() if o["fault_type"] == "pod_failure")
    assert scaled["status"] == "executed"
    return outcomes


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM", "SIGHUP", "SIGKILL"])
def test_replay_stopped_with_a_side_effect_live_is_reverted_and_resumes_identically(
    signal_name: str, tmp_path: Path, uninterrupted: dict[str, dict[str, object]]
) -> None:
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"
    code, err = _replay("after:apply_plan", signal_name, inputs, out)
    signum = signal.Signals[signal_name]
    replicas, live = _sim_state(out)
    if signum == signal.SIGKILL:
        assert code == -signal.SIGKILL
        assert replicas["cartservice"] == 3 and live  # the kill left the plan and the fault
        left = ledger.pending(out)
        assert left.faults and left.effects
        code, err = _replay("never", "SIGINT", inputs, out)
        assert code == 2 and f"r2act cleanup --out {out}" in err, err
        assert "Traceback" not in err
        cleaned = CliRunner().invoke(app, ["cleanup", "--out", str(out)])
        assert cleaned.exit_code == 0, cleaned.output
        assert "undid scale_out" in cleaned.output and "removed PodChaos/" in cleaned.output
        replicas, live = _sim_state(out)
    else:
        assert code == 128 + signum, err  # SIGTERM: 143, SIGHUP: 129
        assert "Traceback" not in err
    assert replicas["cartservice"] == 1 and live == []
    assert ledger.pending(out).empty
    code, err = _replay("never", "SIGINT", inputs, out)
    assert code == 0, err
    assert _outcomes(out) == uninterrupted


def test_a_kill_between_sending_a_plan_and_recording_its_effect_is_still_reverted(
    tmp_path: Path, uninterrupted: dict[str, dict[str, object]]
) -> None:
    """SIGKILL right after the scale-out was applied, before its effect reached the ledger:
    the ledger holds the replicas read before the plan went out, so cleanup restores them
    (instead of only warning that a plan may have been applied)."""
    inputs = _inputs(tmp_path)
    out = tmp_path / "out"
    code, _ = _replay("apply_plan:1", "SIGKILL", inputs, out)
    assert code == -signal.SIGKILL
    replicas, live = _sim_state(out)
    assert replicas["cartservice"] == 3 and live
    left = ledger.pending(out)
    assert not left.effects and set(left.intents) == set(left.preimages)
    (before,) = left.preimages.values()
    assert [(c.kind, c.deployment, c.before) for c in before.changes] == [
        ("replicas", "cartservice", 1)
    ]
    cleaned = CliRunner().invoke(app, ["cleanup", "--out", str(out)])
    assert cleaned.exit_code == 0, cleaned.output
    text = " ".join(cleaned.output.split())
    assert "scale_out cartservice of" in text and "back as it was before" in text, text
    assert "may have been applied" not in text
    replicas, live = _sim_state(out)
    assert replicas["cartservice"] == 1 and live == []
    assert ledger.pending(out).empty
    code, err = _replay("never", "SIGINT", inputs, out)
    assert code == 0, err
    assert _outcomes(out) == uninterrupted


def test_cleanup_of_an_out_without_a_run_creates_nothing(tmp_path: Path) -> None:
    campaign = tiny_campaign(tmp_path)
    typo = tmp_path / "typo"
    result = CliRunner().invoke(app, ["cleanup", str(campaign), "--out", str(typo)])
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "holds no r2act run" in str(result.exception)
    assert not typo.exists()
