"""``replay_one`` called as a library never removes a fault another run created.

The CLI always passes its ledger's run id; a library caller may pass none. Either way the
fault replay sends carries a run label, and only an object with that label is removed.
"""

from __future__ import annotations

import pytest

from r2act.campaigns import render_chaos
from r2act.cluster.base import RUN_LABEL
from r2act.cluster.sim import SimulatedCluster
from r2act.collector.guard import CleanupGuard
from r2act.collector.ledger import stamp
from r2act.replay import ReplayRequest, ReplaySettings, replay_one
from r2act.replay.runner import planned_incident
from r2act.schema import BenchmarkRecord
from r2act.systems import SYSTEMS

SETTINGS = ReplaySettings()


def _other_runs_fault(sim: SimulatedCluster, record: BenchmarkRecord) -> str:
    """The same-named fault, created by another r2act run (say a collect in the namespace)."""
    chaos = render_chaos(
        planned_incident(record, SETTINGS), sim.namespace, SYSTEMS[record.metadata.system]
    )
    sim.inject(stamp(chaos, "other-run"))
    return str(chaos["metadata"]["name"])


def _live(sim: SimulatedCluster) -> dict[str, str | None]:
    return {ref.name: ref.run_id for ref in sim.leftovers()}


@pytest.mark.parametrize("with_guard", [False, True], ids=["bare", "guarded"])
def test_without_a_run_id_another_runs_same_named_fault_survives(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster, with_guard: bool
) -> None:
    record = smoke_records[0]
    sim.rewind_to("replay", "baseline")  # replay's baseline is the cluster before that fault
    name = _other_runs_fault(sim, record)
    request = ReplayRequest(plan=record.gold_plan)
    if with_guard:
        with CleanupGuard(sim.remove) as guard:
            outcome = replay_one(sim, record, request, SETTINGS, guard)
    else:
        outcome = replay_one(sim, record, request, SETTINGS)
    assert outcome.status == "error" and "already exists" in outcome.reason
    assert _live(sim) == {name: "other-run"}  # not deleted, not replaced


def test_without_a_run_id_the_fault_sent_is_labelled_and_removed(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    sent: list[dict[str, object]] = []
    inject = sim.inject

    def spy(chaos: dict[str, object]) -> object:
        sent.append(chaos)
        return inject(chaos)

    sim.inject = spy  # type: ignore[method-assign,assignment]
    record = smoke_records[1]
    outcome = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
    assert outcome.status == "executed" and outcome.recovered
    (chaos,) = sent
    labels = chaos["metadata"]["labels"]  # type: ignore[index]
    assert labels[RUN_LABEL]  # a run id of its own
    assert _live(sim) == {}
    again = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS)
    assert again.status == "executed"
    assert sent[1]["metadata"]["labels"][RUN_LABEL] != labels[RUN_LABEL]  # type: ignore[index]


def test_a_given_run_id_labels_the_fault(
    smoke_records: list[BenchmarkRecord], sim: SimulatedCluster
) -> None:
    record = smoke_records[2]
    sim.rewind_to("replay", "baseline")
    name = _other_runs_fault(sim, record)
    outcome = replay_one(sim, record, ReplayRequest(plan=record.gold_plan), SETTINGS, run_id="mine")
    assert outcome.status == "error"
    assert _live(sim) == {name: "other-run"}
