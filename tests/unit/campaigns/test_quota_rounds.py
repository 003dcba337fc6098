"""The stopping rule: rounds take exactly the spares a short cell lacks, whatever the splits."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.quotas import cell_of, count_spares, is_spare, next_round, targets
from r2act.campaigns.shard import Shard, select
from r2act.schema import PlannedIncident


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> list[PlannedIncident]:
    """Three cells of quota 3 with 3 spares each."""
    path = tmp_path_factory.mktemp("plan") / "c.yaml"
    manifest = {
        "name": "rounds",
        "system": "onlineboutique",
        "target": {"kind": "sim"},
        "services": ["cartservice", "checkoutservice", "productcatalogservice"],
        "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        "repetitions": 3,
        "spares": 3,
    }
    path.write_text(yaml.safe_dump(manifest))
    return plan_incidents(load_manifest(path))


def _run(
    selection: list[PlannedIncident], clean: set[str], stop_after: int | None = None
) -> tuple[set[str], list[list[str]]]:
    """Collect round after round; ``stop_after`` incidents, an interruption (resume starts
    again from what was collected)."""
    taken: set[str] = set()
    rounds: list[list[str]] = []
    while batch := [i.id for i in next_round(selection, taken, lambda i: i in clean)]:
        rounds.append(batch)
        for incident_id in batch:
            if stop_after is not None and len(taken) == stop_after:
                return _run_from(selection, clean, taken), rounds
            taken.add(incident_id)
    return taken, rounds


def _run_from(selection: list[PlannedIncident], clean: set[str], taken: set[str]) -> set[str]:
    done = set(taken)
    while batch := [i.id for i in next_round(selection, done, lambda i: i in clean)]:
        done.update(batch)
    return done


def test_a_full_cell_takes_no_spare_and_a_short_one_takes_what_it_lacks_in_order(
    plan: list[PlannedIncident],
) -> None:
    ids = {(i.service, i.repetition): i.id for i in plan}
    clean = {i.id for i in plan} - {ids["cartservice", 1], ids["cartservice", 2]}
    clean -= {ids["cartservice", 4]}
    taken, rounds = _run(plan, clean)
    assert rounds[0] == [i.id for i in plan if not is_spare(i)]
    assert rounds[1] == [ids["cartservice", 4], ids["cartservice", 5]]  # lacks two
    assert rounds[2] == [ids["cartservice", 6]]  # r04 was not clean: lacks one more
    assert len(rounds) == 3
    spares = count_spares(plan, taken, lambda i: i in clean)
    assert (spares.planned, spares.taken, spares.not_needed, spares.short) == (9, 3, 6, {})


def test_a_cell_whose_spares_run_out_is_reported_short(plan: list[PlannedIncident]) -> None:
    broken = {i.id for i in plan if i.service == "checkoutservice"}
    clean = {i.id for i in plan} - broken
    taken, _ = _run(plan, clean)
    assert broken <= taken
    spares = count_spares(plan, taken, lambda i: i in clean)
    [(cell, counts)] = spares.short.items()
    assert cell[0] == "checkoutservice" and counts == (0, 3)


def test_a_shard_fills_its_own_share(plan: list[PlannedIncident]) -> None:
    mine = select(plan, Shard(1, 2))
    want = targets(mine)
    assert sum(want.values()) == sum(not is_spare(i) for i in mine)
    everything_clean = {i.id for i in plan}
    taken, rounds = _run(mine, everything_clean)
    assert len(rounds) == 1 and not any(is_spare(i) for i in mine if i.id in taken)


@settings(max_examples=200, deadline=None)
@given(
    outcomes=st.lists(st.booleans(), min_size=18, max_size=18),
    stop=st.integers(min_value=0, max_value=18),
)
def test_the_set_depends_only_on_outcomes_never_on_where_a_run_stopped(
    plan: list[PlannedIncident], outcomes: list[bool], stop: int
) -> None:
    """An interrupted run resumed gives the same set; each cell ends with the shortest run
    of spares that fills it, never above its quota."""
    clean = {i.id for i, ok in zip(plan, outcomes, strict=True) if ok}
    whole, _ = _run(plan, clean)
    assert _run(plan, clean, stop_after=stop)[0] == whole
    have = Counter(cell_of(i) for i in plan if i.id in whole and i.id in clean)
    for cell, quota in targets(plan).items():
        spares = sorted((i for i in plan if cell_of(i) == cell and is_spare(i)),
                        key=lambda i: i.repetition)  # fmt: skip
        taken = [i for i in spares if i.id in whole]
        assert taken == spares[: len(taken)]  # a prefix, in repetition order
        assert have[cell] <= quota
        if have[cell] < quota:
            assert taken == spares  # short only when every spare was tried
        elif taken:
            assert taken[-1].id in clean  # the last spare taken is the one that filled it
