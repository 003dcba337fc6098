"""Collection stops a full cell: spares are collected only while their cell lacks clean ones.

The campaign below (simulated, lanes, seeded glitches) has a cell whose quota incidents are
all clean, cells that lose some to a failed injection (the gate rejects those), and a cell
whose every incident fails to collect (its spares run out). What each incident comes out as
is read from a reference run that collects every spare (``stop_full_cells=False``); the
expected set is then derived independently of the collector: every quota repetition, plus
the shortest run of each cell's spares, in repetition order, that makes the cell full.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from r2act.campaigns import Manifest, load_manifest, plan_incidents
from r2act.campaigns.quotas import cell_of, is_spare
from r2act.campaigns.shard import Shard
from r2act.cli import _register_commands, app
from r2act.cluster.base import INCIDENT_LABEL, Cluster
from r2act.collector import CollectionPlan, layout, ledger, open_target, plan_collection, resume
from r2act.collector.lanes import LanesSummary, NullLanesObserver, collect_lanes
from r2act.collector.merge import claim_shard, merge_runs, shard_collection
from r2act.quality_gate import Group, is_clean, judge, run_audit
from r2act.quality_gate.report import shortfalls
from r2act.schema import PlannedIncident

QUOTA, SPARES = 3, 3
BROKEN = "paymentservice"
"""Every cluster call of this service's incidents fails: its cell cannot be filled."""


def _campaign(directory: Path, lanes: int | None = 1) -> Path:
    """The campaign on ``lanes`` simulated lanes (None: the plain single-cluster target,
    whose incidents share one clock, so their outcomes differ from the lanes' ones)."""
    manifest: dict[str, Any] = {
        "name": "stopping",
        "system": "onlineboutique",
        "target": {
            "kind": "sim",
            # a seed whose draws give the scenario test_the_scenario_... checks, and a short
            # cell that takes two spares or more (the interrupted top-up round)
            "seed": 13,
            "lanes": lanes,
            "glitches": {"injection_failure": 0.3, "metric_gap": 0.0, "slow_recovery": 0.0},
        },
        "services": ["cartservice", "checkoutservice", "productcatalogservice", BROKEN],
        "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        "repetitions": QUOTA,
        "spares": SPARES,
        "phases": {"pre_s": 20, "during_s": 30, "post_s": 20, "recovery_timeout_s": 60},
        "seed": 5,
    }
    if lanes is None:
        del manifest["target"]["lanes"]
    path = directory / f"stopping-{lanes}.yaml"
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    broken = [i.id for i in plan_incidents(load_manifest(path)) if i.service == BROKEN]
    manifest["target"]["glitches"]["fail_incidents"] = broken
    path.write_text(yaml.safe_dump(manifest, sort_keys=False))
    return path


def _complete(run: Path) -> set[str]:
    return set(resume.scan(layout.raw_dir(run)).complete)


def _expected(incidents: list[PlannedIncident], clean: set[str]) -> set[str]:
    """Quota repetitions, then per cell the shortest spare prefix that fills it (for a
    shard's incidents: fills the shard's share, its quota repetitions there)."""
    chosen = {i.id for i in incidents if not is_spare(i)}
    want = Counter(cell_of(i) for i in incidents if i.id in chosen)
    have = Counter(cell_of(i) for i in incidents if i.id in chosen and i.id in clean)
    for incident in sorted((i for i in incidents if is_spare(i)), key=lambda i: i.repetition):
        cell = cell_of(incident)
        if have[cell] < want[cell]:
            chosen.add(incident.id)
            have[cell] += incident.id in clean
    return chosen


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[PlannedIncident], set[str]]:
    """Every incident collected (spares included) and the ids the gate finds clean."""
    tmp = tmp_path_factory.mktemp("reference")
    plan = plan_collection(_campaign(tmp))
    run = tmp / "run"
    every = replace(plan, stop_full_cells=False, judge=False)
    collect_lanes(every, run, inline=True)
    clean = {i for i in _complete(run) if is_clean(judge(layout.raw_dir(run) / i))}
    return [item.incident for item in plan.items], clean


def _cells(incidents: list[PlannedIncident], ids: set[str]) -> Counter[str]:
    return Counter(i.service for i in incidents if i.id in ids)


def test_the_scenario_has_full_short_and_unfillable_cells(
    reference: tuple[list[PlannedIncident], set[str]],
) -> None:
    incidents, clean = reference
    quota_clean = _cells(incidents, {i.id for i in incidents if not is_spare(i)} & clean)
    assert quota_clean["checkoutservice"] == QUOTA  # full after round 0
    assert 0 < quota_clean["cartservice"] < QUOTA  # the gate rejected some
    assert 0 < quota_clean["productcatalogservice"] < QUOTA
    assert quota_clean[BROKEN] == 0 and not _cells(incidents, clean)[BROKEN]
    # and the expected set leaves some spares out: stopping saves incidents
    assert len(_expected(incidents, clean)) < len(incidents)


def _judged_like_the_audit(run: Path) -> None:
    result = run_audit(run, workers=1)
    verdicts = result.verdicts
    main = Counter(v.service for v in verdicts if v.group == Group.MAIN)
    assert main == {"cartservice": QUOTA, "checkoutservice": QUOTA, "productcatalogservice": QUOTA}
    assert result.count(Group.SPARE) == 0  # no clean incident beyond a quota was collected
    # the broken cell never completed an incident, so the audit has no verdict on it; the
    # collector's summary names it instead
    assert shortfalls(verdicts) == {}


def test_one_lane_collects_exactly_the_spares_short_cells_need(
    tmp_path: Path, reference: tuple[list[PlannedIncident], set[str]]
) -> None:
    incidents, clean = reference
    plan = plan_collection(_campaign(tmp_path))
    out = collect_lanes(plan, tmp_path / "run", inline=True)
    expected = _expected(incidents, clean)
    tried = {r.incident_id for r in out.summary.results}
    assert tried == expected
    assert _complete(tmp_path / "run") == expected - {
        i.id for i in incidents if i.service == BROKEN
    }
    taken = _cells(incidents, {i.id for i in incidents if is_spare(i)} & tried)
    assert taken["checkoutservice"] == 0  # a full cell takes no spare
    assert taken[BROKEN] == SPARES  # an unfillable cell takes them all
    # a short cell takes its spares lowest repetition first, and stops when full
    for service in ("cartservice", "productcatalogservice"):
        reps = sorted(i.repetition for i in incidents if i.service == service and i.id in tried)
        assert reps == list(range(1, len(reps) + 1))
        assert (
            sum(i.id in clean for i in incidents if i.service == service and i.id in tried) == QUOTA
        )
    spares = out.summary.spares
    assert spares is not None
    assert spares.planned == 4 * SPARES
    assert spares.taken == sum(taken.values())
    assert spares.not_needed == 4 * SPARES - spares.taken
    assert {cell[0]: v for cell, v in spares.short.items()} == {BROKEN: (0, QUOTA)}
    assert out.summary.failed == QUOTA + SPARES  # the broken cell's, each tried once
    assert len(out.rounds) >= 2  # quota round, then top-up rounds
    assert all(is_spare(i) for i in incidents if i.id in set().union(*out.rounds[1:]))
    _judged_like_the_audit(tmp_path / "run")


def test_three_lane_processes_collect_the_same_set_as_one_lane(
    tmp_path: Path, reference: tuple[list[PlannedIncident], set[str]]
) -> None:
    incidents, clean = reference
    three: LanesSummary = collect_lanes(plan_collection(_campaign(tmp_path, 3)), tmp_path / "run")
    expected = _expected(incidents, clean)
    assert {r.incident_id for r in three.summary.results} == expected
    assert sum(s.incidents for s in three.lanes.values()) == len(expected)
    assert _complete(tmp_path / "run") == expected - {
        i.id for i in incidents if i.service == BROKEN
    }


class _StopAt:
    """A real simulated cluster that receives Ctrl-C when one incident's fault is sent."""

    def __init__(self, inner: Cluster, incident_id: str) -> None:
        self._inner, self._incident = inner, incident_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def inject(self, chaos: dict[str, Any]) -> Any:
        if chaos["metadata"]["labels"].get(INCIDENT_LABEL) == self._incident:
            os.kill(os.getpid(), signal.SIGINT)
        return self._inner.inject(chaos)


def _stopping_at(incident_id: str) -> Callable[[Manifest, Path], Cluster]:
    def factory(manifest: Manifest, run_dir: Path) -> Cluster:
        return _StopAt(open_target(manifest, run_dir), incident_id)  # type: ignore[return-value]

    return factory


def test_an_interrupted_top_up_round_resumes_where_the_rule_says(
    tmp_path: Path, reference: tuple[list[PlannedIncident], set[str]]
) -> None:
    incidents, clean = reference
    expected = _expected(incidents, clean)
    # stop on the second spare a short cell takes: its first spare is already complete
    taking = [
        sorted(
            (i for i in incidents if i.service == service and is_spare(i) and i.id in expected),
            key=lambda i: i.repetition,
        )
        for service in ("cartservice", "productcatalogservice")
    ]
    spares = max(taking, key=len)  # the short cell that takes the most spares
    assert len(spares) >= 2
    plan: CollectionPlan = plan_collection(_campaign(tmp_path))
    run = tmp_path / "run"
    first = collect_lanes(plan, run, inline=True, cluster_factory=_stopping_at(spares[1].id))
    assert first.summary.interrupted_by == signal.SIGINT
    assert spares[0].id in _complete(run) and spares[1].id not in _complete(run)
    assert first.summary.remaining > 0
    before = _complete(run)
    second = collect_lanes(plan, run, inline=True)
    assert second.summary.interrupted_by is None
    redone = {r.incident_id for r in second.summary.results}
    assert not redone & before  # nothing complete is collected again
    assert _complete(run) == expected - {i.id for i in incidents if i.service == BROKEN}
    assert second.summary.remaining == QUOTA  # a rerun's first round: the broken cell's quota
    _judged_like_the_audit(run)
    # a rerun reuses the verdicts kept beside the ledger: it judges nothing again ...
    third = collect_lanes(plan, run, inline=True)
    assert {r.incident_id for r in third.summary.results} == {
        i.id for i in incidents if i.service == BROKEN
    }  # only the failed ones are retried (the broken cell is still short: its spares too)
    assert third.summary.judge_cpu_s == 0.0
    # ... and without them it judges the files again and reaches the same decision
    (run / ".r2act" / "verdicts.jsonl").unlink()
    fourth = collect_lanes(plan, run, inline=True)
    assert fourth.summary.judge_cpu_s > 0.0
    assert {r.incident_id for r in fourth.summary.results} == {
        r.incident_id for r in third.summary.results
    }
    assert _complete(run) == expected - {i.id for i in incidents if i.service == BROKEN}


class _StopBetweenRounds(NullLanesObserver):
    """Sends a signal to this process when a top-up round is announced (no lane runs)."""

    def __init__(self, signum: int) -> None:
        self.signum, self.announced = signum, 0

    def round_started(self, incidents: int) -> None:
        self.announced += incidents
        os.kill(os.getpid(), self.signum)


def test_a_signal_between_two_rounds_ends_the_campaign_there_and_a_rerun_goes_on(
    tmp_path: Path, reference: tuple[list[PlannedIncident], set[str]]
) -> None:
    """(SIGTERM and SIGHUP take the same handler; SIGINT is the one a test runner survives
    should the handler ever be missing.)"""
    incidents, clean = reference
    signum = signal.SIGINT
    plan = plan_collection(_campaign(tmp_path))
    run = tmp_path / "run"
    observer = _StopBetweenRounds(signum)
    outer = signal.getsignal(signum)
    first = collect_lanes(plan, run, inline=True, observer=observer)
    assert first.summary.interrupted_by == signum  # noted, not a KeyboardInterrupt
    assert observer.announced > 0
    quota = {i.id for i in incidents if not is_spare(i)}
    assert _complete(run) == quota - {i.id for i in incidents if i.service == BROKEN}
    assert ledger.pending(run).empty
    assert signal.getsignal(signum) == outer  # the caller's handler is back
    second = collect_lanes(plan, run, inline=True)
    assert second.summary.interrupted_by is None
    expected = _expected(incidents, clean)
    assert _complete(run) == expected - {i.id for i in incidents if i.service == BROKEN}


def test_the_audit_reports_the_shortfall_when_spares_run_out(tmp_path: Path) -> None:
    """Here the gate rejects incidents (not the cluster): the audit sees the short cells."""
    data = yaml.safe_load(_campaign(tmp_path).read_text())
    data["target"]["glitches"]["fail_incidents"] = []
    data["spares"] = 1
    one = tmp_path / "one-spare.yaml"
    one.write_text(yaml.safe_dump(data, sort_keys=False))
    run = tmp_path / "run"
    out = collect_lanes(plan_collection(one), run, inline=True)
    assert out.summary.spares is not None
    short = {cell[0]: v for cell, v in out.summary.spares.short.items()}
    verdicts = run_audit(run, workers=1).verdicts
    reported = {cell[0]: v for cell, v in shortfalls(verdicts).items()}
    assert short and reported == short  # the collector and the audit name the same cells


def test_only_collects_named_spares_and_all_spares_collects_every_one(tmp_path: Path) -> None:
    path = _campaign(tmp_path, None)
    plan = plan_collection(path)
    spare = next(i.incident.id for i in plan.items if is_spare(i.incident))
    only = collect_lanes(plan_collection(path, [spare]), tmp_path / "only", inline=True)
    assert [r.incident_id for r in only.summary.results] == [spare]
    _register_commands()
    dry = CliRunner().invoke(app, ["collect", str(path), "--dry-run", "--out", str(tmp_path / "d")])
    assert dry.exit_code == 0, dry.output
    assert f"would collect {4 * QUOTA} incidents (+ up to {4 * SPARES} spares" in dry.output
    assert "spare, only if its cell is short" in dry.output
    every = CliRunner().invoke(
        app, ["collect", str(path), "--all-spares", "-q", "--out", str(tmp_path / "all")]
    )
    assert every.exit_code == 1  # the broken cell's incidents fail
    tried = _complete(tmp_path / "all") | {
        i.incident.id for i in plan.items if i.incident.service == BROKEN
    }
    assert tried == {i.incident.id for i in plan.items}


def test_the_collect_summary_says_what_happened_to_the_spares(tmp_path: Path) -> None:
    path = _campaign(tmp_path, None)
    _register_commands()
    run = tmp_path / "run"
    result = CliRunner().invoke(app, ["collect", str(path), "-q", "--out", str(run)])
    assert result.exit_code == 1, result.output  # the broken cell
    assert "spares: " in result.output and "skipped because their cell was full" in result.output
    assert "1 cells ran out of spares" in result.output
    assert f"{BROKEN} pod_failure severe: 0 of {QUOTA} clean" in result.output
    again = CliRunner().invoke(app, ["collect", str(path), "-q", "--out", str(run)])
    assert "spares: " in again.output


def test_each_shard_fills_its_own_share_and_merge_counts_no_spare_as_missing(
    tmp_path: Path, reference: tuple[list[PlannedIncident], set[str]]
) -> None:
    incidents, clean = reference
    path = _campaign(tmp_path)
    runs = []
    for index in (1, 2):
        plan, record = shard_collection(plan_collection(path), Shard(index, 2))
        run = tmp_path / f"shard-{index}"
        claim_shard(run, record)
        out = collect_lanes(plan, run, inline=True)
        mine = [i for i in incidents if i.id in set(record.incidents)]
        assert {r.incident_id for r in out.summary.results} == _expected(mine, clean)
        runs.append(run)
    merged = merge_runs(runs, tmp_path / "merged")
    # only the broken cell's quota incidents are missing; no spare counts as missing
    assert set(merged.missing) == {
        i.id for i in incidents if i.service == BROKEN and not is_spare(i)
    }
    held = _complete(tmp_path / "merged")
    assert merged.spares_absent == sum(is_spare(i) and i.id not in held for i in incidents)
    assert merged.spares_absent > 0
    # an unsharded collect on the merged run tops up the cells a shard could not fill
    topped = collect_lanes(plan_collection(path), tmp_path / "merged", inline=True)
    assert all(
        is_spare(i)
        for i in incidents
        if i.id in {r.incident_id for r in topped.summary.results} and i.service != BROKEN
    )
    _judged_like_the_audit(tmp_path / "merged")
