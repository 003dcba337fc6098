"""deploy/tracing: Online Boutique's traces go to r2act's collector and Jaeger.

Checked against the pinned sources: the services apply.sh turns tracing on in are the
ones upstream's kustomize component does, with the same variables, and the source lines
it cites start an exporter; the images are the component's collector and the Jaeger the
Astronomy Shop's chart ships; the query service is where both systems declare it; the
README's memory budget is the sum of the limits. apply.sh runs against a stand-in kubectl
that logs its calls and what is piped to it (no cluster needed).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from test_deploy import FAKE_TOOL, Bed, bed  # noqa: F401 - bed is a fixture

from r2act.schema import memory_bytes
from r2act.systems import INSTALLED

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"
TRACING = DEPLOY / "tracing"
APPLY = TRACING / "apply.sh"
COMPONENT = "online-boutique/kustomize-v0.10.6/components/google-cloud-operations"
CHART = "opentelemetry-demo-chart-0.40.10"
MI = 1024 * 1024


def _versions() -> dict[str, str]:
    pairs = re.findall(r'^([A-Z0-9_]+)="([^"]*)"$', (DEPLOY / "versions.env").read_text(), re.M)
    return dict(pairs)


def _instrumented() -> list[str]:
    found = re.search(r"^INSTRUMENTED=\(\n(.*?)\n\)", APPLY.read_text(), re.M | re.S)
    assert found is not None, "apply.sh lists no INSTRUMENTED services"
    return found.group(1).split()


def _component_env(reference_dir: Path) -> dict[str, dict[str, str]]:
    """Per deployment the component patches: its server container's tracing variables."""
    kustomization = yaml.safe_load((reference_dir / COMPONENT / "kustomization.yaml").read_text())
    out: dict[str, dict[str, str]] = {}
    for entry in kustomization["patches"]:
        patch = yaml.safe_load(entry["patch"])
        (container,) = patch["spec"]["template"]["spec"]["containers"]
        assert container["name"] == "server"
        env = {e["name"]: e["value"] for e in container.get("env", []) if "value" in e}
        tracing = {k: v for k, v in env.items() if k in TRACING_VARS}
        if tracing.get("ENABLE_TRACING") == "1":
            out[patch["metadata"]["name"]] = tracing
    return out


TRACING_VARS = ("ENABLE_TRACING", "COLLECTOR_SERVICE_ADDR", "OTEL_SERVICE_NAME")


def _applied(tmp_path: Path) -> tuple[list[str], list[dict[str, Any]]]:
    """Run apply.sh against a stand-in kubectl: its calls and the objects piped to it."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "kubectl").write_text(FAKE_TOOL)
    (tools / "kubectl").chmod(0o755)
    log = tmp_path / "calls.log"
    done = subprocess.run(
        [str(APPLY), "kind-r2act", "shop-ns"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={"PATH": f"{tools}:/usr/bin:/bin", "FAKE_LOG": str(log)},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    piped = Path(f"{log}.stdin").read_text()
    assert "${" not in re.sub(r"\$\{env:", "", piped), "a placeholder was left unrendered"
    body = "\n".join(
        "---" if line.startswith("--- stdin of") else line for line in piped.splitlines()
    )
    objects = [d for d in yaml.safe_load_all(body) if d]
    return log.read_text().splitlines(), objects


def _named(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name)


def test_apply_passes_shellcheck_and_is_strict_executable_bash() -> None:
    text = APPLY.read_text()
    assert text.startswith("#!/usr/bin/env bash\n") and "set -euo pipefail" in text
    assert APPLY.stat().st_mode & 0o111
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck not installed (Debian package 'shellcheck')")
    scripts = [APPLY, DEPLOY / "kind" / "up.sh", DEPLOY / "kind" / "lanes" / "up.sh"]
    found = subprocess.run(
        [shellcheck, "-x", *map(str, scripts)], capture_output=True, text=True, check=False
    )
    assert found.returncode == 0, found.stdout + found.stderr


def test_tracing_is_turned_on_where_upstreams_component_turns_it_on(
    reference_dir: Path, tmp_path: Path
) -> None:
    component = _component_env(reference_dir)
    assert sorted(_instrumented()) == sorted(component)
    assert len(component) == 7 and not {"cartservice", "shippingservice", "adservice"} & set(
        component
    )
    calls, _objects = _applied(tmp_path)
    scoped = "kubectl --context kind-r2act --namespace shop-ns"
    for service, env in component.items():
        expected = " ".join(f"{k}={env[k]}" for k in TRACING_VARS)
        assert f"{scoped} set env deployment/{service} --containers=server {expected}" in calls
    assert all(c.startswith(scoped) for c in calls)  # nothing outside the namespace given


def test_the_cited_source_lines_start_an_exporter(reference_dir: Path) -> None:
    cited = re.findall(r"(\w+/[\w.]+\.(?:go|js|py))\s+(?:#\s*)?L(\d+)", APPLY.read_text())
    services = {path.split("/")[0] for path, _line in cited}
    assert services == set(_instrumented())
    for path, line in cited:
        text = (reference_dir / "online-boutique" / "src-v0.10.6" / path).read_text()
        assert "ENABLE_TRACING" in text.splitlines()[int(line) - 1], f"{path} L{line}"


def test_the_release_runs_each_instrumented_service_in_a_container_named_server(
    reference_dir: Path,
) -> None:
    docs = yaml.safe_load_all(
        (reference_dir / "online-boutique" / "kubernetes-manifests.yaml").read_text()
    )
    containers = {
        d["metadata"]["name"]: [c["name"] for c in d["spec"]["template"]["spec"]["containers"]]
        for d in docs
        if d and d["kind"] == "Deployment"
    }
    for service in _instrumented():
        assert "server" in containers[service], service


def test_images_are_the_components_collector_and_the_charts_jaeger(
    reference_dir: Path, tmp_path: Path
) -> None:
    versions = _versions()
    upstream = (reference_dir / COMPONENT / "otel-collector.yaml").read_text()
    (image,) = re.findall(r"image: (otel/opentelemetry-collector-contrib:\S+)", upstream)
    assert versions["OTEL_COLLECTOR_IMAGE"] == image and "@sha256:" in image
    rendered = reference_dir / CHART / "examples/default/rendered/jaeger/jaeger/jaeger-deploy.yaml"
    (jaeger,) = re.findall(r"image: (jaegertracing/jaeger:\S+)", rendered.read_text())
    assert versions["JAEGER_IMAGE"] == jaeger
    chart = yaml.safe_load((reference_dir / CHART / "values.yaml").read_text())
    max_traces = {e["name"]: e["value"] for e in chart["jaeger"]["jaeger"]["extraEnv"]}
    assert versions["JAEGER_MAX_TRACES"] == max_traces["MEMORY_MAX_TRACES"]

    _calls, objects = _applied(tmp_path)
    images = {
        o["metadata"]["name"]: o["spec"]["template"]["spec"]["containers"][0]["image"]
        for o in objects
        if o["kind"] == "Deployment"
    }
    assert images == {"jaeger": jaeger, "opentelemetrycollector": image}
    config = yaml.safe_load(_named(objects, "ConfigMap", "jaeger-config")["data"]["config.yaml"])
    memory = config["extensions"]["jaeger_storage"]["backends"]["memory_backend"]["memory"]
    assert str(memory["max_traces"]) == versions["JAEGER_MAX_TRACES"]


def test_spans_flow_from_the_services_through_the_collector_to_the_declared_store(
    tmp_path: Path,
) -> None:
    _calls, objects = _applied(tmp_path)
    collector_addr = re.search(r'^COLLECTOR_ADDR="([^"]+)"', APPLY.read_text(), re.M)
    assert collector_addr is not None
    host, port = collector_addr.group(1).split(":")
    collector = _named(objects, "Service", host)
    assert int(port) in [p["port"] for p in collector["spec"]["ports"]]
    config = yaml.safe_load(
        _named(objects, "ConfigMap", "opentelemetrycollector-config")["data"]["config.yaml"]
    )
    assert config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"].endswith(f":{port}")
    (exporter,) = config["service"]["pipelines"]["traces"]["exporters"]
    jaeger_host, jaeger_port = config["exporters"][exporter]["endpoint"].split(":")
    jaeger_service = _named(objects, "Service", jaeger_host)
    ports = {p["name"]: p["port"] for p in jaeger_service["spec"]["ports"]}
    assert ports["otlp-grpc"] == int(jaeger_port)
    store = INSTALLED["onlineboutique"].trace_store
    assert store is not None
    assert store.service == jaeger_host and ports["http-query"] == store.port
    jaeger_config = yaml.safe_load(
        _named(objects, "ConfigMap", "jaeger-config")["data"]["config.yaml"]
    )
    assert jaeger_config["extensions"]["jaeger_query"]["base_path"] == store.base_path
    receiver = jaeger_config["receivers"]["otlp"]["protocols"]["grpc"]["endpoint"]
    assert receiver.endswith(f":{jaeger_port}")
    # the Service selects the pods the Deployments run
    for name in (host, jaeger_host):
        deployment = _named(objects, "Deployment", name)
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        selector = _named(objects, "Service", name)["spec"]["selector"]
        assert selector.items() <= labels.items()


def test_the_astronomy_shops_declared_store_is_the_charts_jaeger(reference_dir: Path) -> None:
    chart = reference_dir / CHART
    values = yaml.safe_load((chart / "values.yaml").read_text())
    ours = yaml.safe_load((DEPLOY / "astronomyshop" / "values.yaml").read_text())
    store = INSTALLED["astronomyshop"].trace_store
    assert store is not None and ours["jaeger"]["enabled"] is True
    assert store.service == values["jaeger"]["fullnameOverride"]
    query = values["jaeger"]["userconfig"]["extensions"]["jaeger_query"]
    assert store.base_path == query["base_path"]
    assert "base_path" not in str(ours["jaeger"])  # r2act's values leave the base path alone
    service = yaml.safe_load(
        (chart / "examples/default/rendered/jaeger/jaeger/jaeger-service.yaml").read_text()
    )
    ports = {p["name"]: p["port"] for p in service["spec"]["ports"]}
    assert service["metadata"]["name"] == store.service and ports["http-query"] == store.port
    pipelines = ours["opentelemetry-collector"]["config"]["service"]["pipelines"]
    assert "otlp/jaeger" in pipelines["traces"]["exporters"]


def test_readme_memory_budget_is_the_sum_of_the_limits(reference_dir: Path, tmp_path: Path) -> None:
    text = (DEPLOY / "README.md").read_text()
    section = text[text.index("**Memory budget**") :]
    section = section[: section.index("\n### ")]
    figures = [int(n.replace(",", "")) for n in re.findall(r"([\d,]+) Mi\b", section)]
    docs = yaml.safe_load_all(
        (reference_dir / "online-boutique" / "kubernetes-manifests.yaml").read_text()
    )
    boutique = sum(
        memory_bytes(c["resources"]["limits"]["memory"])
        for d in docs
        if d and d["kind"] == "Deployment"
        for c in d["spec"]["template"]["spec"]["containers"]
    )
    _calls, objects = _applied(tmp_path)
    limits = {
        o["metadata"]["name"]: memory_bytes(
            o["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"]["memory"]
        )
        for o in objects
        if o["kind"] == "Deployment"
    }
    chart = yaml.safe_load((reference_dir / CHART / "values.yaml").read_text())
    assert limits["opentelemetrycollector"] == memory_bytes(
        chart["opentelemetry-collector"]["resources"]["limits"]["memory"]
    )
    assert limits["jaeger"] == memory_bytes(
        chart["jaeger"]["jaeger"]["resources"]["limits"]["memory"]
    )
    tracing = sum(limits.values())
    assert figures[0] == boutique // MI
    assert tracing // MI in figures
    assert limits["opentelemetrycollector"] // MI in figures and limits["jaeger"] // MI in figures
    assert (boutique + tracing) // MI in figures


def test_up_turns_tracing_on_after_the_release_and_before_waiting(bed: Bed) -> None:  # noqa: F811
    done = bed.up()
    assert done.returncode == 0, done.stdout + done.stderr
    calls = bed.calls()
    scoped = "kubectl --context kind-r2act --namespace boutique"
    apply_ob = next(i for i, c in enumerate(calls) if "kubernetes-manifests.yaml" in c)
    traced = [i for i, c in enumerate(calls) if c.startswith(f"{scoped} set env deployment/")]
    wait = next(i for i, c in enumerate(calls) if "wait deployment --all" in c)
    assert len(traced) == 7 and apply_ob < min(traced) and max(traced) < wait
    assert any("services/jaeger:16686/proxy/jaeger/ui/api/services" in c for c in calls[wait:])
    assert "kind: Deployment" in bed.stdin() and "name: jaeger" in bed.stdin()
