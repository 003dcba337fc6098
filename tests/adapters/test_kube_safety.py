"""r2act touches only what it created, on the Kubernetes API emulator (kmock over HTTP).

A same-named object of a user or of another run is never deleted (on a name conflict the
incident stops instead); r2act's own fault is removed even after the namespace's opt-in
was withdrawn, and it says so; a dataset whose action space was widened cannot make replay
write anything outside r2act's own envelope.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from kube_harness import NS, ChaosController, Harness, chaos_for, incident

from r2act.cluster.base import RUN_LABEL
from r2act.collector import ledger
from r2act.collector.campaign import collect, plan_collection, settings_for
from r2act.errors import ForeignObjectError
from r2act.evaluation.predictions import read_predictions
from r2act.quality_gate import planned_record
from r2act.replay import ReplaySettings, run_replay
from r2act.schema import ChaosRef, FaultType
from r2act.systems import ONLINE_BOUTIQUE

PODCHAOS = "chaos-mesh.org/v1alpha1/podchaos"
CHAOS_PATH = f"/apis/chaos-mesh.org/v1alpha1/namespaces/{NS}"

MANIFEST = """
name: kube-one
system: onlineboutique
target: {kind: kubernetes, context: kind-r2act, namespace: boutique}
services: [cartservice]
faults:
  - {type: pod_failure, intensities: [severe]}
phases: {pre_s: 30, during_s: 60, post_s: 30, recovery_timeout_s: 60}
seed: 3
"""


def _deletes(harness: Harness) -> list[str]:
    return [r.url.path for r in harness.writes() if str(r.method.value).upper() == "DELETE"]


@pytest.mark.parametrize(
    "labels",
    [
        {"team": "payments"},  # a user's object
        {"app.kubernetes.io/managed-by": "r2act", RUN_LABEL: "another-run"},  # another run's
    ],
    ids=["user", "other-run"],
)
def test_a_same_named_object_r2act_did_not_create_is_never_deleted(
    harness: Harness, labels: dict[str, str]
) -> None:
    chaos = chaos_for(FaultType.POD_FAILURE)
    foreign = {**chaos, "metadata": {**chaos["metadata"], "labels": labels}}
    harness.put(PODCHAOS, foreign)
    ref = ChaosRef(kind="PodChaos", name=chaos["metadata"]["name"], namespace=NS, run_id="mine")
    with pytest.raises(ForeignObjectError, match="leaves it alone"):
        harness.cluster().remove(ref)
    assert harness.exists(PODCHAOS, ref.name)
    assert _deletes(harness) == []


def test_a_name_conflict_in_collection_stops_the_incident_without_deleting(
    harness: Harness, tmp_path: Path
) -> None:
    manifest = tmp_path / "kube-one.yaml"
    manifest.write_text(MANIFEST)
    plan = plan_collection(manifest)
    chaos = plan.items[0].chaos
    # a user's object squats the name (no managed-by label: not a leftover preflight sees)
    harness.put(PODCHAOS, {**chaos, "metadata": {**chaos["metadata"], "labels": {"team": "x"}}})
    harness.clock.on_sleep = ChaosController(harness)
    settings = settings_for(plan.manifest)
    summary = collect(
        plan,
        tmp_path / "run",
        settings=type(settings)(metric_queries={}),
        cluster_factory=lambda *_: harness.cluster(),
    )
    (result,) = summary.results
    assert result.status == "failed" and "not created by this run" in (result.error or "")
    assert harness.exists(PODCHAOS, chaos["metadata"]["name"])
    assert _deletes(harness) == []
    assert ledger.pending(tmp_path / "run").empty  # nothing of ours is left to clean


def test_own_fault_is_removed_after_the_opt_in_was_withdrawn_and_it_is_said(
    harness: Harness,
) -> None:
    cluster = harness.cluster()
    cluster.run_id = "mine"
    chaos = chaos_for(FaultType.POD_FAILURE)
    chaos["metadata"]["labels"][RUN_LABEL] = "mine"
    ref = cluster.inject(chaos)
    assert ref.run_id == "mine"
    harness.namespace_labels.clear()  # someone withdraws the opt-in meanwhile
    cluster.remove(ref)
    assert not harness.exists(PODCHAOS, ref.name)
    assert _deletes(harness) == [f"{CHAOS_PATH}/podchaos/{ref.name}"]
    (notice,) = cluster.notices
    assert "no longer carries r2act.io/chaos-allowed=true" in notice and ref.name in notice
    with pytest.raises(Exception, match="chaos-allowed"):
        cluster.inject(chaos_for(FaultType.NETWORK_DELAY))  # new writes stay refused


def test_a_widened_action_space_cannot_make_replay_write(harness: Harness, tmp_path: Path) -> None:
    record = planned_record(incident(FaultType.POD_FAILURE), ONLINE_BOUTIQUE, tool_version="t")
    # the dataset's author widened the action space (and recomputed its checksums)
    space = record.action_space.model_copy(
        update={"targets": [*record.action_space.targets, "loadgenerator"], "max_replicas": 1000}
    )
    widened = record.model_copy(
        update={
            "action_space": space,
            "metadata": record.metadata.model_copy(update={"target_kind": "kubernetes"}),
        }
    )
    predictions = tmp_path / "hostile.jsonl"
    line = (
        '{"incident_id": "%s", "plan": {"operation": "scale_out", "target": "%s", "replicas": %d}}'
    )
    predictions.write_text(line % (record.incident_id, "loadgenerator", 1000) + "\n")
    assert widened.action_space.contains(
        read_predictions(predictions).predictions[record.incident_id].plan
    )  # type: ignore[arg-type]
    harness.reset_log()
    run = run_replay(
        harness.cluster(),
        {record.incident_id: widened},
        read_predictions(predictions),
        tmp_path / "out",
        ReplaySettings(),
    )
    (outcome,) = run.outcomes
    assert outcome.status == "refused" and "safety envelope" in outcome.reason
    assert "loadgenerator" in outcome.reason
    assert harness.writes() == []


def test_cleanup_after_a_kill_reverts_the_ledger_on_kubernetes_even_without_the_opt_in(
    harness: Harness, tmp_path: Path
) -> None:
    from r2act.collector.cleanup import revert
    from r2act.schema import PLAN_ADAPTER

    out = tmp_path / "replay"
    cluster = harness.cluster()
    book = ledger.Ledger(out, "replay", {"kind": "kubernetes", "namespace": NS}, "run1")
    chaos = chaos_for(FaultType.POD_FAILURE)
    chaos["metadata"]["labels"][RUN_LABEL] = "run1"
    ref = cluster.inject(chaos)
    book.fault(ref)
    scale = PLAN_ADAPTER.validate_python(
        {"operation": "scale_out", "target": "cartservice", "replicas": 3}
    )
    book.plan("inc-1", scale.model_dump(mode="json"))
    book.effect("inc-1", cluster.apply_plan(scale))
    book.close()  # SIGKILL here: the fault and 3 replicas stay
    harness.namespace_labels.clear()  # and the opt-in is withdrawn meanwhile
    harness.reset_log()

    report = revert(out, harness.cluster(), ledger.pending(out))

    assert not report.failed and [r.name for r in report.removed] == [ref.name]
    assert report.undone == ["scale_out of inc-1"]
    writes = [(str(r.method.value).upper(), r.url.path) for r in harness.writes()]
    assert writes[0][0] == "PATCH" and writes[0][1].endswith("/cartservice/scale")  # undo first
    assert writes[1] == ("DELETE", f"{CHAOS_PATH}/podchaos/{ref.name}")  # then the fault
    assert not harness.exists(PODCHAOS, ref.name)
    assert ledger.pending(out).empty
    assert any("no longer carries" in w for w in report.warnings)  # and it says so
