"""The real-cluster estimate: arithmetic of the manifest's windows, waits and lanes."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.estimate import (
    CONFIRM_TIMEOUT_S,
    READ_S_PER_PHASE,
    REJECTION_RATE,
    REMOVE_MIN_S,
    REMOVE_TIMEOUT_S,
    estimate,
    format_duration,
    incident_time,
    makespan,
)
from r2act.campaigns.quotas import cell_of, is_spare

REPO = Path(__file__).resolve().parents[3]
PAPER = REPO / "campaigns" / "r2act-302.yaml"


def test_incident_time_splits_windows_from_the_waits_around_them() -> None:
    manifest = load_manifest(PAPER)
    incident = plan_incidents(manifest)[0]
    time = incident_time(incident, manifest, read_s_per_phase=0.0)
    phases, health = manifest.phases, manifest.health
    assert time.windows_s == phases.pre_s + phases.during_s + phases.post_s == 540
    # three healthy probes five seconds apart: ten seconds even for a system that never broke
    shortest_verify = (health.consecutive - 1) * health.interval_s
    assert time.low_s == REMOVE_MIN_S + shortest_verify
    longest_verify = phases.recovery_timeout_s + health.interval_s
    assert time.high_s == REMOVE_TIMEOUT_S + longest_verify  # confirming: inside 'during'
    assert phases.during_s > CONFIRM_TIMEOUT_S
    with_reads = incident_time(incident, manifest)
    assert with_reads.low_s - time.low_s == pytest.approx(3 * READ_S_PER_PHASE)


def test_makespan_is_a_list_schedule_in_plan_order() -> None:
    assert makespan([10.0] * 7, 1) == 70.0
    assert makespan([10.0] * 7, 3) == 30.0  # 3 + 3 + 1 incidents
    assert makespan([10.0] * 2, 8) == 10.0  # idle lanes cost nothing
    assert makespan([50.0, 10.0, 10.0, 10.0], 2) == 50.0  # the short ones share lane 2
    assert makespan([], 4) == 0.0
    with pytest.raises(ValueError, match="at least 1"):
        makespan([1.0], 0)


def test_paper_campaign_on_four_lanes_takes_a_quarter_rounded_up_to_whole_incidents() -> None:
    manifest = load_manifest(PAPER)
    incidents = plan_incidents(manifest)
    one, four = estimate(manifest, incidents, 1), estimate(manifest, incidents, 4)
    assert one.incidents == four.incidents
    assert four.per_lane == -(-one.incidents // 4)
    assert four.low_s / one.low_s == pytest.approx(four.per_lane / one.incidents)
    assert four.high_s / one.high_s == pytest.approx(four.per_lane / one.incidents)
    assert one.windows_s == one.incidents * 540
    assert one.low_s > one.windows_s
    # what r2act adds beyond the windows on the shortest path stays under the 5% target
    assert one.overhead_low < 0.05


def test_the_estimate_counts_quota_incidents_and_only_the_spares_expected() -> None:
    manifest = load_manifest(PAPER)
    incidents = plan_incidents(manifest)
    quota = [i for i in incidents if not is_spare(i)]
    spares = len(incidents) - len(quota)
    assert estimate(manifest, incidents, 1, rejection=0.0).incidents == len(quota)
    guess = estimate(manifest, incidents, 1)
    assert guess.rejection == REJECTION_RATE and guess.spares_planned == spares
    # a cell of quota q takes about q p / (1 - p) spares, at most those it plans
    cells = Counter(cell_of(i) for i in quota)
    planned = Counter(cell_of(i) for i in incidents if is_spare(i))
    p = REJECTION_RATE
    want = round(sum(min(planned[c], q * p / (1 - p)) for c, q in cells.items()))
    assert guess.spares_expected == want and 0 < want < spares
    assert guess.incidents == len(quota) + want
    # however many the gate rejects, no more than the planned spares are counted
    assert estimate(manifest, incidents, 1, rejection=0.9).incidents == len(incidents)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        estimate(manifest, incidents, 1, rejection=1.0)


def test_durations_read_the_way_a_run_is_planned() -> None:
    assert format_duration(59.6) == "1m 00s"
    assert format_duration(3 * 3600 + 5 * 60) == "3h 05m"
    assert format_duration(2 * 86_400 + 3 * 3600 + 10 * 60 + 20) == "2d 03h 10m"
