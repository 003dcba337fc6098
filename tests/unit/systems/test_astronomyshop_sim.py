"""The Astronomy Shop runs on the simulated cluster: its smoke campaign goes through collect
and audit, and failures propagate as its handlers say (``systems/astronomyshop/traffic.py``).

The campaign is run through the CLI as a user would; the propagation checks read the load
generator's own statistics in the raw store and the engine's scene of the shop.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
import zstandard
from typer.testing import CliRunner

from r2act.campaigns import load_manifest, plan_incidents
from r2act.cli import _register_commands, app
from r2act.cluster.sim.identity import pod_facts
from r2act.cluster.sim.scene import build_scene
from r2act.cluster.sim.state import fresh_state
from r2act.cluster.sim.timeline import build_timelines
from r2act.schema import memory_bytes
from r2act.schema.topology import split_address
from r2act.systems import INSTALLED, get_system, system_of
from r2act.systems.astronomyshop import ASTRONOMY_SHOP, SYSTEM
from r2act.systems.astronomyshop.topology import COLLECTOR
from r2act.systems.astronomyshop.traffic import REQUESTS_PER_TASK, ROUTE_CALLS, USERS

REPO = Path(__file__).resolve().parents[3]
SMOKE = REPO / "campaigns" / "astronomy-smoke.yaml"
POLICY = "paper-table-ii/1"
"""The audit's policy: the Astronomy Shop has no recovery rules of its own yet, so only a
policy that carries its own rules can label its incidents."""
_ACCESS = re.compile(r'"(GET|POST) (\S+) HTTP/1\.1" (\d{3}) ')
"""Envoy's access-log body (``render_formats.envoy_access_body``): method, path, status."""


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke campaign collected and audited on the simulator, once for this module."""
    run = tmp_path_factory.mktemp("astronomy-smoke")
    _register_commands()
    collected = CliRunner().invoke(app, ["collect", str(SMOKE), "--out", str(run), "-q"])
    assert collected.exit_code == 0, collected.output
    audited = CliRunner().invoke(app, ["audit", str(run), "--policy", POLICY, "-q"])
    assert audited.exit_code == 0, audited.output
    return run


def _requests(run: Path, incident: str, phase: str) -> dict[str, tuple[int, int]]:
    """Route path -> (requests, failures) of the users' requests Envoy logged in a phase:
    its access records on the collector (the shop's Locust prints no stats table,
    ``System.load_stats``); a failure is a 5xx answer."""
    raw = run / "raw" / incident / phase / "logs.jsonl.zst"
    reader = zstandard.ZstdDecompressor().stream_reader(raw.open("rb"))
    rows: dict[str, tuple[int, int]] = {}
    for text in io.TextIOWrapper(reader, encoding="utf-8"):
        record = json.loads(text)
        if record["service"] != COLLECTOR:
            continue
        match = _ACCESS.search(record["line"])
        if match:
            row = f"{match[1]} {match[2].split('?')[0]}"
            reqs, fails = rows.get(row, (0, 0))
            rows[row] = (reqs + 1, fails + (int(match[3]) >= 500))
    return rows


def _loadgen_lines(run: Path, incident: str, phase: str) -> list[str]:
    """What the load generator's own pod log holds in a phase."""
    raw = run / "raw" / incident / phase / "logs.jsonl.zst"
    reader = zstandard.ZstdDecompressor().stream_reader(raw.open("rb"))
    records = (json.loads(text) for text in io.TextIOWrapper(reader, encoding="utf-8"))
    return [r["line"] for r in records if r["service"] == ASTRONOMY_SHOP.load_generator]


def _scope(row: str) -> str:
    """The route scope a Locust row counts (its path with the route's ``*`` filled in)."""
    for route in ASTRONOMY_SHOP.routes:
        prefix = route.scope.removesuffix("*")
        if row == route.scope or (route.scope.endswith("*") and row.startswith(prefix)):
            return route.scope
    raise AssertionError(f"Locust row {row!r} matches no route")


def _failed(phase: dict[str, tuple[int, int]]) -> Iterator[str]:
    """The rows with failed requests in a phase."""
    for row, (_, fails) in phase.items():
        if fails > 0:
            yield row


def test_the_shop_is_installed_with_its_own_load_model() -> None:
    assert get_system("astronomyshop") is SYSTEM is INSTALLED[ASTRONOMY_SHOP.system]
    assert system_of(ASTRONOMY_SHOP) is SYSTEM
    assert SYSTEM.deploy_dir == "deploy/astronomyshop/"
    assert set(SYSTEM.route_calls) == {r.scope for r in ASTRONOMY_SHOP.routes}
    # 37 requests per 32 tasks: flood_home is picked but sends nothing while its flag is off.
    assert pytest.approx(37 / 32) == REQUESTS_PER_TASK
    assert SYSTEM.redirects == {}
    assert all(c.callee == "frontend" for calls in ROUTE_CALLS.values() for c in calls)
    values = (REPO / SYSTEM.deploy_dir / "values.yaml").read_text()
    shipped = re.search(r'name: LOCUST_USERS\n\s+value: "(\d+)"', values)
    assert shipped is not None and int(shipped[1]) == USERS
    assert load_manifest(SMOKE).load.users == USERS


def test_the_smoke_campaign_is_admitted_with_its_planned_labels(smoke_run: Path) -> None:
    planned = {i.id: i for i in plan_incidents(load_manifest(SMOKE))}
    verdicts = [json.loads(line) for line in (smoke_run / "audit" / "audit.jsonl").open()]
    assert {v["incident_id"] for v in verdicts} == set(planned)
    assert [v["incident_id"] for v in verdicts if v["group"] != "main"] == []
    for iid, incident in planned.items():
        record = json.loads((smoke_run / "audit" / "records" / f"{iid}.json").read_text())
        assert record["metadata"]["system"] == "astronomyshop"
        assert record["policy"] == POLICY
        assert record["labels"]["service"] == incident.service
        assert record["labels"]["fault_type"] == incident.fault.type.value
        assert record["labels"]["intensity"] == incident.fault.intensity.value
        assert set(record["action_space"]["targets"]) <= set(ASTRONOMY_SHOP.names)
    faults = {i.fault.type.value for i in planned.values()}
    assert len(faults) == len(planned) == 7


def test_a_catalogue_pod_failure_fails_the_product_routes_at_the_entry_point(
    smoke_run: Path,
) -> None:
    incident = "astronomyshop_product-catalog_pod_failure_severe_r01"
    pre = _requests(smoke_run, incident, "pre")
    during = _requests(smoke_run, incident, "during")
    assert pre, "Envoy logs the users' requests"
    assert not list(_failed(pre)), "the baseline before the fault has failures"
    failed = {_scope(row) for row in _failed(during)}
    # Exactly the routes whose handler looks a product up (Locust sends few orders, so the
    # checkout may or may not have met the outage): ads, reviews and the cart do not fail.
    assert {"GET /api/products/*", "GET /api/recommendations"} <= failed
    assert failed <= {"GET /api/products/*", "GET /api/recommendations", "POST /api/checkout"}


def test_a_wrong_payment_address_fails_only_the_checkout(smoke_run: Path) -> None:
    incident = "astronomyshop_payment_dns_random_moderate_r01"
    pre, during = (_requests(smoke_run, incident, phase) for phase in ("pre", "during"))
    assert not list(_failed(pre))
    assert {_scope(row) for row in _failed(during)} == {"POST /api/checkout"}


def test_the_load_generators_pod_log_holds_no_console(smoke_run: Path) -> None:
    """The chart's Locust runs its web UI with ``--skip-log-setup`` (``System.load_stats``
    None): no stats table and no console line on its pod, in any phase."""
    assert SYSTEM.load_stats is None
    for incident in ("astronomyshop_payment_dns_random_moderate_r01",):
        for phase in ("pre", "during", "post"):
            assert _loadgen_lines(smoke_run, incident, phase) == []


def _scene_without(*down: str, env: dict[str, dict[str, str]] | None = None) -> dict[str, float]:
    """Per route, the users' failure share with every pod of ``down`` gone (and ``env``:
    per deployment, variables its pods hold instead of the manifest's)."""
    state = fresh_state(ASTRONOMY_SHOP, name="t", seed=1, namespace="default")
    state.pods = [p for p in state.pods if p.app not in down]
    for pod in state.pods:
        pod.env = dict((env or {}).get(pod.app, {}))
    requests = {d.name: memory_bytes(d.main.memory_request) for d in ASTRONOMY_SHOP.deployments}
    timelines = build_timelines(
        state, pod_facts(ASTRONOMY_SHOP), requests, seed=1, workload_label="opentelemetry.io/name"
    )
    scene = build_scene(ASTRONOMY_SHOP, timelines, state.now + 1.0, USERS)
    return {scope: view.fail for scope, view in scene.routes.items()}


def test_handlers_fail_a_request_on_the_calls_they_do_not_tolerate() -> None:
    healthy = _scene_without()
    assert max(healthy.values()) == 0.0
    catalog = _scene_without("product-catalog")
    for scope in ("GET /api/products/*", "GET /api/recommendations", "POST /api/checkout"):
        assert catalog[scope] == 1.0, scope
    for scope in ("GET /", "GET /api/data/", "GET /api/cart", "POST /api/cart"):
        assert catalog[scope] == 0.0, scope
    # checkout/main.go L379-L380: a failed confirmation e-mail is a warning, not an error;
    # the Kafka produce (L611-L662) and emptying the cart (L349) are tolerated too.
    assert _scene_without("email", "kafka")["POST /api/checkout"] == 0.0
    assert _scene_without("payment")["POST /api/checkout"] == 1.0
    assert _scene_without("quote")["POST /api/checkout"] == 1.0
    # Kafka's consumers are off every user path.
    assert max(_scene_without("accounting", "fraud-detection").values()) == 0.0


def test_a_url_address_is_read_past_its_scheme() -> None:
    assert split_address("cart:8080") == ("", "cart", "8080")
    assert split_address("http://email:8080") == ("http://", "email", "8080")
    assert split_address("http://198.51.100.7:8080/") == ("http://", "198.51.100.7", "8080")
    assert split_address("valkey-cart") == ("", "valkey-cart", "")
    assert ASTRONOMY_SHOP.held_address("checkout", "email") == (
        "checkout",
        "EMAIL_ADDR",
        "http://email:8080",
    )
    assert ASTRONOMY_SHOP.address_holders("shipping") == ["checkout", "frontend"]
    assert ASTRONOMY_SHOP.address_holders("quote") == ["shipping"]


def test_a_wrong_url_fails_the_calls_through_it_as_the_handlers_say() -> None:
    """A host that does not resolve behind a URL breaks the edge: fatal for shipping's quote
    (checkout/main.go L415-L418), a warning for the e-mail (L379-L380)."""
    email = {"checkout": {"EMAIL_ADDR": "http://email.invalid:8080"}}
    assert _scene_without(env=email)["POST /api/checkout"] == 0.0
    shipping = {"checkout": {"SHIPPING_ADDR": "http://shipping.invalid:8080"}}
    assert _scene_without(env=shipping)["POST /api/checkout"] == 1.0
    quote = {"shipping": {"QUOTE_ADDR": "http://203.0.113.9:8080"}}
    assert _scene_without(env=quote)["POST /api/checkout"] == 1.0


def test_a_simulated_cluster_runs_the_system_it_was_created_for(tmp_path: Path) -> None:
    """``connect`` builds the manifest's system; a reconnect without one (cleanup, replay of
    a saved cluster) keeps the saved cluster's system instead of the default one."""
    from r2act.campaigns import SimTarget
    from r2act.cluster.connect import connect
    from r2act.cluster.sim import SimulatedCluster

    target = SimTarget(kind="sim", seed=1, name="shop")
    first = connect(target, namespace="default", workspace=tmp_path, topology=ASTRONOMY_SHOP)
    assert isinstance(first, SimulatedCluster) and first.topology is ASTRONOMY_SHOP
    again = connect(target, namespace="default", workspace=tmp_path)
    assert isinstance(again, SimulatedCluster) and again.topology is ASTRONOMY_SHOP
    assert {p.split("-")[0] for p in again.pod_names()} >= {"accounting", "quote", "valkey"}
    other = connect(
        SimTarget(kind="sim", seed=1, name="ob"), namespace="default", workspace=tmp_path
    )
    assert (
        isinstance(other, SimulatedCluster)
        and other.topology is get_system("onlineboutique").topology
    )


def test_replay_of_the_flag_incident_gold_recovers_and_a_restart_does_not(
    smoke_run: Path, tmp_path: Path
) -> None:
    """The FlagFault is re-injected on the simulator: the gold ``rollback_config(S, flag)``
    recovers the users' requests, a restart of S does not (flagd still serves the flag)."""
    built = CliRunner().invoke(app, ["dataset", "build", str(smoke_run), "-q"])
    assert built.exit_code == 0, built.output
    dataset = smoke_run / "dataset"
    incident = next(
        i for i in plan_incidents(load_manifest(SMOKE)) if i.fault.type.value == "feature_flag"
    )
    answers = json.loads((smoke_run / "audit" / "records" / f"{incident.id}.json").read_text())
    gold = answers["gold_plan"]
    assert (
        gold["operation"] == "rollback_config"
        and gold["scope"] == incident.fault.parameters["flag"]
    )
    outcomes = {}
    for name, plan in (
        ("gold", gold),
        ("restart", {"operation": "restart_service", "target": incident.service}),
    ):
        predictions = tmp_path / f"{name}.jsonl"
        line = {"incident_id": incident.id, "plan": plan, "method": name}
        predictions.write_text(json.dumps(line) + "\n")
        out = tmp_path / f"replay-{name}"
        replayed = CliRunner().invoke(
            app,
            ["replay", str(predictions), "--dataset", str(dataset), "--out", str(out), "-q"],
        )
        assert replayed.exit_code == 0, replayed.output
        outcomes[name] = json.loads((out / "replay.jsonl").read_text().splitlines()[-1])
    assert outcomes["gold"]["status"] == outcomes["restart"]["status"] == "executed"
    assert outcomes["gold"]["effect_confirmed"] and outcomes["gold"]["recovered"]
    assert not outcomes["restart"]["recovered"]


def _collector_bodies(run: Path, incident: str, phase: str) -> list[tuple[str, str, str]]:
    """(service.name, scope, body) of every record the collector printed in a phase."""
    raw = run / "raw" / incident / phase / "logs.jsonl.zst"
    reader = zstandard.ZstdDecompressor().stream_reader(raw.open("rb"))
    found: list[tuple[str, str, str]] = []
    service = scope = ""
    for text in io.TextIOWrapper(reader, encoding="utf-8"):
        record = json.loads(text)
        if record["service"] != COLLECTOR:
            continue
        line = record["line"]
        if line.startswith("     -> service.name: Str("):
            service = line.removeprefix("     -> service.name: Str(")[:-1]
        elif line.startswith("InstrumentationScope "):
            scope = line.split(" ")[1]
        elif line.startswith("Body: Str("):
            found.append((service, scope, line.removeprefix("Body: Str(")[:-1]))
    return found


def test_the_load_generators_task_records_reach_the_collector(smoke_run: Path) -> None:
    """Each task's ``logging.info`` (locustfile.py L120-L216) is an OTLP record on the
    collector, in the tasks' proportions (browse_product weighs 10, view_cart 3)."""
    incident = "astronomyshop_payment_dns_random_moderate_r01"
    bodies = [
        body
        for phase in ("pre", "during", "post")
        for service, scope, body in _collector_bodies(smoke_run, incident, phase)
        if service == ASTRONOMY_SHOP.load_generator and scope == "root"
    ]
    browse = sum(b.startswith("User browsing product: ") for b in bodies)
    cart = sum(b == "User viewing cart" for b in bodies)
    assert browse > 2 * cart > 0
    assert any(b.startswith("Checkout completed for user ") for b in bodies)
    assert not any(b.startswith("User flooding homepage") for b in bodies)  # its flag is off


def test_a_starting_load_generator_exports_locusts_and_each_users_start() -> None:
    from r2act.cluster.sim.podlogs import PodLogger
    from r2act.systems.astronomyshop.render_collector import CollectorPod
    from r2act.systems.astronomyshop.render_loadgen import loadgen_startup

    app = ASTRONOMY_SHOP.load_generator or ""
    logger = PodLogger(ASTRONOMY_SHOP, f"{app}-abc-def", app, app, seed=1, users=USERS)
    out: list = []
    loadgen_startup(logger, CollectorPod("otel-collector-agent-x"), 100.0, out)
    bodies = [x.line.removeprefix("Body: Str(")[:-1] for x in out if x.line.startswith("Body:")]
    assert bodies[:4] == [
        "Instrumentation complete - logs will now include trace context",
        "Starting Locust 2.43.0",
        "Starting web interface at http://0.0.0.0:8089, press enter to open your default browser.",
        "No run time limit set, use CTRL+C to interrupt",
    ]
    sessions = [b for b in bodies if b.startswith("Starting user session: ")]
    assert len(sessions) == USERS == bodies.count("User accessing index page")
