"""The simulated cluster runs Online Boutique as the release manifests deploy it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.traffic import Call
from r2act.schema import cpu_millicores, memory_bytes
from r2act.systems import ONLINE_BOUTIQUE
from r2act.systems.onlineboutique.traffic import ROUTE_CALLS


@pytest.fixture(scope="module")
def manifests(reference_dir: Path) -> dict[str, list[dict[str, Any]]]:
    path = reference_dir / "online-boutique" / "kubernetes-manifests.yaml"
    docs = [d for d in yaml.safe_load_all(path.read_text()) if d]
    by_kind: dict[str, list[dict[str, Any]]] = {}
    for doc in docs:
        by_kind.setdefault(doc["kind"], []).append(doc)
    return by_kind


def _probe_kind(container: dict[str, Any]) -> str | None:
    probe = container.get("readinessProbe") or container.get("livenessProbe")
    if probe is None:
        return None
    for key, kind in (("grpc", "grpc"), ("httpGet", "http"), ("tcpSocket", "tcp")):
        if key in probe:
            return kind
    return "exec"


def test_deployments_containers_ports_resources_and_probes_match_the_release(
    manifests: dict[str, list[dict[str, Any]]],
    make_cluster: Callable[..., SimulatedCluster],
) -> None:
    released = {d["metadata"]["name"]: d for d in manifests["Deployment"]}
    state = make_cluster().state()
    assert sorted(released) == sorted(ONLINE_BOUTIQUE.names)
    assert sorted(d.name for d in state.deployments) == sorted(released)
    for name, doc in released.items():
        template = doc["spec"]["template"]
        assert template["metadata"]["labels"]["app"] == name
        container = template["spec"]["containers"][0]
        spec = ONLINE_BOUTIQUE.deployment(name).main
        assert spec.name == container["name"], name
        ports = [p["containerPort"] for p in container.get("ports", [])]
        assert (ports[0] if ports else None) == spec.port, name
        resources = container["resources"]
        assert cpu_millicores(resources["requests"]["cpu"]) == cpu_millicores(spec.cpu_request)
        assert cpu_millicores(resources["limits"]["cpu"]) == cpu_millicores(spec.cpu_limit)
        assert memory_bytes(resources["requests"]["memory"]) == memory_bytes(spec.memory_request)
        assert memory_bytes(resources["limits"]["memory"]) == memory_bytes(spec.memory_limit)
        assert _probe_kind(container) == spec.probe, name
        pods = [p for p in state.pods if p.app == name]
        assert len(pods) == doc["spec"].get("replicas", 1)
        assert all(p.containers[0].name == container["name"] for p in pods)
        assert all(p.containers[0].memory_limit == resources["limits"]["memory"] for p in pods)


def test_call_graph_and_service_ports_match_the_addr_variables(
    manifests: dict[str, list[dict[str, Any]]],
) -> None:
    services = {s["metadata"]["name"]: s for s in manifests["Service"]}
    for doc in manifests["Deployment"]:
        name = doc["metadata"]["name"]
        env = doc["spec"]["template"]["spec"]["containers"][0].get("env", [])
        addresses = {
            e["name"]: e["value"]
            for e in env
            if e["name"].endswith("_ADDR") and "value" in e and ":" in e.get("value", "")
        }
        callees = {a.split(":")[0] for a in addresses.values()} & set(ONLINE_BOUTIQUE.names)
        assert set(ONLINE_BOUTIQUE.deployment(name).calls) == callees, name
        for address in addresses.values():
            callee, port = address.split(":")
            if callee in services:
                assert ONLINE_BOUTIQUE.deployment(callee).service_port == int(port)


def _edges(caller: str, calls: tuple[Call, ...]) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    for call in calls:
        out.add((caller, call.callee))
        out |= _edges(call.callee, call.children)
    return out


def test_simulated_traffic_only_uses_edges_of_the_release_call_graph() -> None:
    graph = {(d.name, c) for d in ONLINE_BOUTIQUE.deployments for c in d.calls}
    used: set[tuple[str, str]] = set()
    for scope, calls in ROUTE_CALLS.items():
        assert scope in {r.scope for r in ONLINE_BOUTIQUE.routes}
        used |= _edges(ONLINE_BOUTIQUE.entrypoint, calls)
    assert used <= graph
    assert used == graph - {("loadgenerator", "frontend")}
