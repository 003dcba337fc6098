"""A chaos object selects its service's pods by the label that system's manifests put on them.

Online Boutique's pods carry ``app: <name>``; the opentelemetry-demo chart's carry
``opentelemetry.io/name: <name>`` and no ``app`` (its Deployments' selector, the rendered
``component.yaml``). A selector by the wrong label is valid against the CRD and selects no
pod: Chaos Mesh would then inject nothing. So every rendered Chaos Mesh object of the
Astronomy Shop's campaigns is matched, the way Chaos Mesh matches ``labelSelectors``,
against the pod template labels of the chart's own rendering.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from r2act.campaigns import load_manifest, plan_incidents, render_chaos
from r2act.schema import CONFIG_FAULT_KIND, FLAG_FAULT_KIND
from r2act.systems import get_system

REPO = Path(__file__).resolve().parents[3]
SHOP = get_system("astronomyshop")
_RENDERED = "opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml"
_NAMESPACE = "astronomy"


@functools.cache
def _shop_objects() -> list[dict[str, Any]]:
    objects = []
    for name in ("astronomy-smoke.yaml", "astronomy-shop.yaml"):
        for incident in plan_incidents(load_manifest(REPO / "campaigns" / name)):
            obj = render_chaos(incident, _NAMESPACE, SHOP.topology)
            if obj["kind"] not in (CONFIG_FAULT_KIND, FLAG_FAULT_KIND):
                objects.append(obj)
    return objects


@pytest.fixture(scope="module")
def chart_pods(reference_dir: Path) -> dict[str, dict[str, str]]:
    """Deployment name -> the labels of the pods it creates, as the chart renders them."""
    docs = yaml.safe_load_all((reference_dir / _RENDERED).read_text())
    return {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"]
        for d in docs
        if d and d["kind"] == "Deployment"
    }


def _selected(selector: dict[str, Any], pods: dict[str, dict[str, str]]) -> set[str]:
    """The Deployments whose pods a labelSelectors selector in our namespace picks."""
    assert selector["namespaces"] == [_NAMESPACE]
    wanted = selector["labelSelectors"]
    return {name for name, labels in pods.items() if wanted.items() <= labels.items()}


def test_every_shop_chaos_object_selects_exactly_its_services_pods_in_the_chart(
    chart_pods: dict[str, dict[str, str]],
    crd_validators: dict[str, jsonschema.Draft7Validator],
) -> None:
    objects = _shop_objects()
    assert {o["kind"] for o in objects} >= {"PodChaos", "StressChaos", "NetworkChaos"}
    for obj in objects:
        assert not list(crd_validators[obj["kind"]].iter_errors(obj)), obj["metadata"]["name"]
        (service,) = obj["spec"]["selector"]["labelSelectors"].values()
        assert _selected(obj["spec"]["selector"], chart_pods) == {service}


def test_a_selector_by_the_app_label_would_select_no_chart_pod(
    chart_pods: dict[str, dict[str, str]],
) -> None:
    """Why the label is the system's: the chart's pods carry no ``app`` label at all."""
    assert chart_pods and not any("app" in labels for labels in chart_pods.values())
    service = _shop_objects()[0]["spec"]["selector"]["labelSelectors"]
    by_app = {"namespaces": [_NAMESPACE], "labelSelectors": {"app": next(iter(service.values()))}}
    assert _selected(by_app, chart_pods) == set()


def test_online_boutique_keeps_selecting_by_app(reference_dir: Path) -> None:
    manifests = reference_dir / "online-boutique" / "kubernetes-manifests.yaml"
    pods = {
        d["metadata"]["name"]: d["spec"]["template"]["metadata"]["labels"]
        for d in yaml.safe_load_all(manifests.read_text())
        if d and d["kind"] == "Deployment"
    }
    boutique = get_system("onlineboutique")
    for incident in plan_incidents(load_manifest(REPO / "campaigns" / "smoke.yaml")):
        obj = render_chaos(incident, _NAMESPACE, boutique.topology)
        if obj["kind"] in (CONFIG_FAULT_KIND, FLAG_FAULT_KIND):
            continue
        selector = obj["spec"]["selector"]
        assert list(selector["labelSelectors"]) == ["app"]
        assert _selected(selector, pods) == {selector["labelSelectors"]["app"]}
