"""``parse.selected_pods``: which pods a Deployment's selector matches (the pods a fault's
restart is waited on)."""

from __future__ import annotations

from typing import Any

from r2act.cluster.kube.parse import selected_pods


def _pod(name: str, **labels: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels}}


def test_only_pods_carrying_every_selector_label_are_selected() -> None:
    deployment = {"spec": {"selector": {"matchLabels": {"app": "flagd", "tier": "x"}}}}
    pods = [
        _pod("a", app="flagd", tier="x"),
        _pod("b", app="flagd"),
        _pod("c", app="flagd", tier="x", extra="y"),
        _pod("d", app="cart", tier="x"),
        {"metadata": {"name": "e"}},
    ]
    assert [p["metadata"]["name"] for p in selected_pods(deployment, pods)] == ["a", "c"]


def test_a_deployment_without_match_labels_selects_nothing() -> None:
    pods = [_pod("a", app="flagd")]
    assert selected_pods({"spec": {"selector": {}}}, pods) == []
    assert selected_pods({}, pods) == []
