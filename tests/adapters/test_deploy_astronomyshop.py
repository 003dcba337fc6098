"""deploy/astronomyshop: the values turn off exactly the bundled Prometheus, Grafana and
OpenSearch and keep the pipelines ending somewhere that exists, the chart is pinned, the
load generator sends no browser traffic, the RBAC grants the flag injector its two objects
and nothing cluster-wide, the scripts pass shellcheck, install.sh reinstalls the pulled
chart (and refuses a digest other than the pinned one), and the README's memory budget is
the sum of the chart's limits.

install.sh runs against stand-ins for helm and kubectl that log their arguments, so no
cluster and no helm binary is needed.
"""

from __future__ import annotations

import copy
import hashlib
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from r2act.cluster.base import OPT_IN_LABEL
from r2act.schema import memory_bytes

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
SHOP = DEPLOY / "astronomyshop"
SCRIPTS = [
    SHOP / "install.sh",
    SHOP / "render-rbac.sh",
    SHOP / "kind" / "up.sh",
    SHOP / "kind" / "down.sh",
]
CHART = "opentelemetry-demo-chart-0.40.10"
BUNDLED_OFF = {"prometheus", "grafana", "opensearch"}


def _versions() -> dict[str, str]:
    pairs = re.findall(r'^([A-Z0-9_]+)="([^"]*)"$', (DEPLOY / "versions.env").read_text(), re.M)
    return dict(pairs)


def _ours() -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load((SHOP / "values.yaml").read_text())
    return values


@pytest.fixture(scope="module")
def chart(reference_dir: Path) -> Path:
    path = reference_dir / CHART
    if not (path / "values.yaml").is_file():
        pytest.skip(f"{path}/values.yaml is missing; set R2ACT_REFERENCE_DIR")
    return path


@pytest.fixture(scope="module")
def chart_values(chart: Path) -> dict[str, Any]:
    values: dict[str, Any] = yaml.safe_load((chart / "values.yaml").read_text())
    return values


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    """Helm's coalescing of a values file over the chart's: maps merge key by key, lists
    and scalars replace, and null deletes the key."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = copy.deepcopy(value)
    return out


@pytest.fixture(scope="module")
def merged(chart_values: dict[str, Any]) -> dict[str, Any]:
    return _merge(chart_values, _ours())


def test_values_turn_off_exactly_the_bundled_prometheus_grafana_and_opensearch(
    chart_values: dict[str, Any], merged: dict[str, Any]
) -> None:
    subcharts = {k for k, v in chart_values.items() if isinstance(v, dict) and "enabled" in v}
    assert {k for k in subcharts if chart_values[k]["enabled"]} >= BUNDLED_OFF
    assert {k for k in subcharts if not merged[k]["enabled"]} == BUNDLED_OFF
    assert merged["jaeger"]["enabled"] is True
    assert merged["opentelemetry-collector"]["enabled"] is True
    components = merged["components"]
    assert all(c["enabled"] for c in components.values())
    assert set(components) == set(chart_values["components"])


def test_the_load_generator_sends_no_browser_traffic_and_nothing_else_changes(
    chart_values: dict[str, Any], merged: dict[str, Any]
) -> None:
    def env(values: dict[str, Any]) -> dict[str, str]:
        return {e["name"]: e["value"] for e in values["components"]["load-generator"]["env"]}

    theirs, ours = env(chart_values), env(merged)
    assert theirs["LOCUST_BROWSER_TRAFFIC_ENABLED"] == "true"
    assert ours["LOCUST_BROWSER_TRAFFIC_ENABLED"] == "false"
    assert {k: v for k, v in ours.items() if theirs.get(k) != v} == {
        "LOCUST_BROWSER_TRAFFIC_ENABLED": "false"
    }
    assert set(ours) == set(theirs)


def test_every_pipeline_ends_in_a_defined_exporter_and_none_in_a_disabled_backend(
    merged: dict[str, Any],
) -> None:
    config = merged["opentelemetry-collector"]["config"]
    exporters = config["exporters"]
    connectors = set(config.get("connectors", {}))
    pipelines = config["service"]["pipelines"]
    for name, pipeline in pipelines.items():
        for exporter in pipeline["exporters"]:
            assert exporter in set(exporters) | connectors, (name, exporter)
    endpoints = [
        str(e.get("endpoint", e.get("http", {}).get("endpoint", "")))
        for e in exporters.values()
        if e
    ]
    assert not [e for e in endpoints if re.search(r"//(prometheus|opensearch)\b", e)]
    # traces go to the chart's Jaeger, whose Service the subchart names "jaeger"
    assert "otlp/jaeger" in pipelines["traces"]["exporters"]
    assert exporters["otlp/jaeger"]["endpoint"] == f"{merged['jaeger']['fullnameOverride']}:4317"
    # logs end on the collector's stdout, every record in full; nothing else prints there
    (logs,) = pipelines["logs"]["exporters"]
    assert logs.startswith("debug") and exporters[logs]["verbosity"] == "detailed"
    others = {e for n, p in pipelines.items() if n != "logs" for e in p["exporters"]}
    assert not [e for e in others if e.startswith("debug")]
    # nor does Jaeger read from the absent Prometheus (its Monitor tab's metrics backend)
    jaeger = yaml.safe_dump(merged["jaeger"]["userconfig"])
    assert "PROMETHEUS_ADDR" not in jaeger and "metrics_backend" not in jaeger
    # the spanmetrics connector still feeds a pipeline
    assert "spanmetrics" in pipelines["metrics"]["receivers"]


def test_the_chart_is_pinned_in_versions_env_and_matches_the_reference(chart: Path) -> None:
    versions = _versions()
    meta = yaml.safe_load((chart / "Chart.yaml").read_text())
    assert versions["ASTRONOMY_SHOP_CHART_VERSION"] == meta["version"] == "0.40.10"
    assert versions["ASTRONOMY_SHOP_VERSION"] == meta["appVersion"] == "2.2.0"
    assert versions["ASTRONOMY_SHOP_CHART"] == (
        "oci://ghcr.io/open-telemetry/opentelemetry-helm-charts/" + meta["name"]
    )
    digest = versions["ASTRONOMY_SHOP_CHART_DIGEST"]
    assert digest == "" or re.fullmatch(r"sha256:[0-9a-f]{64}", digest)
    assert re.fullmatch(r"[0-9a-f]{64}", versions["ASTRONOMY_SHOP_CHART_SHA256"])
    for script in SCRIPTS:
        text = script.read_text()
        assert "0.40.10" not in text and "ghcr.io" not in text, f"{script} hard-codes a pin"
    install = (SHOP / "install.sh").read_text()
    assert '--version "$ASTRONOMY_SHOP_CHART_VERSION"' in install
    code = [line for line in install.splitlines() if not line.lstrip().startswith("#")]
    assert not [line for line in code if "helm upgrade" in line]


def test_scripts_pass_shellcheck_and_are_strict_bash() -> None:
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (Debian package 'shellcheck')")
    found = subprocess.run(
        [shellcheck, "-x", *map(str, SCRIPTS), str(DEPLOY / "versions.env")],
        capture_output=True,
        text=True,
        check=False,
        cwd=DEPLOY.parent,
    )
    assert found.returncode == 0, found.stdout + found.stderr
    for script in SCRIPTS:
        text = script.read_text()
        assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
        assert script.stat().st_mode & 0o111, f"{script} is not executable"


def _render(namespace: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [str(SHOP / "render-rbac.sh"), namespace],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def test_rbac_grants_the_flag_injector_its_two_objects_and_nothing_cluster_wide() -> None:
    docs = _render("chaos-lab")
    flags = [d for d in docs if d["metadata"]["name"] == "r2act-flags"]
    assert [d["kind"] for d in flags] == ["Role", "RoleBinding"]
    role = flags[0]
    assert role["metadata"]["namespace"] == "chaos-lab"
    granted = {
        (group, resource, name, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for name in rule["resourceNames"]
        for verb in rule["verbs"]
    }
    assert granted == {
        ("", "configmaps", "flagd-config", "get"),
        ("", "configmaps", "flagd-config", "patch"),
        ("apps", "deployments", "flagd", "get"),
        ("apps", "deployments", "flagd", "patch"),
    }
    assert flags[1]["subjects"] == [
        {"kind": "ServiceAccount", "name": "r2act", "namespace": "chaos-lab"}
    ]
    # cluster-scoped: only the base's get on this namespace object
    cluster = [d for d in docs if d["kind"].startswith("Cluster")]
    assert [d["kind"] for d in cluster] == ["ClusterRole", "ClusterRoleBinding"]
    (rule,) = cluster[0]["rules"]
    assert (rule["resources"], rule["resourceNames"], rule["verbs"]) == (
        ["namespaces"],
        ["chaos-lab"],
        ["get"],
    )
    for doc in docs:
        if not doc["kind"].startswith("Cluster"):
            assert doc["metadata"]["namespace"] == "chaos-lab"


def test_rbac_names_the_objects_the_chart_creates(chart: Path) -> None:
    rendered = chart / "examples" / "bring-your-own-observability" / "rendered"
    configmap = yaml.safe_load((rendered / "flagd-config.yaml").read_text())
    assert configmap["kind"] == "ConfigMap" and configmap["metadata"]["name"] == "flagd-config"
    assert "demo.flagd.json" in configmap["data"]
    flagd = next(
        d
        for d in yaml.safe_load_all((rendered / "component.yaml").read_text())
        if d and d["kind"] == "Deployment" and d["metadata"]["name"] == "flagd"
    )
    volumes = flagd["spec"]["template"]["spec"]["volumes"]
    assert {"name": "flagd-config"} in [v.get("configMap") for v in volumes]


def test_rbac_render_refuses_a_name_that_is_not_a_namespace() -> None:
    done = subprocess.run(
        [str(SHOP / "render-rbac.sh"), "Bad_Name"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "is not a namespace name" in done.stderr


def _budget_mi(values: dict[str, Any], nodes: int) -> int:
    """Memory limits of what the values deploy, in Mi: every enabled component's main and
    sidecar containers, Jaeger, the collector once per node, each enabled subchart."""
    total = 0
    for component in values["components"].values():
        if not component["enabled"]:
            continue
        containers = [component, *component.get("sidecarContainers", [])]
        for container in containers:
            limit = (container.get("resources") or {}).get("limits", {}).get("memory")
            total += memory_bytes(limit) if limit else 0
    total += memory_bytes(values["jaeger"]["jaeger"]["resources"]["limits"]["memory"])
    collector = values["opentelemetry-collector"]["resources"]["limits"]["memory"]
    total += nodes * memory_bytes(collector)
    for bundled in ("prometheus", "grafana", "opensearch"):
        if values[bundled]["enabled"]:
            block = values[bundled].get("server", values[bundled])
            total += memory_bytes(block["resources"]["limits"]["memory"])
    return total // 2**20


def test_readme_memory_budget_is_the_sum_of_the_chart_limits(
    chart_values: dict[str, Any], merged: dict[str, Any]
) -> None:
    cluster = yaml.safe_load((SHOP / "kind" / "cluster.yaml").read_text())
    workers = sum(1 for n in cluster["nodes"] if n["role"] == "worker")
    total = _budget_mi(merged, workers)
    readme = (SHOP / "README.md").read_text()
    stated = re.search(r"\*\*(\d+) Mi \((\d+\.\d\d) GiB\)\*\*", readme)
    assert stated is not None, "README.md states no '**N Mi (X.XX GiB)**' budget"
    assert int(stated.group(1)) == total
    assert stated.group(2) == f"{total / 1024:.2f}"
    assert f"200 Mi × {workers}" in readme
    # the facts' "about 6.0 GiB without Grafana and OpenSearch" is this plus the bundled
    # Prometheus with one collector
    # (shared/facts/astronomy-shop-traces-2026.md 1.9: demo components 4,600 Mi, flagd-ui
    # 250, collector 200 per node, Jaeger 600, Prometheus 400.)
    one_node = _budget_mi(_merge(merged, {"prometheus": {"enabled": True}}), 1)
    assert one_node == 4600 + 250 + 200 + 600 + 400


FAKE = r"""#!/usr/bin/env bash
echo "$(basename "$0") $*" >>"$FAKE_LOG"
case "$(basename "$0") $*" in
  "helm version"*) echo "v${FAKE_HELM:-3.17.1}+g980d8ac" ;;
  "helm pull"*)
    args="$*"; dest="${args##*--destination }"; dest="${dest%% *}"
    echo chart >"$dest/opentelemetry-demo-${FAKE_CHART_VERSION}.tgz"
    echo "Pulled: ghcr.io/x/opentelemetry-demo:${FAKE_CHART_VERSION}"
    echo "Digest: ${FAKE_DIGEST}" ;;
  "helm status"*) exit "${FAKE_STATUS:-1}" ;;
  "helm show crds"*) echo "kind: CustomResourceDefinition" ;;
  "kind version"*) echo "kind v${FAKE_KIND:-0.27.0} go1.23.6 linux/amd64" ;;
  *"get --raw"*jaeger*) echo '{"data":["frontend","checkout"]}' ;;
  *" logs "*) echo "LogRecord #0" ;;
  *"create namespace"*) echo "apiVersion: v1" ;;
  *" -f -"*) { echo "--- stdin of: $*"; cat; } >>"$FAKE_LOG.stdin" ;;
esac
exit 0
"""
DIGEST = "sha256:" + "ab" * 32
FAKE_ARCHIVE_SHA256 = hashlib.sha256(b"chart\n").hexdigest()
"""The SHA-256 of the archive the stand-in helm writes (``echo chart``)."""


@dataclass
class Bed:
    root: Path
    env: dict[str, str]

    def install(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(self.root / "deploy" / "astronomyshop" / "install.sh"), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
            env={**self.env, **env},
        )

    def calls(self) -> list[str]:
        return (self.root / "calls.log").read_text().splitlines()


@pytest.fixture
def bed(tmp_path: Path) -> Bed:
    shutil.copytree(DEPLOY, tmp_path / "deploy")
    _pin_archive(tmp_path, FAKE_ARCHIVE_SHA256)  # the stand-in's archive is the pinned one
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("helm", "kubectl", "kind", "docker", "curl"):
        (tools / name).write_text(FAKE)
        (tools / name).chmod(0o755)
    env = {
        "PATH": f"{tools}:/usr/bin:/bin",
        "FAKE_LOG": str(tmp_path / "calls.log"),
        "FAKE_CHART_VERSION": _versions()["ASTRONOMY_SHOP_CHART_VERSION"],
        "FAKE_DIGEST": DIGEST,
    }
    return Bed(root=tmp_path, env=env)


def _pin_archive(root: Path, sha256: str) -> None:
    versions = root / "deploy" / "versions.env"
    text, count = re.subn(
        r'^ASTRONOMY_SHOP_CHART_SHA256="[^"]*"$',
        f'ASTRONOMY_SHOP_CHART_SHA256="{sha256}"',
        versions.read_text(),
        flags=re.M,
    )
    assert count == 1
    versions.write_text(text)


def test_install_reinstalls_the_pulled_chart_in_the_opted_in_namespace(bed: Bed) -> None:
    done = bed.install("kind-x", FAKE_STATUS="0")  # a release exists
    assert done.returncode == 0, done.stdout + done.stderr
    calls = bed.calls()
    versions = _versions()
    ns, release = versions["ASTRONOMY_SHOP_NAMESPACE"], versions["ASTRONOMY_SHOP_RELEASE"]
    pull = next(i for i, c in enumerate(calls) if c.startswith("helm pull "))
    assert calls[pull].startswith(
        f"helm pull {versions['ASTRONOMY_SHOP_CHART']} --version "
        f"{versions['ASTRONOMY_SHOP_CHART_VERSION']} --destination "
    )
    label = calls.index(
        f"kubectl --context kind-x label namespace {ns} {OPT_IN_LABEL}=true --overwrite"
    )
    uninstall = next(i for i, c in enumerate(calls) if c.startswith(f"helm uninstall {release} "))
    install = next(i for i, c in enumerate(calls) if c.startswith(f"helm install {release} "))
    assert pull < label < uninstall < install
    words = calls[install].split()
    assert words[3].endswith(f"/opentelemetry-demo-{versions['ASTRONOMY_SHOP_CHART_VERSION']}.tgz")
    assert words[words.index("--values") + 1] == f"{bed.root}/deploy/astronomyshop/values.yaml"
    assert words[words.index("--namespace") + 1] == ns
    assert not [c for c in calls if c.startswith("helm upgrade")]
    rbac = (bed.root / "calls.log.stdin").read_text()
    assert "name: r2act-flags" in rbac and f"namespace: {ns}" in rbac
    assert f"digest {DIGEST} (not pinned" in done.stdout
    assert f"archive sha256 {FAKE_ARCHIVE_SHA256} (as pinned)" in done.stdout


def test_install_refuses_a_chart_archive_whose_sha256_is_not_the_pinned_one(bed: Bed) -> None:
    pinned = _versions()["ASTRONOMY_SHOP_CHART_SHA256"]  # the real chart's, not the stand-in's
    _pin_archive(bed.root, pinned)
    done = bed.install("kind-x")
    assert done.returncode == 1
    assert (
        f"the pulled chart archive's SHA-256 is '{FAKE_ARCHIVE_SHA256}', not "
        f'ASTRONOMY_SHOP_CHART_SHA256="{pinned}"' in done.stderr
    )
    assert not [c for c in bed.calls() if c.startswith(("helm install", "kubectl"))]


def test_install_says_when_the_archive_is_not_pinned(bed: Bed) -> None:
    _pin_archive(bed.root, "")
    done = bed.install("kind-x")
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"archive sha256 {FAKE_ARCHIVE_SHA256} (not pinned" in done.stdout


def test_install_without_a_release_only_installs(bed: Bed) -> None:
    done = bed.install("kind-x", "other-ns")
    assert done.returncode == 0, done.stdout + done.stderr
    assert not [c for c in bed.calls() if c.startswith("helm uninstall")]
    assert any(c.startswith("helm install ") and "--namespace other-ns" in c for c in bed.calls())


def test_install_refuses_a_chart_whose_digest_is_not_the_pinned_one(bed: Bed) -> None:
    versions = bed.root / "deploy" / "versions.env"
    pinned = "sha256:" + "cd" * 32
    versions.write_text(
        versions.read_text().replace(
            'ASTRONOMY_SHOP_CHART_DIGEST=""', f'ASTRONOMY_SHOP_CHART_DIGEST="{pinned}"'
        )
    )
    done = bed.install("kind-x")
    assert done.returncode == 1
    assert (
        f"the pulled chart's digest is '{DIGEST}', not ASTRONOMY_SHOP_CHART_DIGEST" in done.stderr
    )
    assert not [c for c in bed.calls() if c.startswith(("helm install", "kubectl"))]
    done = bed.install("kind-x", FAKE_DIGEST=pinned)
    assert done.returncode == 0 and f"digest {pinned} (as pinned)" in done.stdout


def test_install_needs_a_context_and_a_recent_helm(bed: Bed) -> None:
    done = bed.install()
    assert done.returncode == 2 and "usage: deploy/astronomyshop/install.sh CONTEXT" in done.stderr
    done = bed.install("kind-x", FAKE_HELM="3.9.0")
    assert done.returncode == 1 and "helm 3.9.0 is too old" in done.stderr


def _up(bed: Bed, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(bed.root / "deploy" / "astronomyshop" / "kind" / "up.sh"), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={**bed.env, **env},
    )


def test_kind_up_builds_its_own_cluster_then_prometheus_then_the_shop(bed: Bed) -> None:
    done = _up(bed)
    assert done.returncode == 0, done.stdout + done.stderr
    calls = bed.calls()
    versions = _versions()
    cluster = versions["ASTRONOMY_SHOP_KIND_CLUSTER_NAME"]
    context = f"kind-{cluster}"
    create = next(i for i, c in enumerate(calls) if c.startswith("kind create cluster"))
    assert f"--name {cluster} --image {versions['KIND_NODE_IMAGE']}" in calls[create]
    kps = next(i for i, c in enumerate(calls) if c.startswith("helm upgrade --install kps "))
    nodeport = versions["ASTRONOMY_SHOP_PROMETHEUS_NODE_PORT"]
    assert f"prometheus.service.nodePort={nodeport}" in calls[kps].split()
    install = next(i for i, c in enumerate(calls) if c.startswith("helm install "))
    assert f"--kube-context {context}" in calls[install]
    assert create < kps < install
    checks = [c for c in calls[install:] if "get --raw" in c or " logs " in c]
    assert any("frontend-proxy:8080/proxy/" in c for c in checks)
    assert any("jaeger:16686/proxy/jaeger/ui/api/services" in c for c in checks)
    assert any("-l component=agent-collector" in c for c in checks)
    # its Prometheus port is the one kind/cluster.yaml publishes
    kind = yaml.safe_load((SHOP / "kind" / "cluster.yaml").read_text())
    (mapping,) = [m for n in kind["nodes"] for m in n.get("extraPortMappings", [])]
    assert str(mapping["containerPort"]) == nodeport
    assert versions["ASTRONOMY_SHOP_PROMETHEUS_URL"].endswith(f":{mapping['hostPort']}")
    assert mapping["hostPort"] != int(versions["PROMETHEUS_URL"].rsplit(":", 1)[1])


def test_kind_up_check_stops_before_creating_anything(bed: Bed) -> None:
    done = _up(bed, "--check")
    assert done.returncode == 0 and "prerequisites met" in done.stdout
    done = _up(bed, FAKE_KIND="0.20.0")
    assert done.returncode == 1 and "kind 0.20.0 is too old" in done.stderr
    assert not [c for c in bed.calls() if c.startswith(("kind create", "helm "))]


def test_rbac_grants_every_permission_the_flag_injector_asks_for_on_its_objects() -> None:
    """The injector's own list (``FLAG_FAULT_PERMISSIONS``) and the shipped Role agree: each
    permission is granted on the ConfigMap and Deployment the shop's FlagFaults name, so a
    FlagFault on the installed shop is never answered 403."""
    from r2act.cluster.kube.api import FLAG_FAULT_PERMISSIONS
    from r2act.systems.astronomyshop.runtime import FLAG_CONFIG_MAP, FLAG_DEPLOYMENT

    role = next(d for d in _render("chaos-lab") if d["metadata"]["name"] == "r2act-flags")
    granted = {
        (group, resource, name, verb)
        for rule in role["rules"]
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for name in rule["resourceNames"]
        for verb in rule["verbs"]
    }
    objects = {"configmaps": FLAG_CONFIG_MAP, "deployments": FLAG_DEPLOYMENT}
    assert FLAG_FAULT_PERMISSIONS
    for perm in FLAG_FAULT_PERMISSIONS:
        assert not perm.cluster_scoped
        assert (perm.group, perm.resource, objects[perm.resource], perm.verb) in granted, perm
    # and the restart of flagd (a patch of its pod template) is granted on flagd alone
    assert ("apps", "deployments", FLAG_DEPLOYMENT, "patch") in granted
