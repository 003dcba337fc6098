"""Helpers for simulated-cluster tests: incidents as the campaigns package plans them.

Chaos objects come from the real renderer (``render_chaos``), so the simulator is tested
on exactly what a campaign sends. Glitches are off unless a test turns them on.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import GlitchRates, Manifest, plan_incidents, render_chaos
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import (
    PLAN_ADAPTER,
    ChaosRef,
    FaultType,
    LogLine,
    PlannedIncident,
    RecoveryPlan,
    TimeWindow,
    format_mebibytes,
    memory_bytes,
)
from r2act.systems import ONLINE_BOUTIQUE

NO_GLITCHES = GlitchRates(injection_failure=0, metric_gap=0, slow_recovery=0)
PRE_S, DURING_S = 300.0, 120.0
SETTLE_S = 5.0
"""Chaos Mesh applies records about a second after creation; windows start after that."""


def incident(
    service: str, fault: str, intensity: str = "severe", repetition: int = 1
) -> PlannedIncident:
    """The planned incident a one-cell manifest yields."""
    manifest = Manifest.model_validate(
        {
            "name": "t",
            "system": "onlineboutique",
            "target": {"kind": "sim"},
            "services": [service],
            "faults": [{"type": fault, "intensities": [intensity]}],
            "repetitions": repetition,
        },
        strict=False,
    )
    return plan_incidents(manifest)[repetition - 1]


def chaos(inc: PlannedIncident) -> dict[str, object]:
    """The Chaos Mesh object the campaign renderer emits for ``inc``."""
    return render_chaos(inc, "default", ONLINE_BOUTIQUE)


def gold_plan(inc: PlannedIncident) -> RecoveryPlan:
    """The default policy's gold plan, built from contracts.md's recovery semantics."""
    service, params = inc.service, inc.fault.parameters
    spec = ONLINE_BOUTIQUE.deployment(service)
    kind = inc.fault.type
    plan: dict[str, object]
    if kind in (FaultType.POD_FAILURE, FaultType.NETWORK_DELAY):
        plan = {"operation": "restart_service", "target": service}
    elif kind == FaultType.CPU_SATURATION:
        plan = {"operation": "scale_out", "target": service, "replicas": spec.replicas + 1}
    elif kind == FaultType.MEMORY_PRESSURE:
        size = str(params["size"])
        stress = int(size[:-2]) * 10**6
        need = memory_bytes(spec.main.memory_request) + stress
        if need > memory_bytes(spec.main.memory_limit):
            limit = format_mebibytes(need + 16 * 2**20)
            plan = {"operation": "increase_memory_limit", "target": service, "memory_limit": limit}
        else:
            plan = {"operation": "restart_service", "target": service}
    elif kind in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        scope = f"{params['method']} {params['path']}"
        plan = {"operation": "rollback_config", "target": service, "scope": scope}
    else:
        plan = {"operation": "repair_dependency", "target": service, "dependency": spec.endpoint}
    return PLAN_ADAPTER.validate_python(plan)


class Run:
    """One incident on a fresh simulated cluster: pre window, injection, during window."""

    def __init__(
        self,
        cluster: SimulatedCluster,
        inc: PlannedIncident,
        injected: dict[str, object] | None = None,
    ) -> None:
        self.cluster, self.incident = cluster, inc
        start = cluster.clock.now()
        cluster.clock.sleep(PRE_S)
        self.pre = TimeWindow(start, cluster.clock.now())
        # Read at the end of the pre phase, as the collector does: later, a rollout or
        # repeated restarts take earlier lines out of reach (collection parity).
        self._pre_lines = [line for batch in cluster.logs(self.pre) for line in batch]
        self.ref: ChaosRef = cluster.inject(injected if injected is not None else chaos(inc))
        cluster.clock.sleep(DURING_S)
        self.during = TimeWindow(self.pre.end + SETTLE_S, cluster.clock.now())
        """The fault window, from when the records have been applied."""

    def lines(self, window: TimeWindow) -> list[LogLine]:
        """Every log line of the window (the pre window as read before the injection)."""
        if window == self.pre:
            return list(self._pre_lines)
        return [line for batch in self.cluster.logs(window) for line in batch]


@pytest.fixture
def make_cluster(tmp_path: Path) -> Callable[..., SimulatedCluster]:
    """A fresh simulated cluster in ``tmp_path`` (glitches off unless given)."""

    def make(**kwargs: object) -> SimulatedCluster:
        kwargs.setdefault("glitches", NO_GLITCHES)
        return SimulatedCluster(tmp_path, **kwargs)  # type: ignore[arg-type]

    return make


PRIMARY_CALLER = {
    "productcatalogservice": "frontend",
    "currencyservice": "frontend",
    "cartservice": "frontend",
    "recommendationservice": "frontend",
    "shippingservice": "frontend",
    "checkoutservice": "frontend",
    "adservice": "frontend",
    "paymentservice": "checkoutservice",
    "emailservice": "checkoutservice",
    "redis-cart": "cartservice",
}
"""A caller per service for the tests' ConfigFaults (the policy in actions/ decides in
campaigns; any caller exercises the same mechanics)."""


def address_variable(caller: str, service: str) -> str:
    """The caller's env variable that holds ``service``'s address in the release manifest."""
    env = ONLINE_BOUTIQUE.deployment(caller).env
    return next(k for k, v in env.items() if v.split(":")[0] == service)


def config_fault(
    service: str, fault: str, intensity: str = "severe", *, name: str = "r2act-cf-0123456789"
) -> dict[str, object]:
    """A ConfigFault as CONTRACTS.md defines it, for dns_fault / dns_random / memory_pressure."""
    spec: dict[str, object]
    if fault in ("dns_fault", "dns_random"):
        caller = PRIMARY_CALLER[service]
        port = ONLINE_BOUTIQUE.deployment(service).service_port
        value = f"{service}.invalid:{port}" if fault == "dns_fault" else f"203.0.113.77:{port}"
        spec = {
            "deployment": caller,
            "container": ONLINE_BOUTIQUE.deployment(caller).main.name,
            "env": {address_variable(caller, service): value},
        }
    else:
        main = ONLINE_BOUTIQUE.deployment(service).main
        request = memory_bytes(main.memory_request)
        share = 0.65 if intensity == "moderate" else 0.3
        spec = {
            "deployment": service,
            "container": main.name,
            "resources": {"limits": {"memory": format_mebibytes(int(request * share))}},
        }
    spec["duration"] = "120s"
    return {
        "apiVersion": "r2act.io/v1alpha1",
        "kind": "ConfigFault",
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app.kubernetes.io/managed-by": "r2act", "r2act.io/incident": "t"},
            "annotations": {"r2act.io/incident-id": f"{service}_{fault}_{intensity}"},
        },
        "spec": spec,
    }


def raw_chaos(kind: str, app: str, spec: dict[str, object], name: str) -> dict[str, object]:
    """A Chaos Mesh object no shipped cell renders any more (StressChaos memory, DNSChaos):
    the simulator still accepts them with their real mechanics."""
    return {
        "apiVersion": "chaos-mesh.org/v1alpha1",
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": "default",
            "labels": {"app.kubernetes.io/managed-by": "r2act", "r2act.io/incident": "t"},
        },
        "spec": {
            "mode": "all",
            "selector": {"namespaces": ["default"], "labelSelectors": {"app": app}},
            "duration": "120s",
            **spec,
        },
    }


def memory_stress(service: str, size: str = "256MB") -> dict[str, object]:
    """StressChaos memory of ``size`` on the service's main container."""
    container = ONLINE_BOUTIQUE.deployment(service).main.name
    spec = {"containerNames": [container], "stressors": {"memory": {"workers": 1, "size": size}}}
    return raw_chaos("StressChaos", service, spec, "r2act-mem-0123456789")


def dns_chaos(callers: list[str], service: str, action: str = "error") -> dict[str, object]:
    """DNSChaos on ``callers`` for ``service``'s name."""
    obj = raw_chaos("DNSChaos", callers[0], {"action": action}, "r2act-dns-0123456789")
    spec = obj["spec"]
    assert isinstance(spec, dict)
    spec["selector"] = {
        "namespaces": ["default"],
        "expressionSelectors": [{"key": "app", "operator": "In", "values": callers}],
    }
    spec["patterns"] = [service, f"{service}.*"]
    return obj
