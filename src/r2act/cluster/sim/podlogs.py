"""What each pod logs, per kind of occurrence, at what rate, given the scene.

A ``PodLogger`` is built once per pod: it resolves the renderers of its service once (the
system's ``System.renderers``; Redis' and Locust's, which are off-the-shelf software, are
the engine's: ``redislog``, ``loadgen``) and exposes ``kinds(scene)`` — a list of (occurrences
per second, lines per occurrence, renderer). Rates are the engine's: they come from the
scene's traffic, so logs rise and fall with the request rate and show the failures the
scene says callers see; what a line says is the renderer's. A call the service's own code
failed (a feature flag's error, ``systems.flags.flag_of_kind``) is also the service's
own failed call: its renderers are asked for ``failed_call(logger, <its own app>, kind)``,
at the rate its callers see that failure, for the line its handler logs when it answers
with the error (most print one; a caller's client error is the caller's). Strictly periodic output
(Locust's stats table) and start-up banners are rendered by ``logs`` at their instants.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from r2act.cluster.sim import loadgen, redislog
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.traffic import Call, route_calls, service_ms
from r2act.schema import LogLine, Topology
from r2act.systems import system_of
from r2act.systems.flags import flag_of_kind
from r2act.systems.logformats import uuid_text
from r2act.systems.render import (
    NO_TRACES,
    Kind,
    PodIdentity,
    Render,
    RequestError,
    Sized,
    TraceIds,
)

__all__ = ["Kind", "PodLogger"]


def _route_ms(topology: Topology, scope: str) -> float:
    """Healthy latency of a route: the entry point's own time plus its calls, sequentially."""

    ms = service_ms(topology)

    def cost(calls: tuple[Call, ...]) -> float:
        return sum(c.count * (ms.get(c.callee, 3.0) + cost(c.children)) for c in calls)

    return ms.get(topology.entrypoint, 8.0) + cost(route_calls(topology, scope))


def answered_failures(scene: Scene, app: str) -> dict[str, float]:
    """Calls per second ``app``'s own code failed (a flag's error), by failure kind: what
    its callers' failed calls to it with such a kind add up to."""
    found: dict[str, float] = {}
    for errors in scene.call_errors.values():
        for (callee, kind), rate in errors.items():
            if callee == app and rate > 0 and flag_of_kind(kind) is not None:
                found[kind] = found.get(kind, 0.0) + rate
    return found


class PodLogger:
    """Renderers for one pod's log lines (a ``systems.render.PodIdentity``)."""

    def __init__(
        self,
        topology: Topology,
        pod: str,
        app: str,
        container: str,
        *,
        seed: int,
        users: int,
        traces: TraceIds = NO_TRACES,
    ) -> None:
        self.topology, self.pod, self.app, self.container = topology, pod, app, container
        self.seed = seed
        self.traces = traces
        """The trace context of its lines (``tracebook``'s when traces are collected)."""
        rnd = random.Random(f"{seed}|sessions")
        self.sessions = [uuid_text(rnd) for _ in range(max(1, users))]
        """One session id per load generator user; backends see them as user ids."""
        self.route_ms = {r.scope: _route_ms(topology, r.scope) for r in topology.routes}
        self.node = f"{random.Random(f'{seed}|{pod}|mac').getrandbits(48):012x}"
        """The pod's 'MAC address': the node part of the version-1 UUIDs it makes."""
        self._renderers: dict[tuple[object, ...], Sized | None] = {}
        self._sized: dict[tuple[str | None, str], Sized | None] = {}
        self._warnings: dict[tuple[str, str], Render | None] = {}
        hooks = system_of(topology).renderers
        self._served, self._failed_call = hooks.served, hooks.failed_call
        self._request, self._tolerated = hooks.request, hooks.tolerated
        language = topology.deployment(app).language
        own: tuple[Kind, ...] = ()
        self._startup: Callable[[PodIdentity, float, list[LogLine]], None]
        if language == redislog.LANGUAGE:
            self._startup = redislog.startup_lines
            own = (redislog.save_lines(self),)
        elif app == topology.load_generator:
            self._startup = loadgen.startup_lines
        else:
            self._startup = hooks.startup
        self._periodic: tuple[Kind, ...] = (*own, *hooks.periodic(self))
        """Lines at a fixed rate whatever the load (health checks, saves), while serving."""

    def startup(self, ts: float, out: list[LogLine]) -> None:
        """What the container prints when it starts at ``ts``."""
        self._startup(self, ts, out)

    def _request_memo(
        self, method: str, path: str, extra_ms: float, error: RequestError
    ) -> Sized | None:
        """Request renderers are built once per pod and key (templates are the costly part)."""
        key = (method, path, extra_ms, error)
        found = self._renderers.get(key)
        if found is None and key not in self._renderers:
            if len(self._renderers) > 2048:
                self._renderers.clear()
            found = self._renderers[key] = self._request(self, method, path, extra_ms, error)
        return found

    def _backend_memo(self, callee: str | None, what: str) -> Sized | None:
        """Served (callee None) or failed-call renderers, built once per pod and key."""
        key = (callee, what)
        if key not in self._sized:
            if callee is None:
                self._sized[key] = self._served(self, what)
            else:
                self._sized[key] = self._failed_call(self, callee, what)
        return self._sized[key]

    # --- rates -------------------------------------------------------------------------

    def kinds(self, scene: Scene, share: float, scale: float) -> list[Kind]:
        """Rates of every kind of line this pod writes in ``scene``."""
        if share <= 0:
            return []
        if self.app == self.topology.entrypoint:
            return self._entrypoint(scene, share, scale)
        kinds: list[Kind] = []
        for op, rate in scene.served.get(self.app, {}).items():
            made = self._backend_memo(None, op)
            if made is not None and rate > 0:
                kinds.append((rate * share * scale, made[0], made[1]))
        for (callee, kind), rate in scene.call_errors.get(self.app, {}).items():
            made = self._backend_memo(callee, kind)
            if made is not None and rate > 0:
                kinds.append((rate * share * scale, made[0], made[1]))
        for kind, rate in answered_failures(scene, self.app).items():
            made = self._backend_memo(self.app, kind)
            if made is not None and rate > 0:
                kinds.append((rate * share * scale, made[0], made[1]))
        kinds.extend(self._periodic)
        return kinds

    def _entrypoint(self, scene: Scene, share: float, scale: float) -> list[Kind]:
        """The entry point's lines: its periodic ones (probes), requests as the app saw them,
        tolerated failures.

        HTTPChaos sits in front of the app: an aborted request never reaches it (no line),
        and a replaced status code is replaced after the app answered (the app logs its
        own status). So only requests that reached the app are rendered, each with the
        status the handler wrote."""
        kinds: list[Kind] = list(self._periodic)
        for route in self.topology.routes:
            view = scene.routes.get(route.scope)
            if view is None:
                continue
            served = view.rate + view.redirected
            reach = served * (1 - view.user_dns[0]) * (1 - view.frontend_down) * share * scale
            reach *= 1 - view.abort_share
            if reach <= 0:
                continue
            method, path = route.method, route.path
            sum_p = sum(p for p, _, _ in view.causes)
            total_p = min(1.0, sum_p)
            norm = total_p / sum_p if sum_p > 0 else 0.0
            ok = reach * (1 - total_p)
            slow = float(round(view.extra_ms))
            made = self._request_memo(method, path, slow, None)
            if made is not None:
                kinds.append((ok, made[0], made[1]))
            for share_p, kind, svc in view.causes:
                made = self._request_memo(method, path, slow, (kind, svc))
                if made is not None:
                    kinds.append((reach * share_p * norm, made[0], made[1]))
        for (callee, kind), rate in scene.call_errors.get(self.app, {}).items():
            if rate > 0:
                key = (callee, kind)
                warn = self._warnings.get(key)
                if warn is None and key not in self._warnings:
                    warn = self._warnings[key] = self._tolerated(self, callee, kind)
                if warn is not None:
                    kinds.append((rate * share * scale, 1, warn))
        return kinds
