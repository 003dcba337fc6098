"""The Astronomy Shop's topology is what chart 0.40.10 renders, and its shell-less images
are the ones whose Dockerfile ends on a distroless base.

The reference is the chart's own rendering closest to deploy/astronomyshop
(``examples/bring-your-own-observability/rendered/component.yaml``: the same components,
collector and Jaeger settings aside) and the app's 2.2.0 sources.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from r2act.schema import cpu_millicores, memory_bytes
from r2act.systems.astronomyshop import ASTRONOMY_SHOP, IMAGES, NO_SHELL, PROBES, VERSION
from r2act.systems.astronomyshop.runtime import DISTROLESS
from r2act.systems.astronomyshop.topology import COLLECTOR, UNSET
from r2act.systems.astronomyshop.traffic import TASKS

CHART = "opentelemetry-demo-chart-0.40.10"
RENDERED = f"{CHART}/examples/bring-your-own-observability/rendered/component.yaml"
SOURCE = "opentelemetry-demo-2.2.0/src"


@pytest.fixture(scope="module")
def rendered(reference_dir: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """Kind -> name -> document, from the chart's rendering."""
    path = reference_dir / RENDERED
    if not path.is_file():
        pytest.skip(f"{path} is missing; set R2ACT_REFERENCE_DIR")
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for doc in yaml.safe_load_all(path.read_text()):
        if doc:
            by_kind.setdefault(doc["kind"], {})[doc["metadata"]["name"]] = doc
    return by_kind


def _containers(doc: dict[str, Any]) -> list[dict[str, Any]]:
    containers: list[dict[str, Any]] = doc["spec"]["template"]["spec"]["containers"]
    return containers


def test_one_deployment_spec_per_rendered_deployment(
    rendered: dict[str, dict[str, dict[str, Any]]],
) -> None:
    assert sorted(set(ASTRONOMY_SHOP.names) - {COLLECTOR}) == sorted(rendered["Deployment"])
    for name, doc in rendered["Deployment"].items():
        labels = doc["spec"]["template"]["metadata"]["labels"]
        assert labels["app.kubernetes.io/component"] == name
        assert labels["app.kubernetes.io/version"] == VERSION


def test_the_collector_is_the_charts_daemonset_as_one_replica(reference_dir: Path) -> None:
    """The node agent the services' log records are printed on: its DaemonSet's name,
    container, image and memory limit; one pod (kind's nodes each run one, the engine has
    one node); no Service and no caller (exporting is not a call a request waits on)."""
    path = reference_dir / f"{CHART}/examples/bring-your-own-observability/rendered"
    doc = yaml.safe_load((path / "opentelemetry-collector" / "daemonset.yaml").read_text())
    assert doc["kind"] == "DaemonSet" and doc["metadata"]["name"] == COLLECTOR
    spec = ASTRONOMY_SHOP.deployment(COLLECTOR)
    (theirs,) = _containers(doc)
    assert [c.name for c in spec.containers] == [theirs["name"]]
    assert spec.main.image == theirs["image"] == IMAGES[COLLECTOR]
    assert spec.main.port in [p["containerPort"] for p in theirs["ports"]]
    limit = theirs["resources"]["limits"]["memory"]
    assert memory_bytes(spec.main.memory_limit) == memory_bytes(limit)
    assert spec.replicas == 1 and spec.service_port is None and not spec.calls
    assert not ASTRONOMY_SHOP.callers(COLLECTOR)


def test_containers_images_ports_and_memory_limits_match(
    rendered: dict[str, dict[str, dict[str, Any]]],
) -> None:
    for name, doc in rendered["Deployment"].items():
        spec = ASTRONOMY_SHOP.deployment(name)
        containers = _containers(doc)
        assert [c.name for c in spec.containers] == [c["name"] for c in containers], name
        assert IMAGES[name] == containers[0]["image"] == spec.main.image
        for ours, theirs in zip(spec.containers, containers, strict=True):
            ports = [p["containerPort"] for p in theirs.get("ports", [])]
            assert ours.port == (ports[0] if ports else None), name
            limits = (theirs.get("resources") or {}).get("limits", {})
            requests = (theirs.get("resources") or {}).get("requests", {})
            limit = limits.get("memory", UNSET)
            assert memory_bytes(ours.memory_limit) == memory_bytes(limit), name
            # No request in the chart: the API server defaults it to the limit.
            assert memory_bytes(ours.memory_request) == memory_bytes(requests.get("memory", limit))
            assert cpu_millicores(ours.cpu_limit) == cpu_millicores(limits.get("cpu", UNSET))
            assert cpu_millicores(ours.cpu_request) == cpu_millicores(requests.get("cpu", UNSET))


def test_no_container_has_a_probe(rendered: dict[str, dict[str, dict[str, Any]]]) -> None:
    for name, doc in rendered["Deployment"].items():
        for container in _containers(doc):
            assert not {"readinessProbe", "livenessProbe", "startupProbe"} & set(container)
        assert all(c.probe is None for c in ASTRONOMY_SHOP.deployment(name).containers)
    assert PROBES == {}


def test_service_ports_match_the_rendered_services(
    rendered: dict[str, dict[str, dict[str, Any]]],
) -> None:
    services = rendered["Service"]
    for spec in ASTRONOMY_SHOP.deployments:
        if spec.service_port is None:
            assert spec.name not in services
            continue
        assert spec.service_port == services[spec.name]["spec"]["ports"][0]["port"]


def _host(address: str) -> str:
    """The host of ``name:port`` or ``http://name:port``."""
    return re.sub(r"^[a-z]+://", "", address).split(":")[0]


def test_env_holds_every_addr_variable_that_names_a_deployment(
    rendered: dict[str, dict[str, dict[str, Any]]],
) -> None:
    names = set(ASTRONOMY_SHOP.names)
    for name, doc in rendered["Deployment"].items():
        env = {e["name"]: e.get("value", "") for e in _containers(doc)[0].get("env", [])}
        addresses = {k: v for k, v in env.items() if k.endswith("_ADDR") and _host(v) in names}
        spec = ASTRONOMY_SHOP.deployment(name)
        assert spec.env == addresses, name
        # Every address is a call, to the port of the callee's Service.
        for address in addresses.values():
            callee = _host(address)
            assert callee in spec.calls, (name, callee)
            port = int(address.rsplit(":", 1)[1])
            assert ASTRONOMY_SHOP.deployment(callee).service_port == port
        # flagd, the llm and postgresql are reached by host variables and connection strings.
        hosts = {v for k, v in env.items() if k in ("FLAGD_HOST", "LLM_HOST")}
        if "postgresql" in env.get("DB_CONNECTION_STRING", ""):
            hosts.add("postgresql")
        assert hosts & names <= set(spec.calls), name


def test_calls_name_deployments_and_every_route_reaches_known_services() -> None:
    names = set(ASTRONOMY_SHOP.names)
    for spec in ASTRONOMY_SHOP.deployments:
        assert set(spec.calls) <= names - {spec.name}, spec.name
    assert ASTRONOMY_SHOP.entrypoint in ASTRONOMY_SHOP.deployment("load-generator").calls
    # What a request reaches: the entry point's call chains, and through Kafka its
    # consumers, which connect to the broker themselves (calls cannot say "is delivered to").
    reached = ASTRONOMY_SHOP.downstream(ASTRONOMY_SHOP.entrypoint)
    reached |= set(ASTRONOMY_SHOP.callers("kafka"))
    for route in ASTRONOMY_SHOP.routes:
        assert set(route.services) <= reached, route.scope
    # Kafka connects the order flow: the producer and both consumers reach it.
    assert set(ASTRONOMY_SHOP.callers("kafka")) == {"checkout", "accounting", "fraud-detection"}


def test_checkout_calls_what_its_source_dials(reference_dir: Path) -> None:
    main = reference_dir / SOURCE / "checkout" / "main.go"
    if not main.is_file():
        pytest.skip(f"{main} is missing; set R2ACT_REFERENCE_DIR")
    text = main.read_text()
    variables = set(re.findall(r'mustMapEnv\(&svc\.\w+, "(\w+_ADDR)"\)', text))
    variables |= set(re.findall(r'os\.Getenv\("(\w+_ADDR)"\)', text))
    spec = ASTRONOMY_SHOP.deployment("checkout")
    assert set(spec.env) == variables
    assert {_host(spec.env[v]) for v in variables} | {"flagd"} == set(spec.calls)
    assert "openfeature.NewClient" in text


def test_frontend_gateways_are_its_addr_variables(reference_dir: Path) -> None:
    gateways = reference_dir / SOURCE / "frontend" / "gateways"
    if not gateways.is_dir():
        pytest.skip(f"{gateways} is missing; set R2ACT_REFERENCE_DIR")
    used = {
        v
        for f in gateways.rglob("*.ts")
        for v in re.findall(r"const \{ (\w+_ADDR) = '' \} = process\.env", f.read_text())
    }
    assert used == set(ASTRONOMY_SHOP.deployment("frontend").env)


def test_route_weights_are_the_locust_task_weights(reference_dir: Path) -> None:
    locustfile = reference_dir / SOURCE / "load-generator" / "locustfile.py"
    if not locustfile.is_file():
        pytest.skip(f"{locustfile} is missing; set R2ACT_REFERENCE_DIR")
    weights = dict(
        (name, int(w))
        for w, name in re.findall(r"@task\((\d+)\)\n\s+def (\w+)", locustfile.read_text())
    )
    # Every task of the file, with its weight, and nothing else.
    assert {name: w for name, (w, _) in TASKS.items()} == weights
    route = {r.scope: r.weight for r in ASTRONOMY_SHOP.routes}
    # A route's weight is the requests the tasks send to it per 32 tasks: checkout's and
    # checkout_multi's add-to-cart rounds count, flood_home sends 0 requests while off.
    assert route["GET /"] == weights["index"]
    products = weights["browse_product"] + weights["add_to_cart"]
    products += weights["checkout"] + weights["checkout_multi"] * 3  # choice([2, 3, 4])
    assert route["GET /api/products/*"] == products
    assert route["POST /api/cart"] == products - weights["browse_product"]
    assert route["POST /api/checkout"] == weights["checkout"] + weights["checkout_multi"]
    assert route["GET /api/data/"] == weights["get_ads"]
    assert route["GET /api/cart"] == weights["view_cart"]
    assert sum(weights.values()) == 32


def _final_from(dockerfile: Path) -> tuple[str, int]:
    """The image of a Dockerfile's last FROM (ARG defaults resolved) and its line."""
    lines = dockerfile.read_text().splitlines()
    args = dict(re.findall(r"^ARG (\w+)=(\S+)", "\n".join(lines), re.M))
    number, line = max((i + 1, line) for i, line in enumerate(lines) if line.startswith("FROM "))
    image = line.split()[1]
    image = re.sub(r"\$\{(\w+)\}", lambda m: args.get(m.group(1), m.group(0)), image)
    return image, number


def test_no_shell_entries_are_the_distroless_final_stages(reference_dir: Path) -> None:
    src = reference_dir / SOURCE
    if not src.is_dir():
        pytest.skip(f"{src} is missing; set R2ACT_REFERENCE_DIR")
    distroless = {}
    for dockerfile in sorted(src.glob("*/Dockerfile")) + sorted(src.glob("*/src/Dockerfile")):
        service = dockerfile.relative_to(src).parts[0]
        image, line = _final_from(dockerfile)
        if "distroless" in image:
            distroless[service] = (image, line)
    assert distroless == DISTROLESS
    for service, (image, line) in distroless.items():
        assert f"{image}, src/{service}/Dockerfile L{line}" in NO_SHELL[service]
    # flagd's image is not built from the demo's sources: its entry rests on the facts.
    assert set(NO_SHELL) == set(DISTROLESS) | {"flagd"}
    assert IMAGES["flagd"].startswith("ghcr.io/open-feature/flagd:")


def test_every_call_is_to_a_host_the_callers_environment_names(
    rendered: dict[str, dict[str, dict[str, Any]]],
) -> None:
    """No edge without its address: each callee appears as a host in some variable of the
    caller's main container (``*_ADDR``, ``*_HOST``, a connection string, ``LOCUST_HOST``)."""
    for name, doc in rendered["Deployment"].items():
        values = [e.get("value", "") for e in _containers(doc)[0].get("env", [])]
        tokens = {t for v in values for t in re.split(r"[^a-z0-9-]+", v)}
        missing = set(ASTRONOMY_SHOP.deployment(name).calls) - tokens
        assert not missing, (name, missing)


def test_the_simulator_builds_the_deployed_state_from_it(tmp_path: Path) -> None:
    """Unregistered, it runs as a system with nothing of its own (``system_of``'s default),
    so the twin can start from this topology: one pod per Deployment, the chart's limits."""
    from r2act.cluster.sim import SimulatedCluster

    state = SimulatedCluster(tmp_path, topology=ASTRONOMY_SHOP).state()
    assert sorted(d.name for d in state.deployments) == sorted(ASTRONOMY_SHOP.names)
    for spec in ASTRONOMY_SHOP.deployments:
        pods = [p for p in state.pods if p.app == spec.name]
        assert len(pods) == spec.replicas
        # (the llm's unset limit, "0", comes out as "0Mi": the twin must read it as unset)
        assert all(
            memory_bytes(p.containers[0].memory_limit or UNSET)
            == memory_bytes(spec.main.memory_limit)
            for p in pods
        )
