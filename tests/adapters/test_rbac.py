"""deploy/rbac.yaml, rendered for a namespace, grants exactly REQUIRED_PERMISSIONS there, and
the adapter uses nothing else."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

import yaml
from kube_harness import NS, Harness, chaos_for, plan, replicaset

from r2act.cluster.kube.api import REQUIRED_PERMISSIONS, Permission
from r2act.schema import FaultType, TimeWindow

RENDER = Path(__file__).resolve().parents[2] / "deploy" / "render-rbac.sh"
_NAMESPACED = re.compile(
    r"^/(?:api/v1|apis/(?P<group>[^/]+)/[^/]+)/namespaces/(?P<ns>[^/]+)"
    r"(?:/(?P<plural>[^/]+)(?:/(?P<name>[^/]+)(?:/(?P<sub>[^/]+).*)?)?)?$"
)
_VERBS = {"POST": "create", "PATCH": "patch", "DELETE": "delete", "PUT": "update"}


def rendered(namespace: str) -> list[dict[str, Any]]:
    """The RBAC documents deploy/render-rbac.sh prints for ``namespace`` (what up.sh applies)."""
    done = subprocess.run(
        [str(RENDER), namespace], capture_output=True, text=True, check=True, timeout=30
    )
    return [d for d in yaml.safe_load_all(done.stdout) if d]


def _granted() -> set[Permission]:
    docs = rendered(NS)
    out: set[Permission] = set()
    for doc in docs:
        if doc["kind"] not in ("Role", "ClusterRole"):
            continue
        cluster = doc["kind"] == "ClusterRole"
        if not cluster:
            assert doc["metadata"]["namespace"] == NS
        for rule in doc["rules"]:
            if cluster:  # only ever the one namespace object, by name
                assert rule["resources"] == ["namespaces"]
                assert rule["resourceNames"] == [NS]
            for group in rule["apiGroups"]:
                for resource in rule["resources"]:
                    for verb in rule["verbs"]:
                        out.add(Permission(group, resource, verb, cluster))
    return out


def test_rbac_manifest_grants_exactly_the_required_permissions() -> None:
    assert _granted() == set(REQUIRED_PERMISSIONS)


def test_rbac_bindings_bind_the_r2act_service_account_only() -> None:
    docs = rendered(NS)
    bindings = [d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    assert len(bindings) == 2
    for binding in bindings:
        assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "r2act", "namespace": NS}]
    accounts = [d for d in docs if d["kind"] == "ServiceAccount"]
    assert [a["metadata"]["namespace"] for a in accounts] == [NS]


def _permission(method: str, path: str) -> Permission:
    found = _NAMESPACED.match(path)
    assert found is not None, path
    assert found["ns"] == NS, f"request outside the namespace: {path}"
    group = found["group"] or ""
    if found["plural"] is None:
        assert method == "GET"
        return Permission("", "namespaces", "get", cluster_scoped=True)
    resource = found["plural"] + (f"/{found['sub']}" if found["sub"] else "")
    verb = ("get" if found["name"] else "list") if method == "GET" else _VERBS[method]
    return Permission(group, resource, verb)


def _workflow(harness: Harness) -> None:
    """Every adapter call, with one chaos object of each kind."""
    harness.put("apps/v1/replicasets", replicaset(1, "registry/cartservice:v0.10.5"))
    harness.put("apps/v1/replicasets", replicaset(2, "registry/cartservice:v0.10.6"))
    cluster = harness.cluster()
    cluster.preflight({})
    cluster.health()
    window = TimeWindow(harness.clock.now() - 60, harness.clock.now())
    list(cluster.logs(window))
    cluster.events(window)
    cluster.state()
    faults = [
        FaultType.POD_FAILURE,
        FaultType.CPU_SATURATION,
        FaultType.NETWORK_DELAY,
        FaultType.HTTP_ERROR,
        FaultType.DNS_FAULT,
    ]
    refs = [cluster.inject(chaos_for(f)) for f in faults]
    # DNSChaos is still injectable (no shipped cell renders it: DNS cells are ConfigFaults)
    dns = {
        "apiVersion": "chaos-mesh.org/v1alpha1",
        "kind": "DNSChaos",
        "metadata": {"name": "r2act-dns-raw0000000", "namespace": NS},
        "spec": {
            "action": "error",
            "mode": "all",
            "patterns": ["cartservice"],
            "selector": {"namespaces": [NS], "labelSelectors": {"app": "frontend"}},
        },
    }
    refs.append(cluster.inject(dns))
    for ref in refs:
        cluster.injection_confirmed(ref)
    plans: list[dict[str, Any]] = [
        {"operation": "restart_service", "target": "cartservice"},
        {"operation": "scale_out", "target": "cartservice", "replicas": 2},
        {"operation": "increase_memory_limit", "target": "cartservice", "memory_limit": "1Gi"},
        {"operation": "rollback_deployment", "target": "cartservice"},
        {
            "operation": "repair_dependency",
            "target": "cartservice",
            "dependency": "cartservice:7070",
        },
    ]
    for fields in plans:
        cluster.undo(cluster.apply_plan(plan(**fields)))
    for ref in refs:
        cluster.remove(ref)
    cluster.leftovers()


def test_every_request_the_adapter_sends_is_granted_and_every_grant_is_used(
    harness: Harness,
) -> None:
    _workflow(harness)
    used = {_permission(r.method.value.upper(), r.url.path) for r in harness.requests()}
    assert used <= set(REQUIRED_PERMISSIONS), used - set(REQUIRED_PERMISSIONS)
    assert set(REQUIRED_PERMISSIONS) <= used, set(REQUIRED_PERMISSIONS) - used


def test_flag_grants_are_asked_only_for_a_campaign_with_flag_faults(harness: Harness) -> None:
    from r2act.cluster.kube.api import FLAG_FAULT_PERMISSIONS, required_permissions
    from r2act.systems import get_system

    boutique = required_permissions(get_system("onlineboutique").fault_types)
    assert boutique == REQUIRED_PERMISSIONS
    assert not any(p.resource == "configmaps" for p in boutique)
    flags = required_permissions([FaultType.POD_FAILURE, FaultType.FEATURE_FLAG])
    assert set(flags) == set(REQUIRED_PERMISSIONS) | set(FLAG_FAULT_PERMISSIONS)
    assert required_permissions([FaultType.FEATURE_FLAG]) == flags
    _workflow(harness)  # Online Boutique's every call stays inside its own grants
    used = {_permission(r.method.value.upper(), r.url.path) for r in harness.requests()}
    assert used <= set(boutique)
