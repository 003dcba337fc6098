"""End to end on the Astronomy Shop's kind cluster made by deploy/astronomyshop/kind/up.sh
(opt-in: --with-e2e; skipped otherwise, like tests/e2e/test_kind_demo.py).

Checks that what r2act's topology says is what runs: every Deployment of the topology is
Available in the opted-in namespace with the chart's images, the entry point answers
through the API server's service proxy, Jaeger holds the frontend's traces and the
collector prints log records on its stdout (values.yaml's logs pipeline).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from r2act.systems.astronomyshop import ASTRONOMY_SHOP, IMAGES

pytestmark = pytest.mark.e2e

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def _versions() -> dict[str, str]:
    pairs = re.findall(r'^([A-Z0-9_]+)="([^"]*)"$', (DEPLOY / "versions.env").read_text(), re.M)
    return dict(pairs)


def _kubectl(context: str, *args: str) -> str:
    done = subprocess.run(
        ["kubectl", "--context", context, *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def _require_cluster(context: str) -> None:
    if shutil.which("kubectl") is None:
        pytest.fail("kubectl is not installed; see deploy/astronomyshop/README.md")
    found = subprocess.run(
        ["kubectl", "config", "get-contexts", "-o", "name"],
        capture_output=True,
        text=True,
        check=False,
    )
    if context not in found.stdout.split():
        pytest.fail(
            f"no kubeconfig context {context}; create it with deploy/astronomyshop/kind/up.sh"
        )


def test_the_astronomy_shop_runs_as_its_topology_says_on_kind() -> None:
    versions = _versions()
    context = f"kind-{versions['ASTRONOMY_SHOP_KIND_CLUSTER_NAME']}"
    namespace = versions["ASTRONOMY_SHOP_NAMESPACE"]
    _require_cluster(context)

    labels = json.loads(_kubectl(context, "get", "namespace", namespace, "-o", "json"))
    assert labels["metadata"]["labels"].get("r2act.io/chaos-allowed") == "true"

    deployments = json.loads(_kubectl(context, "-n", namespace, "get", "deployments", "-o", "json"))
    running = {d["metadata"]["name"]: d for d in deployments["items"]}
    assert set(ASTRONOMY_SHOP.names) <= set(running)
    for name in ASTRONOMY_SHOP.names:
        status = running[name]["status"]
        assert status.get("availableReplicas", 0) >= 1, name
        main = running[name]["spec"]["template"]["spec"]["containers"][0]
        assert main["image"] == IMAGES[name], name

    proxy = f"/api/v1/namespaces/{namespace}/services"
    _kubectl(context, "get", "--raw", f"{proxy}/frontend-proxy:8080/proxy/")
    services = _kubectl(
        context, "get", "--raw", f"{proxy}/jaeger:16686/proxy/jaeger/ui/api/services"
    )
    assert "frontend" in json.loads(services)["data"]
    logs = _kubectl(
        context, "-n", namespace, "logs", "-l", "component=agent-collector", "--tail=-1"
    )
    assert "LogRecord #" in logs
