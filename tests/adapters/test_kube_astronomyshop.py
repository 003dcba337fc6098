"""The kube adapter on an Astronomy Shop namespace, over real HTTP (kmock's emulator).

The namespace is seeded from the chart's own rendering (``examples/default/rendered``):
its Deployments' pod template labels (``opentelemetry.io/name``, no ``app``) and the
collector agent DaemonSet's pods on kind's two workers. What the adapter must get right
there: the health probes post JSON, as the frontend's API routes read their bodies
(``src/frontend/pages/api/cart.ts`` L35, ``checkout.ts`` L17,
``product-ask-ai-assistant/[productId]/index.ts`` L16); pods, their lines and the chaos
objects a plan removes are filed under the chart's workload label.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kmock
import pytest
import yaml
from kube_harness import (
    NOW,
    NS,
    EmulatorThread,
    FakeClock,
    Harness,
    seed_namespace,
    ts,
)

from r2act.campaigns import Manifest, plan_incidents, render_chaos
from r2act.schema import RollbackConfig, TimeWindow
from r2act.systems import get_system

SHOP = get_system("astronomyshop")
_RENDERED = "opentelemetry-demo-chart-0.40.10/examples/default/rendered"
_PROXY = f"/api/v1/namespaces/{NS}/services/frontend-proxy:8080/proxy"
_AGENT_NODES = ("r2act-astronomy-worker", "r2act-astronomy-worker2")


def _rendered(reference_dir: Path, name: str) -> list[dict[str, Any]]:
    docs = yaml.safe_load_all((reference_dir / _RENDERED / name).read_text())
    return [d for d in docs if d]


def _pod(name: str, template: dict[str, Any], owner: dict[str, str]) -> dict[str, Any]:
    meta = dict(template["metadata"])
    meta.update(name=name, namespace=NS, ownerReferences=[owner], creationTimestamp=ts(-300))
    containers = template["spec"]["containers"]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {"containers": containers},
        "status": {
            "phase": "Running",
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [
                {
                    "name": c["name"],
                    "ready": True,
                    "restartCount": 0,
                    "image": c["image"],
                    "state": {"running": {"startedAt": ts(-300)}},
                }
                for c in containers
            ],
        },
    }


class _Shop:
    """The seeded shop: the harness and every POST body the frontend proxy received."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.posted: dict[str, tuple[str, bytes]] = {}
        """Path -> (Content-Type, body) of each POST through the proxy."""

    def serve(self, request: kmock.Request) -> bytes:
        page = request.url.path[len(_PROXY) :] or "/"
        if str(request.method.value).upper() == "POST":
            body = request.body or b""
            self.posted[page] = (str(request.headers.get("Content-Type", "")), body)
        return b"{}"


@pytest.fixture
def shop(reference_dir: Path) -> Iterator[_Shop]:
    with EmulatorThread() as emulator:
        harness = Harness(emulator=emulator, clock=FakeClock())
        handler = harness.kmock
        seed_namespace(harness)
        seeded = _Shop(harness)
        handler[f"get {_PROXY}/*"] << seeded.serve
        handler[f"post {_PROXY}/*"] << seeded.serve
        for doc in _rendered(reference_dir, "component.yaml"):
            if doc["kind"] != "Deployment":
                continue
            name = doc["metadata"]["name"]
            doc = {**doc, "metadata": {**doc["metadata"], "namespace": NS, "uid": f"uid-{name}"}}
            doc["status"] = {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}
            harness.put("apps/v1/deployments", doc)
            owner = {"kind": "ReplicaSet", "name": f"{name}-5d8f"}
            harness.put("v1/pods", _pod(f"{name}-5d8f-x2k9q", doc["spec"]["template"], owner))
        (agent,) = _rendered(reference_dir, "opentelemetry-collector/daemonset.yaml")
        for n, node in enumerate(_AGENT_NODES):
            owner = {"kind": "DaemonSet", "name": agent["metadata"]["name"]}
            agent_pod = _pod(f"otel-collector-agent-{n}abcd", agent["spec"]["template"], owner)
            agent_pod["spec"]["nodeName"] = node
            harness.put("v1/pods", agent_pod)
        yield seeded


def _cluster(shop: _Shop) -> Any:
    return shop.harness.cluster(topology=SHOP.topology)


def test_the_shops_probes_post_the_json_bodies_its_api_routes_read(shop: _Shop) -> None:
    report = _cluster(shop).health()
    assert report.healthy, report.detail
    assert set(shop.posted) == {
        "/api/cart",
        "/api/checkout",
        "/api/product-ask-ai-assistant/0PUK6V6EV0",
    }
    assert {kind for kind, _ in shop.posted.values()} == {"application/json"}
    body = {page: json.loads(raw) for page, (_, raw) in shop.posted.items()}
    cart = body["/api/cart"]  # AddItemRequest { userId, item: { productId, quantity } }
    assert isinstance(cart["userId"], str)
    assert cart["item"] == {"productId": "0PUK6V6EV0", "quantity": 1}
    order = body["/api/checkout"]  # PlaceOrderRequest, as the locustfile sends it
    assert order["address"]["zipCode"] == "94043" and order["creditCard"]["creditCardCvv"] == 672
    assert isinstance(order["userId"], str) and order["userCurrency"] == "USD"
    question = body["/api/product-ask-ai-assistant/0PUK6V6EV0"]["question"]
    assert isinstance(question, str) and question


def test_online_boutique_probes_still_post_urlencoded_forms(harness: Harness) -> None:
    harness.cluster().health()
    kinds = {
        r.headers.get("Content-Type", "") for r in harness.requests() if r.method.value == "POST"
    }
    assert kinds == {"application/x-www-form-urlencoded"}


def test_pods_and_their_lines_are_filed_under_the_charts_workload_label(shop: _Shop) -> None:
    cluster = _cluster(shop)
    apps = {p.name: p.app for p in cluster.state().pods}
    deployments = {d.name for d in SHOP.topology.deployments} - {"otel-collector-agent"}
    assert {a for n, a in apps.items() if not n.startswith("otel-collector-agent")} <= deployments
    assert {apps[f"{d}-5d8f-x2k9q"] for d in deployments if f"{d}-5d8f-x2k9q" in apps} == {
        d for d in deployments if f"{d}-5d8f-x2k9q" in apps
    }
    assert {apps["otel-collector-agent-0abcd"], apps["otel-collector-agent-1abcd"]} == {
        "otel-collector-agent"
    }
    shop.harness.logs[("cart-5d8f-x2k9q", "cart", False)] = [(NOW - 5, "info: cart ready")]
    lines = [line for batch in cluster.logs(TimeWindow(NOW - 60, NOW)) for line in batch]
    assert [(line.pod, line.service) for line in lines] == [("cart-5d8f-x2k9q", "cart")]


def test_rollback_config_removes_the_route_rule_selecting_by_the_charts_label(
    shop: _Shop,
) -> None:
    manifest = Manifest.model_validate(
        {
            "name": "t",
            "system": SHOP.name,
            "target": {"kind": "sim"},
            "services": [SHOP.topology.entrypoint],
            "faults": [{"type": "http_error", "intensities": ["severe"]}],
            "repetitions": 1,
        },
        strict=False,
    )
    incident = plan_incidents(manifest)[0]
    obj = render_chaos(incident, NS, SHOP.topology)
    assert obj["spec"]["selector"]["labelSelectors"] == {
        "opentelemetry.io/name": SHOP.topology.entrypoint
    }
    cluster = _cluster(shop)
    cluster.inject(obj)
    spec = obj["spec"]
    scope = f"{spec['method']} {spec['path']}"
    plan = RollbackConfig(operation="rollback_config", target=SHOP.topology.entrypoint, scope=scope)
    effect = cluster.apply_plan(plan)
    assert [c.kind for c in effect.changes] == ["chaos_removed"]
