"""The system's condition at one instant: who is up, how fast calls are, what fails, and why.

A ``Scene`` folds the pod timelines (readiness, faults) into per-service and per-edge
conditions and pushes the user traffic through the route call trees. Everything the
simulator reports — log lines, metrics, health — is read off scenes, so logs, metrics and
the health probe always agree with each other.

CPU stress is a queueing effect: a stressed pod keeps ``1/rho1`` of the capacity its
nominal traffic needs (rho1 grows with the stressor's cores), and its per-call latency is
``base * (K / (1 - rho) - 1)`` with rho = rho1 x load / ready replicas; at rho >= 1 calls
time out. Spreading traffic over more replicas lowers rho, which is why scale-out helps,
and why a severe stress needs more replicas than a moderate one.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field

from r2act.cluster.sim.timeline import PodTimeline
from r2act.cluster.sim.traffic import (
    SERVICE_MS,
    SLO_BUDGET_MS,
    Call,
    route_calls,
    route_rates,
)
from r2act.schema import Topology

QUEUE_K = 6.0
"""Throttling inflation of a stressed pod's service time (CFS quota waits)."""
DEADLINE_MS = 1000.0
"""Latency a caller sees for calls that time out."""
DEFAULT_USERS = 10


@dataclass
class ServiceView:
    """One service at the instant: its pods and how calls to it fare."""

    pods: list[str] = field(default_factory=list)
    ready: list[str] = field(default_factory=list)
    fail: float = 0.0
    kind: str = "unavailable"
    extra_ms: float = 0.0
    egress_ms: float = 0.0
    rho: dict[str, float] = field(default_factory=dict)


@dataclass
class RouteView:
    """One frontend route at the instant, from the users' side."""

    rate: float
    fail: float = 0.0
    causes: list[tuple[float, str, str]] = field(default_factory=list)
    """(probability, error kind, service at fault) of a failing request."""
    extra_ms: float = 0.0
    http_code: int | None = None
    http_share: float = 0.0
    abort_share: float = 0.0
    user_dns: tuple[float, str] = (0.0, "")
    frontend_down: float = 0.0

    @property
    def slow(self) -> float:
        """Share of requests slower than the baseline plus the SLO budget."""
        z = (self.extra_ms - SLO_BUDGET_MS) / 15.0
        return 1.0 / (1.0 + math.exp(-max(-40.0, min(40.0, z))))

    def bad(self, *, user: bool = True) -> float:
        """Share of requests that fail or are too slow (from users or from a prober)."""
        fail = self.fail
        if not user and self.user_dns[0] > 0:
            fail = 1 - (1 - fail) / max(1e-9, 1 - self.user_dns[0])
        return fail + (1 - fail) * self.slow


@dataclass
class Scene:
    """Conditions of the whole system at time ``t``."""

    t: float
    services: dict[str, ServiceView]
    routes: dict[str, RouteView]
    received: dict[str, float]
    """Calls per second reaching each service."""
    served: dict[str, dict[str, float]]
    """Successful calls per second per service and operation."""
    call_errors: dict[str, dict[tuple[str, str], float]]
    """Failed calls per second per caller, by (callee, error kind)."""
    timelines: dict[str, PodTimeline]
    disturbed_since: float | None = None
    """Start of the earliest fault acting now (None when none is)."""


def _edge_faults(
    topology: Topology, timelines: dict[str, PodTimeline], views: dict[str, ServiceView], t: float
) -> tuple[dict[tuple[str, str], tuple[float, str]], list[tuple[float, PodTimeline, int | None]]]:
    edges: dict[tuple[str, str], tuple[float, str]] = {}
    http: list[tuple[float, PodTimeline, int | None]] = []
    for app, view in views.items():
        for pod in view.ready:
            line = timelines[pod]
            share = 1.0 / len(view.ready)
            for active in line.active(t, "dns"):
                for host in active.fault.dns_hosts:
                    kind = "dns_" + active.fault.dns_action
                    old = edges.get((app, host), (0.0, kind))[0]
                    edges[(app, host)] = (min(1.0, old + share), kind)
            if app == topology.entrypoint:
                for active in line.active(t, "http"):
                    http.append((share, line, active.fault.http_code))
    return edges, http


def _service_views(
    topology: Topology, timelines: dict[str, PodTimeline], t: float, users: int
) -> dict[str, ServiceView]:
    views: dict[str, ServiceView] = {d.name: ServiceView() for d in topology.deployments}
    for name, line in timelines.items():
        if not line.pod.exists(t):
            continue
        view = views.setdefault(line.pod.app, ServiceView())
        view.pods.append(name)
        if line.ready(t):
            view.ready.append(name)
    load = users / DEFAULT_USERS
    for app, view in views.items():
        if not view.ready:
            view.fail, view.kind = 1.0, "unavailable"
            continue
        base = SERVICE_MS.get(app, 3.0)
        share = 1.0 / len(view.ready)
        timeouts = 0.0
        for pod in view.ready:
            line = timelines[pod]
            for active in line.active(t, "cpu"):
                rho = (0.5 + 0.5 * active.fault.cpu_cores) * load / len(view.ready)
                view.rho[pod] = rho
                if rho < 1.0:
                    view.extra_ms += share * base * (QUEUE_K / (1.0 - rho) - 1.0)
                else:
                    timeouts += share * (1.0 - 1.0 / rho)
                    view.extra_ms += share * DEADLINE_MS
            for active in line.active(t, "delay"):
                view.extra_ms += share * active.fault.latency_ms
                view.egress_ms += share * active.fault.latency_ms
                if active.fault.latency_ms > DEADLINE_MS:
                    timeouts += share * 0.3
        if timeouts > 0:
            view.fail, view.kind = min(1.0, timeouts), "deadline"
    return views


def build_scene(
    topology: Topology, timelines: dict[str, PodTimeline], t: float, users: int
) -> Scene:
    """Push the users' traffic through the system as it is at ``t``."""
    views = _service_views(topology, timelines, t, users)
    edges, http = _edge_faults(topology, timelines, views, t)
    scene = Scene(
        t=t,
        services=views,
        routes={},
        received=defaultdict(float),
        served=defaultdict(lambda: defaultdict(float)),
        call_errors=defaultdict(lambda: defaultdict(float)),
        timelines=timelines,
    )
    starts = [a.start for line in timelines.values() for a in line.faults if a.start <= t < a.end]
    scene.disturbed_since = min(starts) if starts else None
    entry = topology.entrypoint
    front = views[entry]
    user_edge = edges.get((topology.load_generator or "", entry), (0.0, ""))
    rates = route_rates(topology, users)
    for route in topology.routes:
        rate = rates[route.scope]
        view = RouteView(rate=rate, user_dns=user_edge, frontend_down=front.fail)
        for share, line, code in http:
            if _matches(line, route.method, route.path, t):
                if code is None:
                    view.abort_share += share
                else:
                    view.http_share += share
                    view.http_code = code
        reach = (1 - user_edge[0]) * (1 - front.fail) * (1 - view.abort_share)
        scene.received[entry] += rate * reach
        survive = 1.0
        extra = front.extra_ms + front.egress_ms
        for call in route_calls(topology, route.scope):
            fail, causes, call_extra = _call(scene, edges, entry, call, rate * reach)
            extra += call.count * call_extra
            if call.fatal and fail > 0:
                survive *= (1 - fail) ** call.count
                view.causes.extend((p * call.count, k, s) for p, k, s in causes)
        view.extra_ms = extra
        ok_user = (1 - user_edge[0]) * (1 - front.fail) * (1 - view.abort_share)
        ok_user *= (1 - view.http_share) * survive
        view.fail = 1 - ok_user
        scene.routes[route.scope] = view
    return scene


def _matches(line: PodTimeline, method: str, path: str, t: float) -> bool:
    for active in line.active(t, "http"):
        fault = active.fault
        if fault.http_method not in (None, method):
            continue
        if fault.http_path in ("*", "/*", path):
            return True
    return False


def _call(
    scene: Scene,
    edges: dict[tuple[str, str], tuple[float, str]],
    caller: str,
    call: Call,
    rate: float,
) -> tuple[float, list[tuple[float, str, str]], float]:
    """(failure probability, causes, extra ms) of one call; accumulates traffic on the way."""
    callee = scene.services.get(call.callee) or ServiceView(fail=1.0)
    caller_view = scene.services.get(caller) or ServiceView()
    p_edge, edge_kind = edges.get((caller, call.callee), (0.0, ""))
    attempts = rate * call.count
    arrive = attempts * (1 - p_edge) if callee.ready else 0.0
    scene.received[call.callee] += arrive
    child_survive = 1.0
    child_causes: list[tuple[float, str, str]] = []
    extra = caller_view.egress_ms + callee.extra_ms
    for child in call.children:
        c_fail, c_causes, c_extra = _call(scene, edges, call.callee, child, arrive)
        extra += child.count * c_extra
        if child.fatal and c_fail > 0:
            child_survive *= (1 - c_fail) ** child.count
            child_causes.extend((p * child.count, k, s) for p, k, s in c_causes)
    own_fail = callee.fail if callee.ready else 1.0
    served_ok = arrive * (1 - own_fail) * child_survive
    scene.served[call.callee][call.op] += served_ok
    causes: list[tuple[float, str, str]] = []
    if p_edge > 0:
        causes.append((p_edge, edge_kind, call.callee))
        scene.call_errors[caller][(call.callee, edge_kind)] += attempts * p_edge
    if own_fail > 0:
        p = (1 - p_edge) * own_fail
        causes.append((p, callee.kind, call.callee))
        scene.call_errors[caller][(call.callee, callee.kind)] += attempts * p
    upstream = (1 - p_edge) * (1 - own_fail) * (1 - child_survive)
    if upstream > 0:
        total = sum(p for p, _, _ in child_causes) or 1.0
        causes.extend(
            (
                upstream * p / total,
                k if k.startswith("upstream") else f"upstream|{k}|{s}",
                call.callee,
            )
            for p, k, s in child_causes
        )
        _, root_kind, root = max(child_causes)
        if not root_kind.startswith("upstream"):
            root_kind = f"upstream|{root_kind}|{root}"
        scene.call_errors[caller][(call.callee, root_kind)] += attempts * upstream
    fail = 1 - (1 - p_edge) * (1 - own_fail) * child_survive
    return fail, causes, extra
