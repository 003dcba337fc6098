"""The collector's lifecycle end to end through KubeCluster, on the emulator.

A small kubernetes campaign (the smoke campaign's fault mix on the kind-demo target) is
collected with the real collector; the emulator plays the cluster and ``ChaosController``
plays Chaos Mesh on the fake clock. Proves the adapter satisfies what collection needs:
preflight, inject, confirm, snapshots, bounded removal through the finalizer, recovery.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from kube_harness import NOW, ChaosController, Harness

from r2act.collector.campaign import collect, plan_collection, settings_for

MANIFEST = """
name: kube-smoke
system: onlineboutique
target: {kind: kubernetes, context: kind-r2act, namespace: boutique}
services: [cartservice, frontend]
faults:
  - {type: pod_failure, intensities: [severe]}
  - {type: network_delay, intensities: [moderate]}
  - {type: http_error, intensities: [severe]}
cells:
  - {service: cartservice, fault: http_error, repetitions: 0}
  - {service: frontend, fault: pod_failure, repetitions: 0}
  - {service: frontend, fault: network_delay, repetitions: 0}
phases: {pre_s: 30, during_s: 60, post_s: 30, recovery_timeout_s: 60}
seed: 3
"""


def test_a_kubernetes_campaign_collects_completely_through_the_adapter(
    harness: Harness, tmp_path: Path
) -> None:
    manifest = tmp_path / "kube-smoke.yaml"
    manifest.write_text(MANIFEST)
    plan = plan_collection(manifest)
    cart = "cartservice-5f6b-fghij"
    harness.logs[(cart, "server", False)] = [(NOW + 5 + i, f"line {i}") for i in range(400)]
    controller = ChaosController(harness)
    harness.clock.on_sleep = controller
    settings = dataclasses.replace(settings_for(plan.manifest), metric_queries={})

    summary = collect(
        plan, tmp_path / "run", settings=settings, cluster_factory=lambda *_: harness.cluster()
    )

    assert [r.status for r in summary.results] == ["completed"] * 3, summary.results
    assert sorted(controller.injected) == sorted(controller.released)
    assert len(controller.injected) == 3
    assert harness.cluster().leftovers() == []
    for item in plan.items:
        directory = tmp_path / "run" / "raw" / item.incident.id
        assert (directory / "COMPLETE").exists()
        incident = json.loads((directory / "incident.json").read_text())
        assert incident["target"]["fingerprint"] == "kubernetes:kind-r2act/boutique"
        assert incident["timestamps"]["effect_confirmed_at"] is not None
    assert summary.log_records > 0
