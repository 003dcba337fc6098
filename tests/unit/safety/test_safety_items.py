"""One test (or a few) per finding of issue 13: locks, outputs, paths, bounds, integrity.

Everything runs in-process on the simulator; each test asserts what the user sees (one
line, exit code) and what is left on disk or on the cluster.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
import yaml
from safety_support import tiny_campaign
from typer.testing import CliRunner

import r2act.cli.collect
import r2act.cli.replay  # noqa: F401 - registers replay
from r2act import datasets
from r2act.campaigns import load_manifest, plan_incidents
from r2act.cli.app import app
from r2act.cluster.sim.state import state_path
from r2act.collector import collect, ledger, plan_collection
from r2act.datasets import build as dataset_build
from r2act.errors import DataError, ManifestError, SafetyError
from r2act.quality_gate import planned_record
from r2act.quality_gate.audit import audit_incident
from r2act.quality_gate.problems import Group
from r2act.replay.run import write_report_files
from r2act.schema import BenchmarkRecord
from r2act.systems import ONLINE_BOUTIQUE

runner = CliRunner()


def _records(directory: Path, monkeypatch: pytest.MonkeyPatch) -> list[BenchmarkRecord]:
    """The tiny campaign's records as the replay dataset (validation passes: records only)."""
    manifest = load_manifest(tiny_campaign(directory))
    records = [
        planned_record(i, ONLINE_BOUTIQUE, tool_version="t") for i in plan_incidents(manifest)
    ]
    monkeypatch.setattr(datasets, "load_records", lambda _d: list(records))
    monkeypatch.setattr(datasets, "validate", lambda _d: [])
    return records


def _gold(path: Path, records: list[BenchmarkRecord]) -> Path:
    lines = [
        json.dumps({"incident_id": r.incident_id, "plan": r.gold_plan.model_dump(mode="json")})
        for r in records
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


# -- 5: a lock on --out -------------------------------------------------------------------------


def test_a_second_collect_on_a_locked_out_is_refused_without_writing(tmp_path: Path) -> None:
    plan = plan_collection(tiny_campaign(tmp_path))
    run_dir = tmp_path / "run"
    with ledger.run_lock(run_dir, "collect"), pytest.raises(SafetyError) as refused:
        collect(plan, run_dir)  # another process holding the lock behaves the same
    assert "in use by r2act collect (pid" in str(refused.value)
    assert not (run_dir / "raw").exists() and not (run_dir / ".sim").exists()


def test_a_second_replay_on_a_locked_out_is_refused_without_writing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(tmp_path, monkeypatch)
    gold = _gold(tmp_path / "gold.jsonl", records)
    (tmp_path / "dataset").mkdir()
    out = tmp_path / "out"
    with ledger.run_lock(out, "replay"):
        result = runner.invoke(
            app,
            ["replay", str(gold), "--dataset", str(tmp_path / "dataset"), "--out", str(out), "-q"],
        )
    assert isinstance(result.exception, SafetyError), result.output
    assert "in use by r2act replay" in str(result.exception)
    assert not (out / "replay.jsonl").exists()


# -- 6: outputs are never destroyed ---------------------------------------------------------------


def test_replay_refuses_an_out_holding_files_it_did_not_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(tmp_path, monkeypatch)
    gold = _gold(tmp_path / "gold.jsonl", records)
    (tmp_path / "dataset").mkdir()
    out = tmp_path / "mine"
    out.mkdir()
    (out / "report.md").write_text("my own notes\n")
    result = runner.invoke(
        app, ["replay", str(gold), "--dataset", str(tmp_path / "dataset"), "--out", str(out)]
    )
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "not written by r2act" in str(result.exception) and "\n" not in str(result.exception)
    assert (out / "report.md").read_text() == "my own notes\n"
    assert sorted(p.name for p in out.iterdir()) == ["report.md"]


def test_reports_are_replaced_atomically_and_leave_no_scratch(tmp_path: Path) -> None:
    write_report_files(tmp_path, '{"a": 1}', "# old\n")
    write_report_files(tmp_path, '{"a": 2}', "# new\n")
    assert (tmp_path / "report.md").read_text() == "# new\n"
    assert json.loads((tmp_path / "report.json").read_text()) == {"a": 2}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json", "report.md"]


def test_dataset_build_never_replaces_a_directory_holding_a_users_file(tmp_path: Path) -> None:
    out = tmp_path / "dataset"
    out.mkdir()
    (out / "incidents.parquet").write_text("x")
    (out / "incidents.jsonl").write_text("x")
    (out / "SHA256SUMS").write_text(f"{'0' * 64}  incidents.jsonl\n")
    (out / "thesis.tex").write_text("a user's unrelated file\n")
    assert not dataset_build._replaceable(out)
    (out / "thesis.tex").unlink()
    (out / "incidents.parquet").unlink()
    assert dataset_build._replaceable(out)  # an earlier dataset: every file is listed


def test_sigterm_during_a_dataset_build_unwinds_so_its_scratch_is_removed() -> None:
    previous = dataset_build._unwind_on_stop()
    try:
        with pytest.raises(KeyboardInterrupt) as stopped:
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(1)  # the handler raises here
        assert stopped.value.signum == signal.SIGTERM  # type: ignore[attr-defined]
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


# -- 8: the simulated target's name, cleanup of a typo -------------------------------------------


@pytest.mark.parametrize("name", ["../escape", "/tmp/elsewhere", ".hidden", "a/b"])
def test_a_sim_target_name_that_is_a_path_is_refused_in_one_line(tmp_path: Path, name: str) -> None:
    campaign = tiny_campaign(tmp_path, target={"kind": "sim", "seed": 1, "name": name})
    with pytest.raises(ManifestError) as refused:
        load_manifest(campaign)
    assert "target.name" in str(refused.value) and "\n" not in str(refused.value)
    with pytest.raises(DataError):
        state_path(tmp_path, name)  # a name from a dataset (replay) is refused the same way


# -- 9: bounds ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"phases": {"pre_s": 10, "during_s": 10**26, "post_s": 10}}, "during_s"),
        ({"load": {"users": 10**9}}, "users"),
        ({"repetitions": 10**8}, "repetitions"),
    ],
)
def test_huge_numbers_in_a_manifest_are_refused_in_one_line(
    tmp_path: Path, extra: dict[str, object], field: str
) -> None:
    with pytest.raises(ManifestError) as refused:
        load_manifest(tiny_campaign(tmp_path, **extra))
    message = str(refused.value)
    assert field in message and "\n" not in message and refused.value.exit_code == 2


def _alias_bomb(levels: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for level in range(1, levels + 1):
        lines.append(f"a{level}: &a{level} [" + ", ".join([f"*a{level - 1}"] * 9) + "]")
    return "\n".join(lines) + f"\nname: *a{levels}\n"


@pytest.mark.parametrize("levels", [7, 9])
def test_an_alias_bomb_is_refused_fast_with_a_short_line(tmp_path: Path, levels: int) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(_alias_bomb(levels))
    started = time.process_time()
    with pytest.raises(ManifestError) as refused:
        load_manifest(path)
    assert time.process_time() - started < 2.0
    message = str(refused.value)
    assert "aliases" in message and len(message) < 400 and "\n" not in message


def test_deep_nesting_is_one_line_exit_2_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.yaml"
    path.write_text("name: " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(ManifestError) as refused:
        load_manifest(path)
    assert "nested deeper" in str(refused.value) and refused.value.exit_code == 2


@pytest.mark.parametrize("window", ["inf", "1e12", "nan", "0"])
def test_replay_window_out_of_bounds_is_one_line_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, window: str
) -> None:
    records = _records(tmp_path, monkeypatch)
    gold = _gold(tmp_path / "gold.jsonl", records)
    result = runner.invoke(
        app, ["replay", str(gold), "--window", window, "--out", str(tmp_path / "o")]
    )
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "--window" in str(result.exception) and "between 1 and 3600" in str(result.exception)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("kind", ["dangling", "loop"])
def test_a_broken_symlink_as_out_is_one_line_exit_2(tmp_path: Path, kind: str) -> None:
    campaign = tiny_campaign(tmp_path)
    out = tmp_path / "out"
    if kind == "dangling":
        out.symlink_to(tmp_path / "nowhere")
    else:
        out.symlink_to(out)
    result = runner.invoke(app, ["collect", str(campaign), "--out", str(out), "-q"])
    assert isinstance(result.exception, DataError) and result.exception.exit_code == 2
    assert "symlink" in str(result.exception) and "\n" not in str(result.exception)


# -- 10: integrity ------------------------------------------------------------------------------


def test_a_flipped_byte_in_the_raw_store_is_rejected_by_the_audit(tmp_path: Path) -> None:
    plan = plan_collection(tiny_campaign(tmp_path))
    collect(plan, tmp_path / "run")
    incident = tmp_path / "run" / "raw" / plan.items[0].incident.id
    verdict, _record = audit_incident(incident)
    assert verdict.group == Group.MAIN
    metrics = incident / "during" / "metrics.parquet"
    data = bytearray(metrics.read_bytes())
    data[len(data) // 2] ^= 0x01
    metrics.write_bytes(bytes(data))
    verdict, record = audit_incident(incident)
    assert record is None and verdict.group != Group.MAIN
    codes = {p.code: p for p in verdict.problems}
    assert codes["RAW_CHECKSUM_MISMATCH"].where == "during/metrics.parquet"


def _other_sim(directory: Path) -> Path:
    path = directory / "other.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "name": "other",
                "system": "onlineboutique",
                "target": {"kind": "sim", "seed": 99, "name": "elsewhere"},
                "services": ["cartservice"],
                "faults": [{"type": "pod_failure"}],
            }
        )
    )
    return path


def test_replay_resume_refuses_another_dataset_or_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = _records(tmp_path, monkeypatch)
    gold = _gold(tmp_path / "gold.jsonl", records)
    first, second = tmp_path / "d1", tmp_path / "d2"
    first.mkdir()
    second.mkdir()
    (second / "SHA256SUMS").write_text("other bytes\n")
    out = tmp_path / "out"
    args = ["replay", str(gold), "--out", str(out), "-q"]
    done = runner.invoke(app, [*args, "--dataset", str(first)])
    assert done.exit_code == 0, done.output
    moved = runner.invoke(app, [*args, "--dataset", str(second)])
    assert isinstance(moved.exception, DataError) and "dataset" in str(moved.exception)
    retarget = runner.invoke(
        app, [*args, "--dataset", str(first), "--target", str(_other_sim(tmp_path))]
    )
    assert isinstance(retarget.exception, DataError) and "target" in str(retarget.exception)
    same = runner.invoke(app, [*args, "--dataset", str(first)])
    assert same.exit_code == 0 and "resumed: 2" in same.output


# -- 2: replay checks for leftovers ----------------------------------------------------------------


def test_replay_refuses_a_cluster_that_still_holds_an_r2act_fault(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from r2act.campaigns import render_chaos
    from r2act.cluster.sim import SimulatedCluster

    records = _records(tmp_path, monkeypatch)
    gold = _gold(tmp_path / "gold.jsonl", records)
    (tmp_path / "dataset").mkdir()
    out = tmp_path / "out"
    args = ["replay", str(gold), "--dataset", str(tmp_path / "dataset"), "--out", str(out), "-q"]
    assert runner.invoke(app, args).exit_code == 0
    (state,) = out.glob(".sim/*/state.json")
    sim = SimulatedCluster(out, name=state.parent.name)  # another run left a fault there
    incident = plan_incidents(load_manifest(tiny_campaign(tmp_path)))[0]
    sim.inject(render_chaos(incident, sim.namespace, ONLINE_BOUTIQUE))
    again = runner.invoke(app, [*args[:-1], "--only", records[0].incident_id])
    assert isinstance(again.exception, SafetyError)
    assert "still holds r2act chaos objects" in str(again.exception)


def test_cleanup_clears_the_ledger_of_a_simulated_cluster_that_is_gone(tmp_path: Path) -> None:
    from r2act.schema import ChaosRef

    out = tmp_path / "replay"
    target = {"kind": "sim", "name": "replay-x", "seed": 1, "namespace": "default"}
    book = ledger.Ledger(out, "replay", {**target, "workspace": str(out)}, "run1")
    book.fault(ChaosRef(kind="PodChaos", name="r2act-pod-1", namespace="default", run_id="run1"))
    book.close()  # killed here; then the user removed out/.sim
    assert not ledger.pending(out).empty
    result = runner.invoke(app, ["cleanup", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "is gone" in result.output and ledger.pending(out).empty
    assert not (out / ".sim").exists()  # no new, empty cluster
