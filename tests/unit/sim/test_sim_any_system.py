"""The engine renders a system it has never heard of: everything application-specific is the
system's (``System``), so a toy topology with no renderers of its own still runs.

Its own services print nothing (the default ``Renderers``), while everything that is not the
application's is there: Redis' banner for a deployment whose language is ``redis``, Locust's
stats table for the topology's load generator, the kubelet's events with the container,
image, probe handler and port the topology declares, and the health verdict.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.schema import (
    PLAN_ADAPTER,
    ContainerSpec,
    DeploymentSpec,
    HttpRoute,
    LogLine,
    TimeWindow,
    Topology,
)
from r2act.systems import system_of
from r2act.systems.render import Renderers

from .conftest import NO_GLITCHES


def _container(name: str, port: int | None, probe: str | None) -> ContainerSpec:
    return ContainerSpec(
        name=name,
        image=f"example.org/toy/{name}:1.0",
        port=port,
        cpu_request="100m",
        cpu_limit="200m",
        memory_request="64Mi",
        memory_limit="128Mi",
        probe=probe,
    )


TOY = Topology(
    system="toyshop",
    entrypoint="web",
    entrypoint_port=8000,
    health_path="/healthz",
    load_generator="load",
    deployments=[
        DeploymentSpec(
            name="web",
            language="go",
            containers=[_container("web", 8000, "http")],
            service_port=80,
            calls=["api"],
            env={"API_ADDR": "api:9000"},
        ),
        DeploymentSpec(
            name="api",
            language="python",
            containers=[_container("app", 9000, "grpc")],
            service_port=9000,
            calls=["kv"],
            env={"KV_ADDR": "kv:6379"},
        ),
        DeploymentSpec(
            name="kv",
            language="redis",
            containers=[_container("redis", 6379, "tcp")],
            service_port=6379,
        ),
        DeploymentSpec(
            name="load",
            language="locust",
            containers=[_container("main", None, None)],
            calls=["web"],
            env={"WEB_ADDR": "web:80"},
        ),
    ],
    routes=[
        HttpRoute(method="GET", path="/", weight=1, services=["api"]),
        HttpRoute(method="GET", path="/item/*", weight=3, services=["api", "kv"]),
    ],
)


def _lines(cluster: SimulatedCluster, start: float, end: float) -> list[LogLine]:
    return [x for batch in cluster.logs(TimeWindow(start, end)) for x in batch]


@pytest.fixture
def toy(tmp_path: Path) -> SimulatedCluster:
    cluster = SimulatedCluster(tmp_path, glitches=NO_GLITCHES, topology=TOY)
    cluster.clock.sleep(600.0)
    return cluster


def test_a_toy_system_has_neutral_renderers_and_facts() -> None:
    system = system_of(TOY)
    assert system.renderers == Renderers()
    assert not system.images and not system.probes and not system.no_shell
    assert system.path_ids == () and not system.probe_forms


def test_its_services_print_nothing_but_redis_and_locust_print_their_own(
    toy: SimulatedCluster,
) -> None:
    start = toy.clock.now()
    toy.apply_plan(PLAN_ADAPTER.validate_python({"operation": "restart_service", "target": "kv"}))
    toy.clock.sleep(120.0)
    lines = _lines(toy, start - 600.0, toy.clock.now())
    by_app = {x.service for x in lines}
    assert by_app == {"kv", "load"}, by_app
    kv = [x.line for x in lines if x.service == "kv"]
    assert any(line.endswith("* Ready to accept connections tcp") for line in kv), kv
    table = [x.line for x in lines if x.service == "load"]
    assert any(line.split()[:2] == ["GET", "/item/*"] for line in table), table[:20]
    assert any("Aggregated" in line for line in table)


def test_the_kubelet_reports_the_toys_containers_images_and_probes(
    toy: SimulatedCluster,
) -> None:
    start = toy.clock.now()
    toy.inject(
        {
            "apiVersion": "chaos-mesh.org/v1alpha1",
            "kind": "PodChaos",
            "metadata": {"name": "toy-pod-failure", "namespace": "default"},
            "spec": {
                "action": "pod-failure",
                "mode": "all",
                "selector": {"labelSelectors": {"app": "api"}},
                "duration": "120s",
            },
        }
    )
    assert toy.health().healthy
    toy.clock.sleep(60.0)
    during = toy.health()
    assert not during.healthy and during.unavailable == ["api"], during
    toy.clock.sleep(120.0)
    events = [e for e in toy.events(TimeWindow(start, toy.clock.now())) if e.source == "kubelet"]
    messages = {e.reason: e.message for e in events if e.object_name.startswith("api-")}
    assert messages["Started"] == "Started container app"
    assert (
        messages["Pulled"] == 'Container image "example.org/toy/app:1.0" already present on machine'
    )
    assert messages["Unhealthy"].endswith("within 1s: context deadline exceeded")
    assert ":9000" in messages["Unhealthy"]


def test_online_boutique_declares_every_hook_and_fact() -> None:
    from r2act.systems import ONLINE_BOUTIQUE

    system = system_of(ONLINE_BOUTIQUE)
    defaults = Renderers()
    for hook in ("served", "failed_call", "request", "tolerated", "startup", "periodic"):
        assert getattr(system.renderers, hook) is not getattr(defaults, hook), hook
    deployed = set(system.services)
    assert set(system.probes) <= deployed and set(system.no_shell) <= deployed
    # The kubelet names the pod spec's image: no override of the templates' (issue 22 item 5).
    assert not system.images and set(system.startup_s) <= deployed
    assert system.path_ids and set(system.probe_forms) <= {r.scope for r in system.topology.routes}
