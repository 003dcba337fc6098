"""deploy/: scripts pass shellcheck, versions are pinned in one place, the pieces agree."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from r2act.campaigns import load_manifest
from r2act.cluster.base import OPT_IN_LABEL

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SCRIPTS = [DEPLOY / "kind" / "up.sh", DEPLOY / "kind" / "down.sh"]


def _versions() -> dict[str, str]:
    pairs = re.findall(r'^([A-Z0-9_]+)="([^"]*)"$', (DEPLOY / "versions.env").read_text(), re.M)
    return dict(pairs)


def test_deploy_scripts_pass_shellcheck() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip(
            "shellcheck not installed (Debian package 'shellcheck'; scripts/test installs it)"
        )
    found = subprocess.run(
        [shellcheck, "-x", *map(str, SCRIPTS), str(DEPLOY / "versions.env")],
        capture_output=True,
        text=True,
        check=False,
        cwd=DEPLOY.parent,
    )
    assert found.returncode == 0, found.stdout + found.stderr


def test_scripts_are_executable_bash_with_strict_mode() -> None:
    for script in SCRIPTS:
        text = script.read_text()
        assert text.startswith("#!/usr/bin/env bash\n"), script
        assert "set -euo pipefail" in text, script
        assert script.stat().st_mode & 0o111, f"{script} is not executable"


def test_versions_are_pinned_only_in_versions_env() -> None:
    versions = _versions()
    pinned = {
        versions[k]
        for k in (
            "ONLINE_BOUTIQUE_VERSION",
            "CHAOS_MESH_CHART_VERSION",
            "KUBE_PROMETHEUS_STACK_CHART_VERSION",
            "KIND_NODE_IMAGE",
        )
    }
    assert versions["ONLINE_BOUTIQUE_VERSION"] == "v0.10.6"
    assert versions["CHAOS_MESH_CHART_VERSION"] == "2.8.3"
    for script in SCRIPTS:
        text = script.read_text()
        assert not [v for v in pinned if v in text], f"{script} hard-codes a version"


def test_up_opts_the_namespace_in_and_uses_containerd_for_chaos_mesh() -> None:
    text = (DEPLOY / "kind" / "up.sh").read_text()
    assert f"{OPT_IN_LABEL}=true" in text
    assert "chaosDaemon.runtime=containerd" in text
    assert 'chaosDaemon.socketPath="$CONTAINERD_SOCKET"' in text
    assert "r2act collect campaigns/kind-demo.yaml" in text


def test_kind_maps_the_prometheus_node_port_the_chart_is_given() -> None:
    versions = _versions()
    cluster = yaml.safe_load((DEPLOY / "kind" / "cluster.yaml").read_text())
    mappings = [m for node in cluster["nodes"] for m in node.get("extraPortMappings", [])]
    assert [(str(m["containerPort"]), m["hostPort"]) for m in mappings] == [
        (versions["PROMETHEUS_NODE_PORT"], int(versions["PROMETHEUS_URL"].rsplit(":", 1)[1]))
    ]


def test_kind_demo_campaign_targets_the_kind_namespace() -> None:
    manifest = load_manifest(DEPLOY.parent / "campaigns" / "kind-demo.yaml")
    versions = _versions()
    assert manifest.target.kind == "kubernetes"
    assert manifest.target.context == f"kind-{versions['KIND_CLUSTER_NAME']}"  # type: ignore[union-attr]
    assert manifest.namespace == versions["R2ACT_NAMESPACE"]
    rbac = list(yaml.safe_load_all((DEPLOY / "rbac.yaml").read_text()))
    assert {d["metadata"].get("namespace") for d in rbac if d["kind"] != "ClusterRole"} <= {
        manifest.namespace,
        None,
    }


@pytest.mark.parametrize(
    ("kind_script", "code", "says"),
    [
        ("echo 'ERROR: failed to list clusters' >&2; exit 1", 1, "is Docker running?"),
        ("echo 'No kind clusters found.' >&2; exit 0", 0, "nothing to do"),
    ],
)
def test_down_tells_a_failing_kind_from_a_missing_cluster(
    tmp_path: Path, kind_script: str, code: int, says: str
) -> None:
    fake = tmp_path / "kind"
    fake.write_text(f"#!/bin/sh\n{kind_script}\n")
    fake.chmod(0o755)
    done = subprocess.run(
        [str(DEPLOY / "kind" / "down.sh")],
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": f"{tmp_path}:/usr/bin:/bin"},
    )
    assert done.returncode == code, done.stdout + done.stderr
    assert says in done.stdout + done.stderr
