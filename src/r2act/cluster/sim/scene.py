"""The system's condition at one instant: who is up, how fast calls are, what fails, and why.

A ``Scene`` folds the pod timelines (readiness, faults, the pods' env) into per-service and
per-edge conditions and pushes the user traffic through the route call trees. Everything
the simulator reports — log lines, metrics, health — is read off scenes, so logs, metrics
and the health probe always agree with each other.

Connections are pinned (``pinning``): each gRPC client holds one HTTP/2 connection to one
pod of a callee, so a pod's load is the share of connections it holds, not
``1 / replicas``; user requests are pinned the same way only when the load generator
reuses its connections (stock Locust), and spread over the ready entry-point pods when it
opens one per request (Online Boutique's shipped deployment).

CPU stress is a queueing effect: a stressed pod keeps ``1/rho1`` of the capacity its
nominal traffic needs (rho1 grows with the stressor's cores), and its per-call latency is
``base * (K / (1 - rho) - 1)`` with rho = rho1 x load x the pod's share of connections;
near and beyond rho = 1 the queue grows until calls take seconds. A call times out only
where its caller sets a deadline (``Call.deadline_ms``; Online Boutique sets one, its entry
point's 100 ms on ads).

Seams for the texts (``podlogs`` and a system's renderers): ``RouteView.causes`` names,
per failing request, the backend the handler called directly (its wrap message follows
that backend) and the failure kind; ``Scene.call_errors`` counts failed calls per caller
including tolerated ones (calls a handler does not fail on, ``Call.fatal``; whether its
service logs them is its renderers' business); ``Scene.addresses`` holds the address a
caller dialled when its env points elsewhere. Failure kinds: ``unavailable`` (nothing
ready: connection refused), ``deadline`` (a per-call deadline ran out), ``dns_error``
(NXDOMAIN: the env names a host that does not exist), ``dns_servfail`` (DNSChaos error
where it could be injected), ``dns_random`` (a wrong IPv4: connect timeout),
``upstream|<kind>|<root>`` (the callee failed because its own callee did). A kind caused
by a ConfigFault carries the dialled address after ``@`` (``dns_random@203.0.113.77:7070``),
the form a system's error texts read.
"""

from __future__ import annotations

import ipaddress
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from r2act.cluster.oracle import slow_share
from r2act.cluster.sim.background import late_share
from r2act.cluster.sim.pinning import Pinning
from r2act.cluster.sim.timeline import PodTimeline
from r2act.cluster.sim.traffic import Call, redirects, route_calls, route_rates, service_ms
from r2act.schema import NoiseLevel, Topology, memory_bytes
from r2act.schema.topology import split_address

QUEUE_K = 6.0
"""Throttling inflation of a stressed pod's service time (CFS quota waits)."""
SATURATED_MS = 3000.0
"""Latency of a call to a pod whose queue grows without bound (rho >= 1)."""
DEFAULT_USERS = 10


@dataclass
class ServiceView:
    """One service at the instant: its pods and how calls to it fare."""

    pods: list[str] = field(default_factory=list)
    ready: list[str] = field(default_factory=list)
    fail: float = 0.0
    kind: str = "unavailable"
    extra_ms: float = 0.0
    """Extra latency of a call, averaged over the service's traffic."""
    egress_ms: float = 0.0
    rho: dict[str, float] = field(default_factory=dict)
    share: dict[str, float] = field(default_factory=dict)
    """Share of the service's traffic each ready pod receives (pinned connections)."""
    caller_extra: dict[str, float] = field(default_factory=dict)
    """Extra latency of a call as each calling app sees it (its connections' pods)."""
    op_fail: dict[str, tuple[float, str]] = field(default_factory=dict)
    """Operation -> (share of its calls that fail, error kind): a flag fault read by the
    service (``flagfault``), averaged over its pods' traffic."""

    def extra_for(self, caller: str) -> float:
        """Extra latency a call from ``caller`` sees."""
        return self.caller_extra.get(caller, self.extra_ms)


@dataclass
class RouteView:
    """One entry-point route at the instant, from the users' and from the prober's side."""

    rate: float
    """Requests per second the users send to the route (what the load generator counts)."""
    redirected: float = 0.0
    """Requests per second that reach it by a followed redirect (``System.redirects``): the
    entry point serves and logs them besides ``rate``; the user's entry is the POST's."""
    fail: float = 0.0
    causes: list[tuple[float, str, str]] = field(default_factory=list)
    """(probability, error kind, backend the handler called) of a failing user request."""
    extra_ms: float = 0.0
    base_ms: float = 0.0
    """Latency of the page on a healthy system."""
    http_code: int | None = None
    http_share: float = 0.0
    """Share of user requests whose answer an HTTPChaos proxy replaces (the app logged 200)."""
    abort_share: float = 0.0
    """Share of user requests an HTTPChaos proxy aborts before the app sees them."""
    user_dns: tuple[float, str] = (0.0, "")
    frontend_down: float = 0.0
    probe_fail: float = 0.0
    """Chance that a probe request (fresh connection, any ready entry-point pod) errors."""
    probe_extra_ms: float = 0.0

    def probe_failure(self) -> float:
        """Chance that one probe request fails: an error or an answer over the budget."""
        fail = min(1.0, max(0.0, self.probe_fail))
        return fail + (1 - fail) * slow_share(self.base_ms + self.probe_extra_ms)


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
    """Start of the earliest disturbance acting now, a fault or a rolled-out configuration
    change (``disturbed_since``); None when none is."""
    addresses: dict[tuple[str, str], str] = field(default_factory=dict)
    """(caller, callee) -> the address the caller dials when it is not the manifest's."""
    service_ms: Mapping[str, float] = field(default_factory=dict)
    """The system's own processing time per call (``System.service_ms``)."""
    pause_late: Callable[[str, float], float] = field(default=lambda _callee, _budget: 0.0)
    """Share of calls to a service that a runtime pause makes wait beyond a budget (ms):
    the background's (``background.late_share``), zero with noise ``none``."""
    noise: NoiseLevel = NoiseLevel.NONE
    """The background level the scene was built at (the load generator's resets read it)."""

    def at(self, t: float, timelines: dict[str, PodTimeline] | None = None) -> Scene:
        """A shallow copy at instant ``t`` (and over ``timelines``, when given).

        What ``dataclasses.replace`` gives, without its per-field walk through
        ``__init__``: one is made for nearly every instant a scene is asked at."""
        moved = object.__new__(Scene)
        fields = moved.__dict__
        fields.update(self.__dict__)
        fields["t"] = t
        if timelines is not None:
            fields["timelines"] = timelines
        return moved


def address_kind(address: str, callee: str, namespace_hosts: set[str]) -> str | None:
    """How dialling ``address`` for ``callee`` fails: None when it reaches the callee."""
    host = split_address(address)[1]
    try:
        ipaddress.IPv4Address(host)
    except ValueError:
        pass
    else:
        return "dns_random"
    in_cluster = host.startswith(f"{callee}.") and host.endswith((".svc", ".svc.cluster.local"))
    if host == callee or in_cluster:
        return None
    if host in namespace_hosts and host != callee:
        return "unavailable"
    return "dns_error"


def _edge_faults(
    topology: Topology,
    timelines: dict[str, PodTimeline],
    views: dict[str, ServiceView],
    t: float,
    addresses: dict[tuple[str, str], str],
) -> tuple[dict[tuple[str, str], tuple[float, str]], list[tuple[PodTimeline, int | None, float]]]:
    edges: dict[tuple[str, str], tuple[float, str]] = {}
    http: list[tuple[PodTimeline, int | None, float]] = []
    hosts = set(topology.names)
    for app, view in views.items():
        spec = topology.deployment(app) if app in hosts else None
        manifest = {v: k for k, v in spec.env.items()} if spec is not None else {}
        for pod in view.ready:
            line = timelines[pod]
            share = view.share.get(pod, 1.0 / len(view.ready))
            for active in line.active(t, "flag_dial"):
                callee = active.fault.flag_callee
                old = edges.get((app, callee), (0.0, active.fault.flag_kind))[0]
                edges[(app, callee)] = (min(1.0, old + share), active.fault.flag_kind)
            for active in line.active(t, "dns"):
                kind = "dns_random" if active.fault.dns_action == "random" else "dns_servfail"
                for host in active.fault.dns_hosts:
                    old = edges.get((app, host), (0.0, kind))[0]
                    edges[(app, host)] = (min(1.0, old + share), kind)
            if line.pod.env and spec is not None:
                for variable, value in line.pod.env.items():
                    original = spec.env.get(variable)
                    if original is None or original == value or original not in manifest:
                        continue
                    callee = split_address(original)[1]
                    kind_or_none = address_kind(value, callee, hosts)
                    if kind_or_none is None:
                        continue
                    kind = f"{kind_or_none}@{value}"  # error texts read the address
                    old = edges.get((app, callee), (0.0, kind))[0]
                    edges[(app, callee)] = (min(1.0, old + share), kind)
                    addresses[(app, callee)] = value
            if app == topology.entrypoint:
                for active in line.active(t, "http"):
                    http.append((line, active.fault.http_code, active.start))
    return edges, http


def _pod_extra(base: float, line: PodTimeline, t: float, rho: float) -> tuple[float, float]:
    """(extra latency of a call served by this pod, extra egress latency of its calls)."""
    extra = egress = 0.0
    if line.active(t, "cpu"):
        extra += SATURATED_MS if rho >= 1.0 else min(SATURATED_MS, base * (QUEUE_K / (1 - rho) - 1))
    for active in line.active(t, "delay"):
        extra += active.fault.latency_ms
        egress += active.fault.latency_ms
    return extra, egress


def _service_views(
    topology: Topology, timelines: dict[str, PodTimeline], t: float, users: int, pins: Pinning
) -> dict[str, ServiceView]:
    views: dict[str, ServiceView] = {d.name: ServiceView() for d in topology.deployments}
    ms = service_ms(topology)
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
        by_caller = pins.shares(app, view.ready, t)
        view.share = pins.total(by_caller, view.ready)
        base = ms.get(app, 3.0)
        pod_extra: dict[str, float] = {}
        for pod in view.ready:
            line = timelines[pod]
            rho = 0.0
            for active in line.active(t, "cpu"):
                rho = (0.5 + 0.5 * active.fault.cpu_cores) * load * view.share[pod]
                view.rho[pod] = rho
            extra, egress = _pod_extra(base, line, t, rho)
            for active in line.active(t, "flag_errors"):
                op, kind = active.fault.flag_op, active.fault.flag_kind
                old = view.op_fail.get(op, (0.0, kind))[0]
                view.op_fail[op] = (min(1.0, old + view.share[pod] * active.fault.flag_share), kind)
            pod_extra[pod] = extra
            view.extra_ms += view.share[pod] * extra
            view.egress_ms += view.share[pod] * egress
        view.caller_extra = {
            caller: sum(s * pod_extra[p] for p, s in shares.items())
            for caller, shares in by_caller.items()
        }
    return views


def _route_base(call: Call, ms: Mapping[str, float]) -> float:
    """Latency of one call on a healthy system: the callee's work plus its own calls."""
    own = ms.get(call.callee, 3.0)
    return own + sum(child.count * _route_base(child, ms) for child in call.children)


def build_scene(
    topology: Topology,
    timelines: dict[str, PodTimeline],
    t: float,
    users: int,
    noise: NoiseLevel = NoiseLevel.NONE,
) -> Scene:
    """Push the users' traffic through the system as it is at ``t`` (with the background
    of ``noise``: runtime pauses that make a call with a deadline late)."""
    pins = Pinning(topology, timelines, users)
    views = _service_views(topology, timelines, t, users, pins)
    addresses: dict[tuple[str, str], str] = {}
    edges, http = _edge_faults(topology, timelines, views, t, addresses)
    scene = Scene(
        t=t,
        services=views,
        routes={},
        received=defaultdict(float),
        served=defaultdict(lambda: defaultdict(float)),
        call_errors=defaultdict(lambda: defaultdict(float)),
        timelines=timelines,
        addresses=addresses,
        service_ms=service_ms(topology),
        pause_late=_pause_late(topology, noise),
        noise=noise,
    )
    scene.disturbed_since = disturbed_since(topology, timelines, t)
    entry = topology.entrypoint
    front = views[entry]
    user_edge = edges.get((topology.load_generator or "", entry), (0.0, ""))
    user_pins = pins.shares(entry, front.ready, t).get(topology.load_generator or "", {})
    opened = pins.opened(entry, front.ready, t)
    rates = route_rates(topology, users)
    follows = redirects(topology)
    followed: dict[str, float] = defaultdict(float)
    # A redirect's source goes first: its successful answers are its target's extra requests.
    for route in sorted(topology.routes, key=lambda r: r.scope not in follows):
        view = RouteView(rate=rates[route.scope], user_dns=user_edge, frontend_down=front.fail)
        view.redirected = followed[route.scope]
        rate = view.rate + view.redirected
        probe_abort = probe_http = 0.0
        for line, code, applied in http:
            if not _matches(line, route.method, route.path, t):
                continue
            name = line.pod.name
            probe_share = 1.0 / len(front.ready) if name in front.ready else 0.0
            # Connections opened before the rule bypass the proxy (kept-alive Locust users).
            user_share = user_pins.get(name, 0.0) if opened.get(name, -math.inf) >= applied else 0.0
            if code is None:
                probe_abort += probe_share
                view.abort_share += user_share
            else:
                probe_http += probe_share
                view.http_share += user_share
                view.http_code = code
        reach = (1 - user_edge[0]) * (1 - front.fail) * (1 - view.abort_share)
        scene.received[entry] += rate * reach
        survive = 1.0
        extra = front.extra_for(topology.load_generator or "") + front.egress_ms
        probe_extra = front.extra_ms + front.egress_ms
        base = scene.service_ms.get(entry, 8.0)
        for call in route_calls(topology, route.scope):
            fail, causes, call_extra = _call(scene, edges, entry, call, rate * reach * survive)
            extra += call.count * call_extra
            probe_extra += call.count * call_extra
            base += call.count * _route_base(call, scene.service_ms)
            if call.fatal and fail > 0:
                view.causes.extend((survive * p * call.count, k, s) for p, k, s in causes)
                survive *= (1 - fail) ** call.count
        view.extra_ms, view.probe_extra_ms, view.base_ms = extra, probe_extra, base
        ok_user = (1 - user_edge[0]) * (1 - front.fail) * (1 - view.abort_share)
        ok_user *= (1 - view.http_share) * survive
        view.fail = 1 - ok_user
        ok_probe = (1 - front.fail) * (1 - probe_abort) * (1 - probe_http) * survive
        view.probe_fail = 1 - ok_probe
        scene.routes[route.scope] = view
        target = follows.get(route.scope)
        if target is not None:
            followed[target] += view.rate * ok_user
    scene.routes = {r.scope: scene.routes[r.scope] for r in topology.routes}
    return scene


def disturbed_since(
    topology: Topology, timelines: dict[str, PodTimeline], t: float
) -> float | None:
    """Start of the earliest disturbance acting at ``t``: a fault on a pod's timeline, or a
    pod that runs a configuration other than its manifest's (env values that differ, a
    memory limit below the manifest's: a rolled-out ConfigFault), since that pod's creation.
    None when nothing disturbs the system."""
    starts = [a.start for line in timelines.values() for a in line.faults if a.start <= t < a.end]
    names = set(topology.names)
    for line in timelines.values():
        pod = line.pod
        if pod.app not in names or not pod.exists(t):
            continue
        spec = topology.deployment(pod.app)
        changed = any(spec.env.get(k) != v for k, v in pod.env.items())
        if changed or pod.memory_limit < memory_bytes(spec.main.memory_limit):
            starts.append(pod.created_at)
    return min(starts) if starts else None


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
    """(failure probability, causes, extra ms) of one call; accumulates traffic on the way.

    A handler stops at its first failing call that it does not tolerate, so each call's
    traffic is what survived the fatal calls before it."""
    callee = scene.services.get(call.callee) or ServiceView(fail=1.0)
    caller_view = scene.services.get(caller) or ServiceView()
    p_edge, edge_kind = edges.get((caller, call.callee), (0.0, ""))
    attempts = rate * call.count
    arrive = attempts * (1 - p_edge) if callee.ready else 0.0
    scene.received[call.callee] += arrive
    child_survive = 1.0
    child_causes: list[tuple[float, str, str]] = []
    extra = caller_view.egress_ms + callee.extra_for(caller)
    for child in call.children:
        c_fail, c_causes, c_extra = _call(scene, edges, call.callee, child, arrive * child_survive)
        extra += child.count * c_extra
        if child.fatal and c_fail > 0:
            child_causes.extend((child_survive * p * child.count, k, s) for p, k, s in c_causes)
            child_survive *= (1 - c_fail) ** child.count
    own_fail, own_kind = (callee.fail, callee.kind) if callee.ready else (1.0, "unavailable")
    flagged = callee.op_fail.get(call.op) if callee.ready else None
    if flagged is not None:
        own_fail, own_kind = _flag_failure(scene, call, arrive, (own_fail, own_kind), flagged)
    if call.deadline_ms is not None and own_fail < 1.0:
        base = _route_base(call, scene.service_ms)
        late = slow_share_at(base + extra, call.deadline_ms)
        late = late if late > 0.001 else 0.0
        paused = scene.pause_late(call.callee, call.deadline_ms - base - extra)
        late = 1 - (1 - late) * (1 - paused)
        if late > 0:
            own_fail = 1 - (1 - own_fail) * (1 - late)
            own_kind = "deadline" if late >= own_fail / 2 else own_kind
        extra = min(extra, max(0.0, call.deadline_ms - base))
    served_ok = arrive * (1 - own_fail) * child_survive
    scene.served[call.callee][call.op] += served_ok
    causes: list[tuple[float, str, str]] = []
    if p_edge > 0:
        causes.append((p_edge, edge_kind, call.callee))
        scene.call_errors[caller][(call.callee, edge_kind)] += attempts * p_edge
    if own_fail > 0:
        p = (1 - p_edge) * own_fail
        causes.append((p, own_kind, call.callee))
        scene.call_errors[caller][(call.callee, own_kind)] += attempts * p
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


def _flag_failure(
    scene: Scene,
    call: Call,
    arrive: float,
    own: tuple[float, str],
    flagged: tuple[float, str],
) -> tuple[float, str]:
    """The callee's failure with a flag fault on the call's operation added (``flagfault``).

    A failure the reader catches (``flag_caught``) leaves the call successful: it is the
    reader's own failed call to the first service its handler calls (or to itself), which
    its renderers log; any other fails the call like the callee's own error would."""
    share, kind = flagged
    if kind == "flag_caught":
        failing = call.children[0].callee if call.children else call.callee
        scene.call_errors[call.callee][(failing, kind)] += arrive * share
        return own
    fail = 1 - (1 - own[0]) * (1 - share)
    return fail, (kind if share >= fail / 2 else own[1])


def _pause_late(topology: Topology, noise: NoiseLevel) -> Callable[[str, float], float]:
    """``Scene.pause_late`` for ``topology``'s services at ``noise``."""
    names = set(topology.names)

    def late(callee: str, budget_ms: float) -> float:
        if callee not in names:
            return 0.0
        spec = topology.deployment(callee)
        return late_share(spec.language, spec.main.cpu_limit, budget_ms, noise)

    return late


def slow_share_at(mean_ms: float, limit_ms: float) -> float:
    """Chance that a call of mean latency ``mean_ms`` takes longer than ``limit_ms``."""
    if mean_ms <= 0:
        return 0.0
    z = math.log(limit_ms / mean_ms) / 0.35
    return 0.5 * math.erfc(z / math.sqrt(2.0))
