"""Kubernetes lanes through the real adapter, on the API emulator with two namespaces.

Lane 1 is ``boutique`` (the harness's seeded namespace), lane 2 is ``boutique-2`` seeded the
same way. Each lane's faults are created, confirmed and removed in its own namespace only;
a lane whose namespace is not opted in stops the whole run before any write.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import re
from pathlib import Path
from typing import Any

import pytest
from kube_harness import CONTEXT, NS, ChaosController, FakeClock, Harness, deployment, pod
from kubernetes import client as k8s

from r2act.campaigns import Manifest
from r2act.campaigns.lanes import lane_targets
from r2act.cluster.kube import KubeCluster
from r2act.cluster.retry import NO_WAIT
from r2act.collector import layout, plan_collection, settings_for
from r2act.collector.lanes import collect_lanes, lane_plan
from r2act.errors import SafetyError
from r2act.quality_gate import run_audit

NS2 = "boutique-2"
MANIFEST = f"""
name: kube-lanes
system: onlineboutique
target:
  kind: kubernetes
  context: {CONTEXT}
  namespace: {NS}
  lanes: [{{namespace: {NS2}}}]
services: [cartservice]
faults:
  - {{type: pod_failure, intensities: [severe]}}
  - {{type: network_delay, intensities: [moderate]}}
repetitions: 2
phases: {{pre_s: 30, during_s: 60, post_s: 30, recovery_timeout_s: 60}}
seed: 3
"""


def _in(namespace: str, obj: dict[str, Any]) -> dict[str, Any]:
    moved = copy.deepcopy(obj)
    moved["metadata"]["namespace"] = namespace
    return moved


def seed_second_lane(harness: Harness, labels: dict[str, str]) -> None:
    """``boutique-2``: the same three services, its own namespace object and labels."""
    handler = harness.kmock
    handler[f"get /api/v1/namespaces/{NS2}"] << (
        lambda: {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": NS2, "labels": dict(labels)}}
    )  # fmt: skip
    handler[re.compile(rf"/api/v1/namespaces/{NS2}/pods/[^/]+/log")] << (lambda: b"")
    handler[f"get /api/v1/namespaces/{NS2}/services/frontend:80/proxy/*"] << (lambda: b"ok")
    for name in ("frontend", "cartservice", "loadgenerator"):
        harness.put("apps/v1/deployments", _in(NS2, deployment(name)))
    harness.put("v1/pods", _in(NS2, pod("frontend-7d9c-pqrst", "frontend")))
    harness.put("v1/pods", _in(NS2, pod("cartservice-5f6b-uvwxy", "cartservice")))
    harness.put(
        "v1/pods", _in(NS2, pod("loadgenerator-6c4-zzzzz", "loadgenerator", containers=("main",)))
    )


def lane_factory(harness: Harness, clocks: dict[str, FakeClock] | None = None) -> Any:
    """Connect a lane as ``connect_kubernetes`` does: its namespace, then the opt-in check.

    ``clocks`` gives each namespace its own clock: the inline runner then interleaves the
    lanes' incidents in time as concurrent lanes would."""

    def connect(manifest: Manifest, _workspace: Path) -> KubeCluster:
        configuration = k8s.Configuration(host=harness.emulator.url)
        configuration.retries = False
        cluster = KubeCluster(
            k8s.ApiClient(configuration),
            namespace=manifest.namespace,
            expected_context=CONTEXT,
            clock=(clocks or {}).get(manifest.namespace, harness.clock),
            retry=NO_WAIT,
            request_timeout_s=5.0,
            context=CONTEXT,
        )
        cluster.ensure_writable()
        return cluster

    return connect


def _chaos_writes(harness: Harness) -> list[tuple[str, str]]:
    """(method, namespace) of every write to a Chaos Mesh object."""
    out = []
    for request in harness.writes():
        match = re.match(r"/apis/chaos-mesh.org/v1alpha1/namespaces/([^/]+)/", request.url.path)
        if match:
            out.append((str(request.method.value).upper(), match.group(1)))
    return out


def test_each_lane_injects_and_removes_only_in_its_own_namespace(
    harness: Harness, tmp_path: Path
) -> None:
    seed_second_lane(harness, {"r2act.io/chaos-allowed": "true"})
    path = tmp_path / "lanes.yaml"
    path.write_text(MANIFEST)
    plan = plan_collection(path)
    harness.clock.on_sleep = ChaosController(harness)
    settings = dataclasses.replace(settings_for(plan.manifest), metric_queries={})

    done = collect_lanes(
        plan, tmp_path / "run", cluster_factory=lane_factory(harness), inline=True,
        settings=settings,
    )  # fmt: skip

    assert [r.status for r in done.summary.results] == ["completed"] * 4
    assert {lane: s.incidents for lane, s in done.lanes.items()} == {"lane-1": 2, "lane-2": 2}
    by_lane: dict[str, str] = {}
    for item in plan.items:
        incident = layout.raw_dir(tmp_path / "run") / item.incident.id
        document = json.loads((incident / layout.INCIDENT_JSON).read_text())
        namespace = document["target"]["namespace"]
        assert document["target"]["fingerprint"] == f"kubernetes:{CONTEXT}/{namespace}"
        assert document["chaos"]["metadata"]["namespace"] == namespace  # rendered per lane
        by_lane[item.incident.id] = namespace
    assert sorted(by_lane.values()) == sorted([NS, NS, NS2, NS2])
    writes = _chaos_writes(harness)
    # one create and one delete per incident, each in the namespace of the lane that ran it
    assert sorted(writes) == sorted(
        [("POST", ns) for ns in by_lane.values()] + [("DELETE", ns) for ns in by_lane.values()]
    )
    for lane in lane_targets(plan.manifest.target):
        assert lane_factory(harness)(lane_plan(plan, lane).manifest, tmp_path).leftovers() == []


def test_a_lane_without_the_opt_in_stops_every_lane_before_any_write(
    harness: Harness, tmp_path: Path
) -> None:
    seed_second_lane(harness, {})
    path = tmp_path / "lanes.yaml"
    path.write_text(MANIFEST)
    plan = plan_collection(path)
    harness.clock.on_sleep = ChaosController(harness)
    harness.reset_log()
    with pytest.raises(SafetyError, match=f"namespace '{NS2}' lacks the label"):
        collect_lanes(plan, tmp_path / "run", cluster_factory=lane_factory(harness), inline=True)
    assert harness.writes() == []
    assert not (tmp_path / "run" / "raw").exists()


def _place(harness: Harness, nodes: dict[str, str]) -> None:
    """Schedule the seeded pods: namespace -> node name."""
    for namespace, node in nodes.items():
        for name, app in (
            ("frontend-7d9c-abcde", "frontend"),
            ("cartservice-5f6b-fghij", "cartservice"),
        ):
            placed = _in(namespace, pod(f"{name}-{namespace}", app))
            placed["spec"]["nodeName"] = node
            harness.put("v1/pods", placed)


def test_lanes_sharing_a_node_are_refused_before_any_write_unless_allowed(
    harness: Harness, tmp_path: Path
) -> None:
    seed_second_lane(harness, {"r2act.io/chaos-allowed": "true"})
    _place(harness, {NS: "kind-worker", NS2: "kind-worker"})
    path = tmp_path / "lanes.yaml"
    path.write_text(MANIFEST)
    harness.reset_log()
    with pytest.raises(SafetyError, match="lane-1 and lane-2 both run on node kind-worker"):
        collect_lanes(
            plan_collection(path), tmp_path / "run", cluster_factory=lane_factory(harness),
            inline=True,
        )  # fmt: skip
    assert harness.writes() == []

    allowed = tmp_path / "allowed.yaml"
    allowed.write_text(MANIFEST.replace("  lanes:", "  allow_shared_nodes: true\n  lanes:"))
    plan = plan_collection(allowed)
    harness.clock.on_sleep = ChaosController(harness)
    settings = dataclasses.replace(settings_for(plan.manifest), metric_queries={})
    done = collect_lanes(
        plan, tmp_path / "run-allowed", cluster_factory=lane_factory(harness), inline=True,
        settings=settings,
    )  # fmt: skip
    assert done.summary.completed == 4
    for item in plan.items:
        incident = layout.raw_dir(tmp_path / "run-allowed") / item.incident.id
        lane = json.loads((incident / layout.INCIDENT_JSON).read_text())["lane"]
        assert lane["cluster"] == CONTEXT and lane["nodes"] == ["kind-worker"]
        assert lane["name"] in {"lane-1", "lane-2"}


def test_the_audit_flags_incidents_overlapping_a_fault_in_a_lane_on_a_shared_node(
    harness: Harness, tmp_path: Path
) -> None:
    seed_second_lane(harness, {"r2act.io/chaos-allowed": "true"})
    _place(harness, {NS: "kind-worker", NS2: "kind-worker"})
    allowed = tmp_path / "allowed.yaml"
    allowed.write_text(MANIFEST.replace("  lanes:", "  allow_shared_nodes: true\n  lanes:"))
    plan = plan_collection(allowed)
    controller = ChaosController(harness)
    clocks = {NS: FakeClock(), NS2: FakeClock()}  # both lanes start at the same instant
    for clock in clocks.values():
        clock.on_sleep = controller
    settings = dataclasses.replace(settings_for(plan.manifest), metric_queries={})
    run = tmp_path / "run"
    collect_lanes(
        plan, run, cluster_factory=lane_factory(harness, clocks), inline=True, settings=settings
    )

    verdicts = {v.incident_id: v for v in run_audit(run, workers=1).verdicts}
    lanes = {
        i: json.loads((layout.raw_dir(run) / i / layout.INCIDENT_JSON).read_text())["lane"]["name"]
        for i in verdicts
    }
    flagged = {
        i: [p for p in v.problems if p.code == "LANE_INTERFERENCE"] for i, v in verdicts.items()
    }
    assert all(flagged.values()), flagged  # every incident ran beside the other lane's fault
    for incident, problems in flagged.items():
        for problem in problems:
            assert problem.severity == "warning"
            assert problem.evidence["node"] == "kind-worker"
            assert problem.evidence["other_lane"] != lanes[incident]
            assert lanes[str(problem.evidence["other"])] != lanes[incident]
