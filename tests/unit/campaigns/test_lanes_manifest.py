"""Lanes in a manifest: lane targets, per-lane namespaces in queries and chaos objects."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import load_manifest
from r2act.campaigns.lanes import has_lanes, lane_targets, shared_nodes
from r2act.collector import plan_collection
from r2act.collector.lanes import lane_plan
from r2act.errors import ManifestError

KUBE = """\
name: lanes
system: onlineboutique
target:
  kind: kubernetes
  context: ctx
  namespace: shop-1
  lanes: [{namespace: shop-2}, {namespace: shop-3, context: other}]
services: [cartservice]
faults: [{type: pod_failure, intensities: [severe]}]
"""


def test_each_lane_gets_its_own_target_queries_and_chaos_namespace(
    write_manifest: Callable[[str], Path],
) -> None:
    path = write_manifest(KUBE)
    plan = plan_collection(path)
    lanes = lane_targets(plan.manifest.target)
    assert [(lane.name, lane.namespace) for lane in lanes] == [
        ("lane-1", "shop-1"), ("lane-2", "shop-2"), ("lane-3", "shop-3"),
    ]  # fmt: skip
    assert [lane.target.context for lane in lanes] == ["ctx", "ctx", "other"]
    assert all(not lane.target.lanes for lane in lanes)  # type: ignore[union-attr]
    for lane in lanes:
        own = lane_plan(plan, lane)
        assert own.manifest.namespace == lane.namespace
        queries = " ".join(own.manifest.metrics.queries.values())
        assert f'namespace="{lane.namespace}"' in queries
        assert all(
            f'namespace="{n}"' not in queries
            for n in ("shop-1", "shop-2", "shop-3")
            if n != lane.namespace
        )
        assert [i.chaos["metadata"]["namespace"] for i in own.items] == [lane.namespace]
        assert [i.incident for i in own.items] == [i.incident for i in plan.items]


def test_lane_declarations_are_checked(write_manifest: Callable[[str], Path]) -> None:
    assert has_lanes(load_manifest(write_manifest(KUBE)).target)
    single = KUBE.replace(
        "  lanes: [{namespace: shop-2}, {namespace: shop-3, context: other}]\n", ""
    )
    assert not has_lanes(load_manifest(write_manifest(single)).target)
    twice = KUBE.replace("{namespace: shop-3, context: other}", "{namespace: shop-1}")
    with pytest.raises(ManifestError, match=r"target\.lanes\[1\]: lane ctx/shop-1 is listed twice"):
        load_manifest(write_manifest(twice))
    sim = "target:\n  kind: sim\n  lanes: 0\n"
    text = KUBE.split("target:", maxsplit=1)[0] + sim + "services:" + KUBE.split("services:")[1]
    with pytest.raises(ManifestError, match="lanes"):
        load_manifest(write_manifest(text))


def test_shared_nodes_only_within_one_cluster() -> None:
    placement = {
        "lane-1": ("ctx", ["n1", "n2"]),
        "lane-2": ("ctx", ["n2"]),
        "lane-3": ("other", ["n1"]),
    }
    assert shared_nodes(placement) == [("lane-1", "lane-2", "n2")]
