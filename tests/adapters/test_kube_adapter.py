"""KubeCluster against kmock's Kubernetes emulator over real HTTP (see kube_harness.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kube_harness import (
    CHAOS,
    DEPLOY,
    NOW,
    NS,
    PODS,
    Harness,
    chaos_for,
    deployment,
    injected_status,
    plan,
    pod,
    replicaset,
    ts,
)

from r2act.campaigns import KubernetesTarget
from r2act.cluster.base import Cluster
from r2act.cluster.kube import KubeCluster, connect_kubernetes
from r2act.errors import (
    ConflictError,
    NotFoundError,
    PermanentClusterError,
    SafetyError,
    TransientClusterError,
)
from r2act.schema import ChaosRef, FaultType, TimeWindow


def test_kube_cluster_implements_the_cluster_protocol(harness: Harness) -> None:
    assert isinstance(harness.cluster(), Cluster)


# -- chaos objects -----------------------------------------------------------------------------


def test_inject_creates_the_chaos_object_labelled_as_r2act_in_the_namespace(
    harness: Harness,
) -> None:
    chaos = chaos_for(FaultType.POD_FAILURE)
    ref = harness.cluster().inject(chaos)

    stored = harness.get("chaos-mesh.org/v1alpha1/podchaos", chaos["metadata"]["name"])
    assert stored is not None
    assert stored["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "r2act"
    assert stored["metadata"]["labels"]["r2act.io/incident"] == ref.incident_id
    assert stored["spec"] == chaos["spec"]
    assert (ref.kind, ref.namespace) == ("PodChaos", NS)
    posts = [r for r in harness.writes() if r.method.value == "POST"]
    assert [r.url.path for r in posts] == [f"{CHAOS}/podchaos"]


def test_inject_twice_is_a_conflict(harness: Harness) -> None:
    cluster = harness.cluster()
    chaos = chaos_for(FaultType.CPU_SATURATION)
    cluster.inject(chaos)
    with pytest.raises(ConflictError):
        cluster.inject(chaos)


def test_a_create_whose_answer_was_lost_counts_as_created_on_retry(harness: Harness) -> None:
    # The emulator stores the object and then answers 500; the retry meets 409 with our own
    # object on the server, which must not fail the incident.
    chaos = chaos_for(FaultType.NETWORK_DELAY)
    harness.fail(f"post {CHAOS}/networkchaos", [500])
    ref = harness.cluster().inject(chaos)
    assert ref.name == chaos["metadata"]["name"]
    assert harness.count("POST", f"{CHAOS}/networkchaos") == 2


def test_status_reads_conditions_and_records_and_confirms_only_with_live_targets(
    harness: Harness,
) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(chaos_for(FaultType.POD_FAILURE))
    resource = "chaos-mesh.org/v1alpha1/podchaos"
    harness.update(resource, ref.name, status=injected_status(["cartservice-5f6b-fghij"]))

    status = cluster.chaos_status(ref)
    assert status.conditions == {"Selected": True, "AllInjected": True, "AllRecovered": False}
    assert status.desired_phase == "Run"
    assert [r.pod for r in status.records] == ["cartservice-5f6b-fghij"]
    assert cluster.injection_confirmed(ref)

    # Chaos Mesh keeps a deleted pod's record as Injected: that is not a confirmation.
    harness.update(resource, ref.name, status=injected_status(["cartservice-gone-zzzzz"]))
    assert cluster.chaos_status(ref).injected() is True
    assert not cluster.injection_confirmed(ref)


def test_status_of_a_missing_object_says_it_does_not_exist(harness: Harness) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(chaos_for(FaultType.POD_FAILURE))
    harness.vanish("chaos-mesh.org/v1alpha1/podchaos", ref.name)
    status = cluster.chaos_status(ref)
    assert not status.exists and status.recovered()


def test_remove_waits_for_the_finalizer_and_returns_once_the_object_is_gone(
    harness: Harness,
) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(chaos_for(FaultType.POD_FAILURE))
    resource = "chaos-mesh.org/v1alpha1/podchaos"
    harness.update(
        resource,
        ref.name,
        metadata={
            **harness.get(resource, ref.name)["metadata"],  # type: ignore[index]
            "finalizers": ["chaos-mesh/records"],
        },
    )
    # The "controller" recovers the records and releases the object on the third poll.
    harness.clock.on_sleep = lambda n: harness.vanish(resource, ref.name) if n == 3 else None

    cluster.remove(ref, timeout_s=30)

    assert not harness.exists(resource, ref.name)
    assert len(harness.clock.sleeps) == 3
    assert harness.count("DELETE", f"{CHAOS}/podchaos/{ref.name}") == 1


def test_a_stuck_deletion_is_reported_with_its_state_and_never_forced(harness: Harness) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(chaos_for(FaultType.NETWORK_DELAY))
    resource = "chaos-mesh.org/v1alpha1/networkchaos"
    meta = harness.get(resource, ref.name)["metadata"]  # type: ignore[index]
    harness.update(
        resource,
        ref.name,
        metadata={**meta, "finalizers": ["chaos-mesh/records"]},
        status=injected_status(["cartservice-5f6b-fghij"]),
    )
    with pytest.raises(PermanentClusterError) as excinfo:
        cluster.remove(ref, timeout_s=5)
    message = str(excinfo.value)
    assert "chaos-mesh/records" in message
    assert "cartservice-5f6b-fghij" in message
    assert "does not force" in message
    assert harness.exists(resource, ref.name)
    # Only the one DELETE: no cleanFinalizer annotation patch, no finalizer removal.
    assert [r.method.value for r in harness.writes()] == ["POST", "DELETE"]


def test_remove_of_an_object_already_gone_is_a_no_op(harness: Harness) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(chaos_for(FaultType.POD_FAILURE))
    harness.vanish("chaos-mesh.org/v1alpha1/podchaos", ref.name)
    cluster.remove(ref)


def test_leftovers_lists_only_objects_labelled_as_managed_by_r2act(harness: Harness) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(chaos_for(FaultType.DNS_FAULT))
    foreign = {
        "apiVersion": "chaos-mesh.org/v1alpha1",
        "kind": "DNSChaos",
        "metadata": {"name": "someone-elses", "namespace": NS, "labels": {"team": "x"}},
        "spec": {"action": "error", "mode": "all", "selector": {"namespaces": [NS]}},
    }
    harness.put("chaos-mesh.org/v1alpha1/dnschaos", foreign)
    # dns_fault is a ConfigFault on the caller drawn for it: found through its annotation
    assert [(r.kind, r.name) for r in cluster.leftovers()] == [("ConfigFault", ref.name)]


# -- reads -------------------------------------------------------------------------------------


def test_preflight_reads_readiness_health_leftovers_from_the_cluster(harness: Harness) -> None:
    cluster = harness.cluster()
    report = cluster.preflight({})
    assert report.ok, report.problems()

    harness.put("apps/v1/deployments", deployment("adservice", replicas=2, available=1))
    harness.failing_pages.add("/_healthz")
    cluster.inject(chaos_for(FaultType.POD_FAILURE))
    report = cluster.preflight({})
    assert not report.deployments_ready and report.not_ready == ["adservice"]
    assert not report.frontend_healthy
    assert [r.kind for r in report.leftovers] == ["PodChaos"]
    assert report.metrics_reachable  # no queries and no Prometheus: nothing to reach


def test_state_maps_deployments_and_pods(harness: Harness) -> None:
    state = harness.cluster().state()
    assert state.namespace == NS and state.ts == NOW
    cart = next(d for d in state.deployments if d.name == "cartservice")
    assert (cart.replicas, cart.available_replicas, cart.revision) == (1, 1, 2)
    assert cart.memory_limits == {"server": "128Mi"}
    pod = next(p for p in state.pods if p.app == "cartservice")
    container = pod.containers[0]
    assert (container.restart_count, container.last_terminated_reason) == (1, "OOMKilled")
    assert container.memory_limit == "128Mi" and container.state == "running"


def test_logs_cover_the_window_with_timestamps_and_the_previous_instance(
    harness: Harness,
) -> None:
    cart, front = "cartservice-5f6b-fghij", "frontend-7d9c-abcde"
    harness.logs[(cart, "server", True)] = [(NOW - 100, "before the OOM kill")]
    harness.logs[(cart, "server", False)] = [(NOW - 500, "too old"), (NOW - 50, "restarted")]
    harness.logs[(front, "server", False)] = [(NOW - 20, '{"message":"request complete"}')]

    batches = list(harness.cluster().logs(TimeWindow(NOW - 200, NOW)))

    lines = sorted((line.pod, line.line, line.ts) for batch in batches for line in batch)
    assert lines == [
        (cart, "before the OOM kill", NOW - 100),
        (cart, "restarted", NOW - 50),
        (front, '{"message":"request complete"}', NOW - 20),
    ]
    assert all(line.service == line.pod.split("-")[0] for b in batches for line in b)
    log_requests = [r for r in harness.requests() if r.url.path.endswith("/log")]
    assert all(r.params["timestamps"] == "true" for r in log_requests)
    assert all(r.params["sinceSeconds"] == "201" for r in log_requests)
    previous = [r.url.path for r in log_requests if r.params["previous"] == "true"]
    assert previous == [f"{PODS}/{cart}/log"]  # only the container that restarted


def test_events_are_those_of_the_namespace_within_the_window(harness: Harness) -> None:
    def event(name: str, offset: float, reason: str, kind: str = "Pod") -> dict[str, Any]:
        return {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": name, "namespace": NS},
            "involvedObject": {"kind": kind, "name": "cartservice-5f6b-fghij"},
            "reason": reason,
            "message": f"{reason} happened",
            "type": "Warning" if reason == "BackOff" else "Normal",
            "count": 2,
            "lastTimestamp": ts(offset).split(".")[0] + "Z",
            "source": {"component": "kubelet"},
        }

    harness.put("v1/events", event("e1", -30, "BackOff"))
    harness.put("v1/events", event("e2", -5000, "Pulled"))
    harness.put("v1/events", event("e3", -10, "Applied", kind="PodChaos"))

    events = harness.cluster().events(TimeWindow(NOW - 60, NOW))

    assert [(e.reason, e.object_kind, e.type) for e in events] == [
        ("BackOff", "Pod", "Warning"),
        ("Applied", "PodChaos", "Normal"),
    ]
    assert events[0].count == 2 and events[0].source == "kubelet"


def test_health_probes_every_route_of_the_shared_oracle(harness: Harness) -> None:
    cluster = harness.cluster()
    assert cluster.health().healthy
    posted = dict(harness.posted)
    assert set(posted) == {"/setCurrency", "/cart", "/cart/checkout"}
    assert posted["/cart"] == {"product_id": "OLJCESPC7Z", "quantity": "1"}
    assert posted["/cart/checkout"]["credit_card_number"] == "4432801561520454"
    harness.failing_pages.add("/cart")  # GET /cart and POST /cart
    report = cluster.health()
    assert not report.healthy and report.frontend_ok is False
    assert report.error_rate == pytest.approx(2 / 6, abs=1e-5)
    assert "GET /cart" in report.detail and "POST /cart" in report.detail


def test_health_counts_a_page_over_the_latency_budget_as_failed(harness: Harness) -> None:
    harness.slow_pages["/product/OLJCESPC7Z"] = 0.25  # budget: 200 ms
    report = harness.cluster().health()
    assert not report.healthy and "GET /product/*" in report.detail
    assert report.error_rate == pytest.approx(1 / 6, abs=1e-5)


# -- plans -------------------------------------------------------------------------------------


def _patches(harness: Harness) -> list[tuple[str, str, Any]]:
    return [
        (r.url.path, r.headers.get("Content-Type", ""), r.data)
        for r in harness.writes()
        if r.method.value == "PATCH"
    ]


def test_restart_patches_the_restarted_at_annotation(harness: Harness) -> None:
    effect = harness.cluster().apply_plan(plan(operation="restart_service", target="cartservice"))
    stamp = "2026-05-28T20:26:40Z"  # NOW
    assert _patches(harness) == [
        (
            f"{DEPLOY}/cartservice",
            "application/strategic-merge-patch+json",
            {
                "spec": {
                    "template": {
                        "metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}
                    }
                }
            },
        )
    ]
    assert effect.changes[0].kind == "restart" and effect.changes[0].after == stamp


def test_scale_out_patches_the_scale_subresource_and_undo_restores_replicas(
    harness: Harness,
) -> None:
    cluster = harness.cluster()
    effect = cluster.apply_plan(plan(operation="scale_out", target="cartservice", replicas=3))
    assert (effect.changes[0].before, effect.changes[0].after) == (1, 3)
    cluster.undo(effect)
    assert _patches(harness) == [
        (
            f"{DEPLOY}/cartservice/scale",
            "application/strategic-merge-patch+json",
            {"spec": {"replicas": 3}},
        ),
        (
            f"{DEPLOY}/cartservice/scale",
            "application/strategic-merge-patch+json",
            {"spec": {"replicas": 1}},
        ),
    ]


def test_memory_limit_patches_the_main_container_only_and_undo_restores_it(
    harness: Harness,
) -> None:
    cluster = harness.cluster()
    effect = cluster.apply_plan(
        plan(operation="increase_memory_limit", target="cartservice", memory_limit="256Mi")
    )
    body = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [{"name": "server", "resources": {"limits": {"memory": "256Mi"}}}]
                }
            }
        }
    }
    assert _patches(harness) == [
        (f"{DEPLOY}/cartservice", "application/strategic-merge-patch+json", body)
    ]
    stored = harness.get("apps/v1/deployments", "cartservice")
    server = stored["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    assert server["resources"]["limits"] == {"cpu": "200m", "memory": "256Mi"}
    assert server["image"] == "registry/cartservice:v0.10.6"  # merged by name, not replaced

    cluster.undo(effect)
    stored = harness.get("apps/v1/deployments", "cartservice")
    server = stored["spec"]["template"]["spec"]["containers"][0]  # type: ignore[index]
    assert server["resources"]["limits"]["memory"] == "128Mi"


def test_rollback_sends_kubectls_template_json_patch_and_undo_reverts_it(
    harness: Harness,
) -> None:
    harness.put("apps/v1/replicasets", replicaset(1, "registry/cartservice:v0.10.5"))
    harness.put("apps/v1/replicasets", replicaset(2, "registry/cartservice:v0.10.6"))
    cluster = harness.cluster()

    effect = cluster.apply_plan(plan(operation="rollback_deployment", target="cartservice"))

    expected_template = deployment("cartservice")["spec"]["template"]
    expected_template["spec"]["containers"][0]["image"] = "registry/cartservice:v0.10.5"
    ((path, content_type, body),) = _patches(harness)
    assert (path, content_type) == (f"{DEPLOY}/cartservice", "application/json-patch+json")
    assert body == [
        {"op": "replace", "path": "/spec/template", "value": expected_template},
        {
            "op": "replace",
            "path": "/metadata/annotations",
            "value": {"deployment.kubernetes.io/revision": "2", "note": "rev1"},
        },
    ]
    image = harness.get("apps/v1/deployments", "cartservice")["spec"]["template"]["spec"][  # type: ignore[index]
        "containers"
    ][0]["image"]
    assert image == "registry/cartservice:v0.10.5"

    cluster.undo(effect)
    restored = harness.get("apps/v1/deployments", "cartservice")
    assert restored["spec"]["template"] == deployment("cartservice")["spec"]["template"]  # type: ignore[index]


def test_a_plans_preimage_is_read_only_and_undoing_it_restores_the_target(
    harness: Harness,
) -> None:
    """What replay writes down before sending a plan: reads only; undoing it after the plan
    ran puts replicas, the memory limit and the template back as they were."""
    harness.put("apps/v1/replicasets", replicaset(1, "registry/cartservice:v0.10.5"))
    harness.put("apps/v1/replicasets", replicaset(2, "registry/cartservice:v0.10.6"))
    cluster = harness.cluster()
    plans = [
        plan(operation="scale_out", target="cartservice", replicas=3),
        plan(operation="increase_memory_limit", target="cartservice", memory_limit="256Mi"),
        plan(operation="rollback_deployment", target="cartservice"),
    ]
    befores = [cluster.preimage(p) for p in plans]
    assert harness.writes() == []
    assert [[(c.kind, c.deployment) for c in b.changes] for b in befores] == [
        [("replicas", "cartservice")],
        [("memory_limit", "cartservice")],
        [("template", "cartservice")],
    ]
    assert befores[0].changes[0].before == 1
    assert befores[1].changes[0].before == {"container": "server", "memory": "128Mi"}
    original = harness.get("apps/v1/deployments", "cartservice")
    for sent, before in zip(plans, befores, strict=True):
        cluster.apply_plan(sent)
        cluster.undo(before)
    restored = harness.get("apps/v1/deployments", "cartservice")
    assert restored["spec"]["template"] == original["spec"]["template"]  # type: ignore[index]
    assert _patches(harness)[1] == (
        f"{DEPLOY}/cartservice/scale",
        "application/strategic-merge-patch+json",
        {"spec": {"replicas": 1}},
    )
    for nothing in ("restart_service", "no_action"):
        target = {} if nothing == "no_action" else {"target": "cartservice"}
        assert cluster.preimage(plan(operation=nothing, **target)).changes == []


def test_rollback_without_an_earlier_revision_changes_nothing(harness: Harness) -> None:
    effect = harness.cluster().apply_plan(plan(operation="rollback_deployment", target="frontend"))
    assert effect.changes == [] and harness.writes() == []


def test_rollback_config_deletes_only_the_frontend_rule_with_that_scope(harness: Harness) -> None:
    cluster = harness.cluster()
    chaos = chaos_for(FaultType.HTTP_ERROR)
    ref = cluster.inject(chaos)
    scope = f"{chaos['spec']['method']} {chaos['spec']['path']}"
    other_scope = "POST /setCurrency" if scope != "POST /setCurrency" else "GET /"

    nothing = cluster.apply_plan(
        plan(operation="rollback_config", target="cartservice", scope=other_scope)
    )
    assert nothing.changes == []
    off_route = cluster.apply_plan(
        plan(operation="rollback_config", target="emailservice", scope=scope)
    )
    assert off_route.changes == []
    backend = cluster.apply_plan(  # on the route, but the rule lives on the frontend's pods
        plan(operation="rollback_config", target="cartservice", scope=scope)
    )
    assert backend.changes == []
    effect = cluster.apply_plan(plan(operation="rollback_config", target="frontend", scope=scope))

    deletes = [r.url.path for r in harness.writes() if r.method.value == "DELETE"]
    assert deletes == [f"{CHAOS}/httpchaos/{ref.name}"]
    assert effect.changes[0].kind == "chaos_removed"
    assert effect.changes[0].before["spec"] == chaos["spec"]  # type: ignore[index]


def test_repair_dependency_changes_addresses_never_chaos_objects(harness: Harness) -> None:
    cluster = harness.cluster()
    cluster.inject(chaos_for(FaultType.POD_FAILURE))
    effect = cluster.apply_plan(
        plan(operation="repair_dependency", target="frontend", dependency="cartservice:7070")
    )
    (change,) = effect.changes  # the variable was missing: it is set to the manifest's value
    assert change.kind == "template" and _env(harness)["CART_SERVICE_ADDR"] == "cartservice:7070"
    assert [r for r in harness.writes() if r.method.value == "DELETE"] == []


def test_no_action_sends_nothing(harness: Harness) -> None:
    effect = harness.cluster().apply_plan(plan(operation="no_action"))
    assert effect.changes == [] and harness.requests() == []


def test_a_plan_on_a_missing_deployment_is_not_found(harness: Harness) -> None:
    with pytest.raises(NotFoundError):
        harness.cluster().apply_plan(plan(operation="restart_service", target="nosuchservice"))


# -- safety ------------------------------------------------------------------------------------


def _every_write(cluster: KubeCluster, *, removal: bool = True) -> list[Exception]:
    """Every write refused; ``removal=False``: the removal of r2act's own fault is not a new
    write (the opt-in label guards new writes only), so it is left out."""
    ref_chaos = chaos_for(FaultType.POD_FAILURE)
    attempts = [
        lambda: cluster.inject(ref_chaos),
        lambda: cluster.apply_plan(plan(operation="restart_service", target="cartservice")),
        lambda: cluster.apply_plan(plan(operation="scale_out", target="cartservice", replicas=2)),
        lambda: cluster.preflight({}),
    ]
    if removal:
        attempts.append(lambda: cluster.remove(cluster_ref(ref_chaos)))
    errors: list[Exception] = []
    for attempt in attempts:
        with pytest.raises(SafetyError) as excinfo:
            attempt()
        errors.append(excinfo.value)
    return errors


def cluster_ref(chaos: dict[str, Any]) -> ChaosRef:
    return ChaosRef(kind=chaos["kind"], name=chaos["metadata"]["name"], namespace=NS)


def test_a_namespace_without_the_opt_in_label_is_refused_before_any_write(
    harness: Harness,
) -> None:
    harness.namespace_labels.clear()
    cluster = harness.cluster()
    errors = _every_write(cluster, removal=False)
    assert all("r2act.io/chaos-allowed=true" in str(e) for e in errors)
    cluster.remove(cluster_ref(chaos_for(FaultType.POD_FAILURE)))  # nothing there: a no-op
    assert harness.writes() == []


def test_another_context_is_refused_before_any_request(harness: Harness) -> None:
    errors = _every_write(harness.cluster(context="kind-production"))
    assert all("kind-production" in str(e) for e in errors)
    assert harness.requests() == []


def test_objects_outside_the_namespace_are_refused(harness: Harness) -> None:
    chaos = chaos_for(FaultType.POD_FAILURE)
    chaos["spec"]["selector"]["namespaces"] = [NS, "kube-system"]
    with pytest.raises(SafetyError, match="kube-system"):
        harness.cluster().inject(chaos)
    assert harness.writes() == []


def write_kubeconfig(path: Path, server: str) -> Path:
    """Two contexts, the current one pointing elsewhere: r2act must pick the named one."""
    path.write_text(
        f"""apiVersion: v1
kind: Config
current-context: production
clusters:
- name: emulator
  cluster: {{server: "{server}"}}
- name: prod
  cluster: {{server: "http://127.0.0.1:9"}}
contexts:
- name: kind-r2act
  context: {{cluster: emulator, user: u}}
- name: production
  context: {{cluster: prod, user: u}}
users:
- name: u
  user: {{token: t}}
"""
    )
    return path


def test_from_target_selects_the_campaigns_context_and_connect_refuses_unsafe_targets(
    harness: Harness, tmp_path: Path
) -> None:
    kubeconfig = write_kubeconfig(tmp_path / "kubeconfig", harness.emulator.url)
    target = KubernetesTarget(kind="kubernetes", context="kind-r2act", namespace=NS)
    cluster = KubeCluster.from_target(target, kubeconfig=kubeconfig, clock=harness.clock)
    assert cluster.fingerprint == f"kubernetes:kind-r2act/{NS}"
    assert "cartservice-5f6b-fghij" in cluster.pod_names()  # it talked to the emulator

    missing = KubernetesTarget(kind="kubernetes", context="kind-other", namespace=NS)
    with pytest.raises(SafetyError, match="kind-other"):
        KubeCluster.from_target(missing, kubeconfig=kubeconfig)

    # The factory the collector calls runs the safety check before anything else.
    harness.namespace_labels.clear()
    with pytest.raises(SafetyError, match="chaos-allowed"):
        connect_kubernetes(target, namespace=NS, kubeconfig=kubeconfig, clock=harness.clock)
    with pytest.raises(SafetyError, match="differs"):
        connect_kubernetes(target, namespace="default", kubeconfig=kubeconfig)
    assert harness.writes() == []


# -- errors and retries --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_statuses_are_retried_until_the_call_succeeds(
    harness: Harness, status: int
) -> None:
    harness.fail(f"get {PODS}", [status, status])
    assert "frontend-7d9c-abcde" in harness.cluster().pod_names()
    assert harness.count("GET", PODS) == 3


def test_a_connection_reset_is_retried(harness: Harness) -> None:
    harness.reset_connection(f"get {DEPLOY}", times=1)
    state = harness.cluster().state()
    assert {d.name for d in state.deployments} >= {"frontend", "cartservice"}
    assert harness.count("GET", DEPLOY) == 2


def test_a_lost_patch_answer_is_retried_with_the_same_patch(harness: Harness) -> None:
    harness.reset_connection(f"patch {DEPLOY}/cartservice", times=1)
    harness.cluster().apply_plan(plan(operation="restart_service", target="cartservice"))
    patches = _patches(harness)
    assert len(patches) == 2 and patches[0] == patches[1]


def test_retries_are_bounded_and_end_in_a_transient_error(harness: Harness) -> None:
    harness.fail(f"get {PODS}", [500] * 10)
    with pytest.raises(TransientClusterError, match="HTTP 500"):
        harness.cluster().pod_names()
    assert harness.count("GET", PODS) == 5


def test_forbidden_names_the_missing_permission(harness: Harness) -> None:
    harness.fail(
        f"get {PODS}",
        [403],
        message='pods is forbidden: User "system:serviceaccount:boutique:r2act" cannot list '
        'resource "pods" in API group "" in the namespace "boutique"',
    )
    with pytest.raises(SafetyError) as excinfo:
        harness.cluster().pod_names()
    message = str(excinfo.value)
    assert "needs permission 'list pods'" in message
    assert "deploy/rbac.yaml" in message and "cannot list resource" in message
    assert harness.count("GET", PODS) == 1  # a permission problem is not retried


def test_unauthorized_is_a_safety_error_naming_the_context(harness: Harness) -> None:
    harness.fail(f"get {PODS}", [401])
    with pytest.raises(SafetyError, match="kind-r2act"):
        harness.cluster().pod_names()


def test_connect_gives_the_kube_adapter_for_a_kubernetes_target(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from r2act.cluster.connect import connect

    monkeypatch.setenv("KUBECONFIG", str(write_kubeconfig(tmp_path / "kc", harness.emulator.url)))
    monkeypatch.setenv("R2ACT_PROMETHEUS_URL", "http://127.0.0.1:9")
    target = KubernetesTarget(kind="kubernetes", context="kind-r2act", namespace=NS)
    cluster = connect(target, namespace=NS, workspace=tmp_path, metric_queries={"up": "up"})
    assert isinstance(cluster, KubeCluster)
    assert cluster.fingerprint == f"kubernetes:kind-r2act/{NS}"
    harness.namespace_labels.clear()
    with pytest.raises(SafetyError):
        connect(target, namespace=NS, workspace=tmp_path)


# -- ConfigFault -------------------------------------------------------------------------------


def _config_fault(env: dict[str, str] | None = None, memory: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"deployment": "frontend", "container": "server", "duration": "120s"}
    if env is not None:
        spec["env"] = env
    else:
        spec = {**spec, "deployment": "cartservice", "resources": {"limits": {"memory": memory}}}
    return {
        "apiVersion": "r2act.io/v1alpha1",
        "kind": "ConfigFault",
        "metadata": {
            "name": "r2act-dns-0123456789",
            "namespace": NS,
            "labels": {"app.kubernetes.io/managed-by": "r2act", "r2act.io/incident": "inc"},
            "annotations": {"r2act.io/incident-id": "inc-1", "r2act.io/run-id": "run-1"},
        },
        "spec": spec,
    }


def _frontend_with_env(harness: Harness) -> None:
    dep = deployment("frontend")
    dep["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "PORT", "value": "8080"},
        {"name": "CART_SERVICE_ADDR", "value": "cartservice:7070"},
    ]
    harness.put("apps/v1/deployments", dep)


def _env(harness: Harness, name: str = "frontend") -> dict[str, str]:
    dep = harness.get("apps/v1/deployments", name)
    assert dep is not None
    container = dep["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e["value"] for e in container.get("env") or []}


def test_a_config_fault_patches_the_env_and_keeps_the_originals_on_the_deployment(
    harness: Harness,
) -> None:
    _frontend_with_env(harness)
    cluster = harness.cluster()
    ref = cluster.inject(_config_fault(env={"CART_SERVICE_ADDR": "cartservice.invalid:7070"}))
    assert (ref.kind, ref.name, ref.incident_id) == ("ConfigFault", "r2act-dns-0123456789", "inc-1")
    assert _env(harness) == {"PORT": "8080", "CART_SERVICE_ADDR": "cartservice.invalid:7070"}
    dep = harness.get("apps/v1/deployments", "frontend")
    assert dep is not None and "labels" not in dep["metadata"]  # never labelled
    book = json.loads(dep["metadata"]["annotations"]["r2act.io/config-fault"])
    assert book["name"] == ref.name and book["runId"] == "run-1"
    assert book["env"] == {"CART_SERVICE_ADDR": "cartservice:7070"}
    assert [r.name for r in cluster.leftovers()] == [ref.name]
    with pytest.raises(ConflictError):
        other = _config_fault(env={"CART_SERVICE_ADDR": "203.0.113.9:7070"})
        other["metadata"]["name"] = "r2act-dns-other00000"
        cluster.inject(other)

    patched = harness.get("apps/v1/deployments", "frontend")
    assert patched is not None
    faulty = pod("frontend-9f8e-zzzzz", "frontend")
    faulty["spec"] = patched["spec"]["template"]["spec"]
    harness.put("v1/pods", faulty)
    status = cluster.chaos_status(ref)
    assert status.injected(cluster.pod_names())
    assert [r.id for r in status.records] == [f"{NS}/frontend-9f8e-zzzzz"]

    cluster.remove(ref)
    assert _env(harness) == {"PORT": "8080", "CART_SERVICE_ADDR": "cartservice:7070"}
    dep = harness.get("apps/v1/deployments", "frontend")
    assert dep is not None and "r2act.io/config-fault" not in dep["metadata"]["annotations"]
    assert not cluster.chaos_status(ref).exists and cluster.leftovers() == []
    cluster.remove(ref)  # gone: no-op
    assert not harness.exists("apps/v1/deployments", "nothing")
    assert harness.exists("apps/v1/deployments", "frontend")


def test_removal_leaves_a_deployment_whose_annotation_names_another_fault(
    harness: Harness,
) -> None:
    _frontend_with_env(harness)
    cluster = harness.cluster()
    ref = cluster.inject(_config_fault(env={"CART_SERVICE_ADDR": "cartservice.invalid:7070"}))
    harness.reset_log()
    cluster.remove(ref.model_copy(update={"name": "r2act-dns-someoneelse"}))
    assert [r for r in harness.writes() if r.method.value == "PATCH"] == []
    assert _env(harness)["CART_SERVICE_ADDR"] == "cartservice.invalid:7070"


def test_a_memory_config_fault_lowers_limit_and_request_and_removal_restores_both(
    harness: Harness,
) -> None:
    cluster = harness.cluster()
    ref = cluster.inject(_config_fault(memory="24Mi"))
    dep = harness.get("apps/v1/deployments", "cartservice")
    assert dep is not None
    resources = dep["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["limits"]["memory"] == "24Mi" and resources["requests"]["memory"] == "24Mi"
    assert resources["limits"]["cpu"] == "200m"
    cluster.remove(ref)
    dep = harness.get("apps/v1/deployments", "cartservice")
    assert dep is not None
    resources = dep["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert resources["limits"]["memory"] == "128Mi" and resources["requests"]["memory"] == "64Mi"


def test_repair_dependency_restores_the_manifest_address_and_undo_reverts_it(
    harness: Harness,
) -> None:
    _frontend_with_env(harness)
    cluster = harness.cluster()
    cluster.inject(_config_fault(env={"CART_SERVICE_ADDR": "cartservice.invalid:7070"}))
    wrong = plan(operation="repair_dependency", target="frontend", dependency="cartservice:7000")
    assert cluster.apply_plan(wrong).changes == []
    effect = cluster.apply_plan(
        plan(operation="repair_dependency", target="frontend", dependency="cartservice:7070")
    )
    assert _env(harness)["CART_SERVICE_ADDR"] == "cartservice:7070"
    (change,) = effect.changes
    assert change.kind == "template" and change.deployment == "frontend"
    assert (
        cluster.apply_plan(
            plan(operation="repair_dependency", target="frontend", dependency="cartservice:7070")
        ).changes
        == []
    )  # already right: no rollout
    cluster.undo(effect)
    assert _env(harness)["CART_SERVICE_ADDR"] == "cartservice.invalid:7070"
    assert [r.kind for r in cluster.leftovers()] == ["ConfigFault"]


def test_a_planned_dns_fault_in_a_non_primary_caller_patches_only_that_caller(
    harness: Harness,
) -> None:
    """The planner draws the caller holding the address (issue 21): a cart address fault
    drawn into checkoutservice touches checkout's template only, and the valid plan's repair
    there restores it."""
    from r2act.campaigns import render_chaos
    from r2act.campaigns.planner import resolve_parameters
    from r2act.schema import FaultSpec, Intensity, PhaseDurations, PlannedIncident
    from r2act.systems import ONLINE_BOUTIQUE

    ident = "onlineboutique_cartservice_dns_fault_severe_r01"
    draw = next(
        seed
        for seed in range(64)
        if resolve_parameters(
            FaultType.DNS_FAULT, "cartservice", 1, {}, ONLINE_BOUTIQUE, ident=ident, seed=seed
        )["caller"]
        == "checkoutservice"
    )
    params = resolve_parameters(
        FaultType.DNS_FAULT, "cartservice", 1, {}, ONLINE_BOUTIQUE, ident=ident, seed=draw
    )
    incident = PlannedIncident(
        id=ident,
        campaign="kmock",
        system="onlineboutique",
        service="cartservice",
        fault=FaultSpec(
            type=FaultType.DNS_FAULT,
            intensity=Intensity.SEVERE,
            service="cartservice",
            duration_s=120,
            parameters=params,
        ),
        repetition=1,
        phases=PhaseDurations(),
        seed=draw,
    )
    _frontend_with_env(harness)
    checkout = deployment("checkoutservice")
    checkout["spec"]["template"]["spec"]["containers"][0]["env"] = [
        {"name": "CART_SERVICE_ADDR", "value": "cartservice:7070"},
    ]
    harness.put("apps/v1/deployments", checkout)
    cluster = harness.cluster()
    ref = cluster.inject(render_chaos(incident, NS, ONLINE_BOUTIQUE))
    assert _env(harness, "checkoutservice") == {"CART_SERVICE_ADDR": "cartservice.invalid:7070"}
    assert _env(harness)["CART_SERVICE_ADDR"] == "cartservice:7070"  # the frontend is untouched
    # the near miss changes nothing: the frontend's value is already right
    missed = cluster.apply_plan(
        plan(operation="repair_dependency", target="frontend", dependency="cartservice:7070")
    )
    assert missed.changes == []
    repaired = cluster.apply_plan(
        plan(operation="repair_dependency", target="checkoutservice", dependency="cartservice:7070")
    )
    assert [c.deployment for c in repaired.changes] == ["checkoutservice"]
    assert _env(harness, "checkoutservice") == {"CART_SERVICE_ADDR": "cartservice:7070"}
    cluster.undo(repaired)
    cluster.remove(ref)
    assert _env(harness, "checkoutservice") == {"CART_SERVICE_ADDR": "cartservice:7070"}
    assert cluster.leftovers() == []
