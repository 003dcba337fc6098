"""deploy/kind/lanes: N lanes, each Online Boutique pinned to its own tainted node."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from r2act.campaigns import load_manifest
from r2act.campaigns.lanes import lane_targets

LANES = Path(__file__).resolve().parents[2] / "deploy" / "kind" / "lanes"
SCRIPTS = [LANES / "up.sh", LANES / "down.sh"]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", str(LANES / "up.sh"), *args], capture_output=True, text=True, check=False
    )


def _nodes(lanes: int) -> list[dict[str, Any]]:
    done = _run("--print-config", str(lanes))
    assert done.returncode == 0, done.stderr
    config = yaml.safe_load(done.stdout)
    assert config["kind"] == "Cluster" and config["apiVersion"] == "kind.x-k8s.io/v1alpha4"
    nodes = []
    for node in config["nodes"]:
        taints = []
        for patch in node.get("kubeadmConfigPatches", []):
            taints += yaml.safe_load(patch)["nodeRegistration"]["taints"]
        nodes.append({"role": node["role"], "labels": node.get("labels", {}), "taints": taints})
    return nodes


def _schedulable(pod_spec: dict[str, Any], node: dict[str, Any]) -> bool:
    """The two scheduler predicates at stake: required node affinity and taint toleration."""
    if node["role"] == "control-plane":
        return False  # kind taints its control plane when there are workers
    terms = pod_spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    matches = any(
        all(
            node["labels"].get(e["key"]) in e["values"]
            for e in term["matchExpressions"]
            if e["operator"] == "In"
        )
        for term in terms["nodeSelectorTerms"]
    )
    tolerated = all(
        any(
            t["key"] == taint["key"]
            and t.get("value") == str(taint["value"])
            and t["effect"] == taint["effect"]
            for t in pod_spec["tolerations"]
        )
        for taint in node["taints"]
    )
    return matches and tolerated


@pytest.mark.parametrize("lanes", [1, 3, 4])
def test_every_lane_gets_its_own_tainted_node_and_an_infra_node_stays_free(lanes: int) -> None:
    nodes = _nodes(lanes)
    assert [n["role"] for n in nodes] == ["control-plane"] + ["worker"] * (lanes + 1)
    infra = [n for n in nodes if n["labels"].get("r2act.io/role") == "infra"]
    assert len(infra) == 1 and infra[0]["taints"] == []
    lane_nodes = [n for n in nodes if n["labels"].get("r2act.io/role") == "lane"]
    assert [n["labels"]["r2act.io/lane"] for n in lane_nodes] == [
        str(i) for i in range(1, lanes + 1)
    ]
    for node in lane_nodes:
        assert node["taints"] == [
            {
                "key": "r2act.io/lane",
                "value": node["labels"]["r2act.io/lane"],
                "effect": "NoSchedule",
            }
        ]


def test_a_lane_patch_schedules_its_pods_on_its_node_only() -> None:
    nodes = _nodes(4)
    for lane in range(1, 5):
        done = _run("--print-patch", str(lane))
        assert done.returncode == 0, done.stderr
        spec = json.loads(done.stdout)["spec"]["template"]["spec"]
        fits = [n["labels"].get("r2act.io/lane") for n in nodes if _schedulable(spec, n)]
        assert fits == [str(lane)]


def test_bad_lane_counts_are_refused_with_one_line() -> None:
    for bad in ("0", "17", "x"):
        done = _run("--print-config", bad)
        assert done.returncode == 1
        assert done.stderr.count("\n") == 1 and "LANES must be 1..16" in done.stderr


def test_the_example_campaign_names_the_lanes_up_sh_creates() -> None:
    manifest = load_manifest(LANES / "campaign.yaml")
    lanes = lane_targets(manifest.target)
    assert [lane.namespace for lane in lanes] == [f"boutique-lane-{i}" for i in range(1, 5)]
    versions = (LANES.parent.parent / "versions.env").read_text()
    cluster = next(
        line.split("=", 1)[1].strip('"')
        for line in versions.splitlines()
        if line.startswith("KIND_CLUSTER_NAME=")
    )
    assert {getattr(lane.target, "context", None) for lane in lanes} == {f"kind-{cluster}-lanes"}


def test_lane_scripts_pass_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (Debian package 'shellcheck')")
    found = subprocess.run(
        [shellcheck, "-x", *map(str, SCRIPTS)],
        capture_output=True, text=True, check=False, cwd=LANES.parent.parent.parent,
    )  # fmt: skip
    assert found.returncode == 0, found.stdout + found.stderr
    for script in SCRIPTS:
        assert script.read_text().startswith("#!/usr/bin/env bash\n")
        assert "set -euo pipefail" in script.read_text()
        assert script.stat().st_mode & 0o111
