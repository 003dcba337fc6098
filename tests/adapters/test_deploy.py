"""deploy/: scripts pass shellcheck, versions and the namespace are defined in one place and
the pieces agree, and up.sh checks its prerequisites and upgrades CRDs explicitly.

up.sh runs here against stand-ins for docker, kind, kubectl, helm and curl that log their
arguments (and what was piped to them), so its order of operations and its refusals are
tested without a cluster.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from r2act.campaigns import load_manifest
from r2act.cluster.base import OPT_IN_LABEL

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SCRIPTS = [
    DEPLOY / "kind" / "up.sh",
    DEPLOY / "kind" / "down.sh",
    DEPLOY / "render-rbac.sh",
    DEPLOY / "loadgenerator" / "apply.sh",
]


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


def _render(namespace: str | None = None, cwd: Path | None = None) -> str:
    args = [str(DEPLOY / "render-rbac.sh"), *([namespace] if namespace else [])]
    return subprocess.run(
        args, capture_output=True, text=True, check=True, timeout=30, cwd=cwd
    ).stdout


def test_rbac_renders_for_another_namespace_and_names_boutique_nowhere(tmp_path: Path) -> None:
    text = _render("chaos-lab", cwd=tmp_path)  # from any directory
    assert "boutique" not in text
    docs = [d for d in yaml.safe_load_all(text) if d]
    assert [d["kind"] for d in docs] == [
        "ServiceAccount",
        "Role",
        "RoleBinding",
        "ClusterRole",
        "ClusterRoleBinding",
    ]
    for doc in docs:
        if doc["kind"].startswith("Cluster"):
            assert "namespace" not in doc["metadata"]
            assert doc["metadata"]["name"] == "r2act-namespace-chaos-lab"
        else:
            assert doc["metadata"]["namespace"] == "chaos-lab"
        for subject in doc.get("subjects", []):
            assert subject["namespace"] == "chaos-lab"
    cluster_role = next(d for d in docs if d["kind"] == "ClusterRole")
    assert cluster_role["rules"][0]["resourceNames"] == ["chaos-lab"]


def test_rbac_renders_for_the_versions_env_namespace_by_default() -> None:
    assert _render() == _render(_versions()["R2ACT_NAMESPACE"])


@pytest.mark.parametrize("bad", ["Boutique", "a_b", "ns\nkind: Secret", "-x", "a" * 64])
def test_rbac_render_refuses_a_name_that_is_not_a_namespace(bad: str) -> None:
    done = subprocess.run(
        [str(DEPLOY / "render-rbac.sh"), bad], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "is not a namespace name" in done.stderr


def test_the_node_image_is_pinned_by_tag_and_digest() -> None:
    image = _versions()["KIND_NODE_IMAGE"]
    assert re.fullmatch(r"kindest/node:v\d+\.\d+\.\d+@sha256:[0-9a-f]{64}", image), image


FAKE_TOOL = r"""#!/usr/bin/env bash
# A stand-in that logs its call (and its stdin when it reads '-f -') and answers like the tool.
log="$FAKE_LOG"
tool="$(basename "$0")"
echo "$tool $*" >>"$log"
case "$tool $*" in
  "kind version"*) echo "kind v${FAKE_KIND:-0.27.0} go1.23.6 linux/amd64" ;;
  "kind get clusters"*) ;;
  "helm version"*) echo "v${FAKE_HELM:-3.17.1}+g980d8ac" ;;
  "helm show crds"*)
    printf 'apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
---
'
    printf 'apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
' ;;
  "kubectl version"*)
    printf '{"clientVersion": {"major": "1", "gitVersion": "v%s"}}
' "${FAKE_KUBECTL:-1.32.2}" ;;
  *"create namespace"*) echo "apiVersion: v1" ;;
  *"get --raw"*jaeger*) echo '{"data":["checkoutservice","frontend"]}' ;;
  *" -f -"*) { echo "--- stdin of: $tool $*"; cat; } >>"$FAKE_LOG.stdin" ;;
esac
exit 0
"""


@dataclass
class Bed:
    """A copy of deploy/ and the demo campaign, and stand-in tools on PATH."""

    root: Path
    env: dict[str, str]

    def up(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.root / "deploy" / "kind" / "up.sh"), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env={**self.env, **env},
        )

    def calls(self) -> list[str]:
        return (self.root / "calls.log").read_text().splitlines()

    def stdin(self) -> str:
        return (self.root / "calls.log.stdin").read_text()


@pytest.fixture
def bed(tmp_path: Path) -> Bed:
    shutil.copytree(DEPLOY, tmp_path / "deploy")
    (tmp_path / "campaigns").mkdir()
    shutil.copy(DEPLOY.parent / "campaigns" / "kind-demo.yaml", tmp_path / "campaigns")
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("docker", "kind", "kubectl", "helm", "curl"):
        (tools / name).write_text(FAKE_TOOL)
        (tools / name).chmod(0o755)
    modules = tmp_path / "sys-module"
    (modules / "sch_netem").mkdir(parents=True)
    env = {
        "PATH": f"{tools}:/usr/bin:/bin",
        "FAKE_LOG": str(tmp_path / "calls.log"),
        "R2ACT_SYS_MODULE_DIR": str(modules),
        "R2ACT_MODULES_BUILTIN": str(tmp_path / "modules.builtin"),
    }
    return Bed(root=tmp_path, env=env)


def test_up_applies_each_charts_crds_server_side_before_upgrading_it(bed: Bed) -> None:
    done = bed.up()
    assert done.returncode == 0, done.stdout + done.stderr
    calls = bed.calls()
    versions = _versions()
    for chart, release, version in (
        ("chaos-mesh/chaos-mesh", "chaos-mesh", versions["CHAOS_MESH_CHART_VERSION"]),
        (
            "prometheus-community/kube-prometheus-stack",
            "kps",
            versions["KUBE_PROMETHEUS_STACK_CHART_VERSION"],
        ),
    ):
        show = calls.index(f"helm show crds {chart} --version {version}")
        assert calls[show + 1] == (
            "kubectl --context kind-r2act apply --server-side --force-conflicts -f -"
        )
        upgrade = next(
            i for i, c in enumerate(calls) if c.startswith(f"helm upgrade --install {release} ")
        )
        assert show < upgrade and "--skip-crds" in calls[upgrade].split()
    kps = next(c for c in calls if c.startswith("helm upgrade --install kps "))
    assert "nodeExporter.enabled=false" in kps.split()
    assert "kind create cluster --name r2act --image " + versions["KIND_NODE_IMAGE"] in " ".join(
        calls
    )


def test_up_applies_the_rbac_rendered_for_the_versions_env_namespace(bed: Bed) -> None:
    versions = bed.root / "deploy" / "versions.env"
    versions.write_text(versions.read_text().replace('"boutique"', '"chaos-lab"'))
    campaign = bed.root / "campaigns" / "kind-demo.yaml"
    campaign.write_text(campaign.read_text().replace("namespace: boutique", "namespace: chaos-lab"))
    done = bed.up()
    assert done.returncode == 0, done.stdout + done.stderr
    piped = bed.stdin()
    rbac = piped[piped.index("r2act RBAC for namespace") :]
    assert "boutique" not in rbac and "namespace: chaos-lab" in rbac
    label = "label namespace chaos-lab r2act.io/chaos-allowed=true --overwrite"
    assert f"kubectl --context kind-r2act {label}" in bed.calls()


@pytest.mark.parametrize(
    ("env", "says"),
    [
        (
            {"FAKE_KIND": "0.20.0"},
            "kind 0.20.0 is too old for the pinned node image; install kind >= 0.27.0",
        ),
        ({"FAKE_HELM": "3.9.4"}, "helm 3.9.4 is too old; install helm >= 3.14.0"),
        ({"R2ACT_SYS_MODULE_DIR": "/nonexistent"}, "sudo modprobe sch_netem"),
    ],
)
def test_up_refuses_to_start_without_its_prerequisites(
    bed: Bed, env: dict[str, str], says: str
) -> None:
    done = bed.up(**env)
    assert done.returncode == 1
    assert says in done.stderr
    assert not [
        c for c in bed.calls() if c.startswith(("kind create", "helm upgrade", "kubectl --context"))
    ]


def test_up_accepts_a_built_in_sch_netem(bed: Bed) -> None:
    (bed.root / "modules.builtin").write_text("kernel/net/sched/sch_netem.ko\n")
    done = bed.up("--check", R2ACT_SYS_MODULE_DIR="/nonexistent")
    assert done.returncode == 0, done.stderr
    assert "prerequisites met" in done.stdout


def test_up_names_a_missing_tool(bed: Bed) -> None:
    (bed.root / "bin" / "helm").unlink()
    done = bed.up("--check")
    assert done.returncode == 1 and "helm is required" in done.stderr


def test_up_refuses_a_demo_campaign_for_another_namespace(bed: Bed) -> None:
    versions = bed.root / "deploy" / "versions.env"
    versions.write_text(versions.read_text().replace('"boutique"', '"chaos-lab"'))
    done = bed.up("--check")
    assert done.returncode == 1
    assert (
        "campaigns/kind-demo.yaml targets namespace 'boutique' but deploy/versions.env sets "
        'R2ACT_NAMESPACE="chaos-lab"'
    ) in done.stderr
    assert bed.calls()[-1] != "docker info"  # stopped before touching docker


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


@pytest.mark.parametrize("kubectl", ["1.31.0", "1.33.4"])
def test_up_accepts_kubectl_one_minor_version_away(bed: Bed, kubectl: str) -> None:
    done = bed.up("--check", FAKE_KUBECTL=kubectl)
    assert done.returncode == 0, done.stderr
    assert f"kubectl {kubectl}" in done.stdout


def _pinned(bed: Bed) -> Path:
    """A kubectl stand-in in the pinned cache that answers v1.32.2 and logs apart."""
    pinned = bed.root / "cache" / _versions()["KUBECTL_VERSION"] / "kubectl"
    pinned.parent.mkdir(parents=True)
    fake = FAKE_TOOL.replace("${FAKE_KUBECTL:-1.32.2}", "1.32.2")
    pinned.write_text(fake.replace('echo "$tool $*" >>"$log"', 'echo "$tool $*" >>"$log.pinned"'))
    pinned.chmod(0o755)
    return pinned


@pytest.mark.parametrize("kubectl", ["1.35.0", "1.29.0"])
def test_up_warns_on_kubectl_outside_the_skew_and_uses_the_pinned_one(
    bed: Bed, kubectl: str
) -> None:
    """Issue 27 item 26: a laptop's kubectl newer than 1.33 is no reason to stop."""
    pinned = _pinned(bed)
    done = bed.up(FAKE_KUBECTL=kubectl, R2ACT_KUBECTL_CACHE=str(bed.root / "cache"))
    assert done.returncode == 0, done.stdout + done.stderr
    assert (
        f"warning: kubectl {kubectl} is more than one minor version away from the cluster's "
        "Kubernetes 1.32.2 (outside the skew policy); this script uses the pinned kubectl v1.32.2"
    ) in done.stderr
    assert f"kubectl 1.32.2 ({pinned})" in done.stdout
    used = (bed.root / "calls.log.pinned").read_text().splitlines()
    assert "kubectl --context kind-r2act apply --server-side --force-conflicts -f -" in used
    scoped = "kubectl --context kind-r2act --namespace boutique"  # the scripts up.sh runs too
    assert any(c.startswith(f"{scoped} create configmap r2act-loadgenerator") for c in used)
    assert not [c for c in bed.calls() if c.startswith("kubectl --context")]


def test_up_fetches_the_pinned_kubectl_and_stops_when_it_cannot(bed: Bed) -> None:
    done = bed.up("--check", FAKE_KUBECTL="1.35.0", R2ACT_KUBECTL_CACHE=str(bed.root / "cache"))
    assert done.returncode == 1
    assert "could not download the pinned kubectl from https://dl.k8s.io/release/v1.32.2/bin/" in (
        done.stderr
    )
    fetched = [c for c in bed.calls() if c.startswith("curl ")]
    assert fetched and "/release/v1.32.2/bin/" in fetched[0] and fetched[0].endswith("/kubectl")
    assert not [c for c in bed.calls() if c.startswith(("kind create", "helm upgrade"))]
    assert not list((bed.root / "cache").rglob("kubectl*"))  # no half download left


def test_up_gives_the_load_generator_a_connection_per_request(bed: Bed) -> None:
    """After Online Boutique's manifests and before waiting for them: the ConfigMap with
    r2act_load.py and the patch that runs it, in the opted-in namespace only."""
    done = bed.up()
    assert done.returncode == 0, done.stdout + done.stderr
    calls = bed.calls()
    scoped = "kubectl --context kind-r2act --namespace boutique"
    apply_ob = next(i for i, c in enumerate(calls) if "kubernetes-manifests.yaml" in c)
    configmap = calls.index(
        f"{scoped} create configmap r2act-loadgenerator --from-file="
        f"{bed.root}/deploy/loadgenerator/r2act_load.py --dry-run=client -o yaml"
    )
    patch = calls.index(
        f"{scoped} patch deployment loadgenerator --type strategic --patch-file "
        f"{bed.root}/deploy/loadgenerator/patch.yaml"
    )
    wait = next(i for i, c in enumerate(calls) if "wait deployment --all" in c)
    assert apply_ob < configmap < patch < wait


def test_the_load_generator_patch_fits_the_release_manifest(reference_dir: Path) -> None:
    """The patch names the release's container, runs the file where the ConfigMap mounts
    it, and the ConfigMap is the one apply.sh creates."""
    docs = yaml.safe_load_all(
        (reference_dir / "online-boutique" / "kubernetes-manifests.yaml").read_text()
    )
    release = next(
        d
        for d in docs
        if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "loadgenerator"
    )
    patch = yaml.safe_load((DEPLOY / "loadgenerator" / "patch.yaml").read_text())["spec"]
    container = patch["template"]["spec"]["containers"][0]
    assert container["name"] in [
        c["name"] for c in release["spec"]["template"]["spec"]["containers"]
    ]
    env = {e["name"]: e["value"] for e in container["env"]}
    (mount,) = container["volumeMounts"]
    assert env["LOCUST_LOCUSTFILE"] == f"{mount['mountPath']}/r2act_load.py"
    (volume,) = patch["template"]["spec"]["volumes"]
    assert volume["name"] == mount["name"]
    apply_sh = (DEPLOY / "loadgenerator" / "apply.sh").read_text()
    assert f"create configmap {volume['configMap']['name']} " in apply_sh
