"""Replay: the validity gate, live recovery on the simulated cluster, cleanup and resume."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from replay_support import SpyCluster, record_of

from r2act.cluster.sim import SimulatedCluster
from r2act.errors import TransientClusterError
from r2act.evaluation.predictions import read_predictions
from r2act.replay import (
    ReplayRequest,
    ReplaySettings,
    replay_one,
    run_replay,
    summarize,
    to_markdown,
)
from r2act.schema import BenchmarkRecord, IncreaseMemoryLimit, NoAction, RestartService, ScaleOut

SETTINGS = ReplaySettings()


def _by_type(records: list[BenchmarkRecord]) -> dict[str, BenchmarkRecord]:
    first: dict[str, BenchmarkRecord] = {}
    for record in records:
        first.setdefault(record.labels.fault_type.value, record)
    return first


def _snapshot(sim: SimulatedCluster) -> dict[str, tuple[int, dict[str, str]]]:
    return {d.name: (d.replicas, d.memory_limits) for d in sim.state().deployments}


def test_gold_plan_recovers_every_fault_type_within_the_window(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    records = _by_type(smoke_records)
    assert len(records) == 8
    for fault_type, record in records.items():
        outcome = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
        assert outcome.status == "executed", (fault_type, outcome.reason)
        assert outcome.effect_confirmed, fault_type
        assert outcome.offline_valid, fault_type
        assert outcome.recovered, fault_type
        assert outcome.gated_recovered, fault_type
        assert outcome.time_to_recover_s is not None
        assert outcome.time_to_recover_s <= SETTINGS.window_s
        assert sim.leftovers() == []


def test_no_action_never_recovers(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    for fault_type, record in _by_type(smoke_records).items():
        outcome = replay_one(
            sim, record, ReplayRequest(plan=NoAction(operation="no_action")), SETTINGS
        )
        assert outcome.status == "executed", (fault_type, outcome.reason)
        assert not outcome.recovered, fault_type
        assert not outcome.offline_valid
        assert sim.leftovers() == []


def test_plan_outside_the_action_space_is_refused_without_touching_the_cluster(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    spy = SpyCluster(sim)
    record = smoke_records[0]
    outside = [
        RestartService(operation="restart_service", target="not-a-deployment"),
        ScaleOut(operation="scale_out", target=record.labels.service, replicas=999),
        RestartService(operation="restart_service", target="loadgenerator"),
    ]
    for plan in outside:
        outcome = replay_one(spy, record, ReplayRequest(plan=plan), SETTINGS)  # type: ignore[arg-type]
        assert outcome.status == "refused"
        assert "action space" in outcome.reason
        assert not outcome.recovered
    missing = replay_one(spy, record, ReplayRequest(plan=None, plan_problem="bad"), SETTINGS)  # type: ignore[arg-type]
    assert missing.status == "refused"
    assert spy.calls == []


def test_plan_side_effects_are_undone_after_each_replay(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    before = _snapshot(sim)
    for record in smoke_records:
        replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
        assert _snapshot(sim) == before, record.incident_id


def _write_predictions(path: Path, records: list[BenchmarkRecord]) -> None:
    with path.open("w") as stream:
        for record in records:
            line = {
                "incident_id": record.incident_id,
                "rca": {"service": record.labels.service, "fault_type": record.labels.fault_type},
                "plan": record.gold_plan.model_dump(mode="json"),
                "method": "gold",
            }
            stream.write(json.dumps(line) + "\n")


@pytest.mark.parametrize("interrupt_in", ["health", "apply_plan"])
def test_interrupted_replay_leaves_nothing_behind_and_resumes(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster, tmp_path: Path, interrupt_in: str
) -> None:
    records = {r.incident_id: r for r in smoke_records[:4]}
    predictions = tmp_path / "gold.jsonl"
    _write_predictions(predictions, list(records.values()))
    parsed = read_predictions(predictions)
    out = tmp_path / "replay"
    before = _snapshot(sim)
    spy = SpyCluster(sim)
    calls = {"n": 0}

    def interrupt_second(_incident: str) -> None:
        calls["n"] += 1
        if calls["n"] == 2:
            spy.fail_on = interrupt_in

    with pytest.raises(KeyboardInterrupt):
        run_replay(spy, records, parsed, out, SETTINGS, on_start=interrupt_second)  # type: ignore[arg-type]
    assert sim.leftovers() == []
    assert _snapshot(sim) == before
    lines = (out / "replay.jsonl").read_text().splitlines()
    assert len(lines) == 1

    run = run_replay(sim, records, parsed, out, SETTINGS)
    assert run.resumed == 1
    assert len(run.outcomes) == 4
    assert sorted(o.incident_id for o in run.outcomes) == sorted(records)
    assert all(o.recovered for o in run.outcomes)
    journal = (out / "journal.jsonl").read_text().splitlines()
    assert any(json.loads(line)["status"] == "interrupted" for line in journal)


def test_report_counts_agreement_and_lists_disagreements(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    records = list(_by_type(smoke_records).values())[:3]
    outcomes = [replay_one(sim, r, ReplayRequest(plan=r.gold_plan), SETTINGS) for r in records]
    outcomes.append(
        replay_one(sim, records[0], ReplayRequest(plan=NoAction(operation="no_action")), SETTINGS)
    )
    report = summarize(outcomes)
    assert report.agreement.valid_recovered == 3
    assert report.agreement.invalid_not_recovered == 1
    assert report.findings == []
    total = next(row for row in report.rows if row.fault_type == "all")
    assert (total.planned, total.gated_recovered) == (4, 3)


def test_fault_without_health_effect_is_not_judged_and_plan_not_applied(
    sim: SimulatedCluster,
) -> None:
    from r2act.campaigns import Manifest, plan_incidents

    manifest = Manifest.model_validate(
        {
            "name": "quiet",
            "system": "onlineboutique",
            "target": {"kind": "sim"},
            "services": ["adservice"],
            # ads fail fast and the frontend tolerates it on every page: health stays green
            "faults": [{"type": "dns_fault", "intensities": ["moderate"]}],
        },
        strict=False,
    )
    record = record_of(plan_incidents(manifest)[0])
    spy = SpyCluster(sim)
    outcome = replay_one(spy, record, ReplayRequest(plan=record.gold_plan), SETTINGS)  # type: ignore[arg-type]
    assert outcome.status == "no_effect"
    assert not outcome.recovered and not outcome.gated_recovered
    assert "apply_plan" not in spy.calls
    assert sim.leftovers() == []
    report = summarize([outcome])
    assert report.no_effect == 1
    assert report.agreement.agreement_rate == 0.0
    assert [f.kind for f in report.findings] == ["no_health_effect"]


class _FailingCluster(SpyCluster):
    """A spy whose named calls raise a cluster error instead of running."""

    def __init__(self, inner: SimulatedCluster, failing: set[str]) -> None:
        super().__init__(inner)
        self.failing = failing

    def __getattr__(self, name: str) -> Any:
        if name in self.failing:

            def fail(*_args: Any, **_kwargs: Any) -> Any:
                self.calls.append(name)
                raise TransientClusterError(f"{name} timed out")

            return fail
        return super().__getattr__(name)


def _scale_out_record(records: list[BenchmarkRecord]) -> BenchmarkRecord:
    """A record whose gold plan has side effects to undo (a raised memory limit; scale-out
    is no gold plan under the mechanics policy)."""
    return next(r for r in records if isinstance(r.gold_plan, IncreaseMemoryLimit))


def test_plan_side_effects_are_undone_even_when_removing_the_fault_fails(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    record = _scale_out_record(smoke_records)
    before = _snapshot(sim)
    spy = _FailingCluster(sim, {"remove"})
    outcome = replay_one(spy, record, ReplayRequest(plan=record.gold_plan), SETTINGS)  # type: ignore[arg-type]
    assert "undo" in spy.calls
    after, service = _snapshot(sim), record.labels.service
    assert {k: v for k, v in after.items() if k != service} == {
        k: v for k, v in before.items() if k != service
    }
    # the plan's raised limit is undone; the ConfigFault's own low limit stays, because
    # removing the fault failed
    assert isinstance(record.gold_plan, IncreaseMemoryLimit)
    assert after[service][1] != {"server": record.gold_plan.memory_limit}
    assert after[service][1] != before[service][1]
    assert outcome.status == "error" and "remove failed" in outcome.reason
    # the contract's order: the plan's side effects are undone first, then the fault goes
    assert [(c.call, c.ok) for c in outcome.calls if c.call in {"remove", "undo"}] == [
        ("undo", True),
        ("remove", False),
    ]


def test_a_failed_injection_is_an_error_outcome_not_a_crash(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    record = _scale_out_record(smoke_records)
    spy = _FailingCluster(sim, {"inject"})
    outcome = replay_one(spy, record, ReplayRequest(plan=record.gold_plan), SETTINGS)  # type: ignore[arg-type]
    assert outcome.status == "error" and "inject timed out" in outcome.reason
    assert "apply_plan" not in spy.calls
    assert sim.leftovers() == []


def test_outcome_records_every_stage_and_its_result_in_order(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    record = _scale_out_record(smoke_records)
    outcome = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
    assert [c.call for c in outcome.calls] == [
        "preflight_healthy",
        "inject",
        "confirm_effect",
        "apply_plan",
        "health_window",
        "undo",
        "remove",
        "baseline_healthy",
    ]
    assert all(c.ok for c in outcome.calls)


def test_agreement_counts_only_executed_plans_and_report_json_carries_rates_and_ttr_spread(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    records = list(_by_type(smoke_records).values())[:3]
    outcomes = [replay_one(sim, r, ReplayRequest(plan=r.gold_plan), SETTINGS) for r in records]
    outside = ScaleOut(operation="scale_out", target=records[0].labels.service, replicas=99)
    refused = replay_one(sim, records[0], ReplayRequest(plan=outside), SETTINGS)
    assert refused.status == "refused"
    report = summarize([*outcomes, refused])
    a = report.agreement
    # The refused plan never ran: it is planned (and not recovered) but not in the 2x2.
    assert (a.valid_recovered, a.invalid_not_recovered, a.agreement_rate) == (3, 0, 1.0)
    total = next(row for row in report.rows if row.fault_type == "all")
    assert (total.planned, total.gated_recovered) == (4, 3)
    data = json.loads(report.model_dump_json())
    assert data["rows"][-1]["gated_rate"] == 0.75
    assert data["agreement"]["agreement_rate"] == 1.0
    ttrs = sorted(o.time_to_recover_s for o in outcomes if o.time_to_recover_s is not None)
    assert data["ttr_quantiles_s"]["min"] == ttrs[0]
    assert data["ttr_quantiles_s"]["max"] == ttrs[-1]
    assert "n = 3 recovered" in to_markdown(report)


def test_the_health_series_shows_the_fault_biting_and_the_plan_recovering(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    record = _by_type(smoke_records)["pod_failure"]
    outcome = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
    assert outcome.recovered
    probes = outcome.health
    times = [p.ts for p in probes]
    assert times == sorted(times)
    confirm = [p for p in probes if p.phase == "confirm"]
    window = [p for p in probes if p.phase == "window"]
    assert confirm and window
    assert all(p.phase == "confirm" for p in probes[: len(confirm)])  # confirm comes first
    assert not confirm[-1].healthy  # the probe that confirmed the effect
    # recovered = the window ends on its run of consecutive healthy probes, which starts
    # at the time-to-recover after the plan went out
    tail = window[-SETTINGS.consecutive :]
    assert all(p.healthy for p in tail)
    applied = next(c.ts for c in outcome.calls if c.call == "apply_plan")
    assert outcome.time_to_recover_s == pytest.approx(max(0.0, tail[0].ts - applied), abs=1e-6)


def test_without_recovery_the_series_covers_the_whole_window_unhealthy_at_the_end(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    record = _by_type(smoke_records)["pod_failure"]
    outcome = replay_one(sim, record, ReplayRequest(plan=NoAction(operation="no_action")), SETTINGS)
    window = [p for p in outcome.health if p.phase == "window"]
    assert not outcome.recovered
    assert window[-1].ts - window[0].ts >= SETTINGS.window_s - 2 * SETTINGS.probe_interval_s
    assert not all(p.healthy for p in window[-SETTINGS.consecutive :])
