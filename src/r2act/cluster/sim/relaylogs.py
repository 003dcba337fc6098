"""Lines a pod sends to another pod that prints them: a system's log relay.

Some systems' services export their log records to a node agent (a log collector) that
prints them on its own stdout, so they are read from the agent's pod, not the service's
(``System.log_relay``, a ``systems.render.LogRelay``). This module places them, naming
no service: for every pod of a ``sources`` deployment, the same kinds of occurrence at
the same rates as the pod's own lines (served calls, failed calls, the entry point's
requests, start-ups: the rate code is ``PodLogger``'s, run with the relay's hooks), each
rendered by the relay's renderers and put on the relay pod's stream. ``logs`` then keeps
them as the relay pod's own lines, so they are lost while the relay pod is down (its
silent intervals), whatever the source pod does; a source that is down serves nothing,
so it relays nothing either.

A relayed record carries the trace context of the record its source exported (the
source's ``TraceIds``), so the relay prints the ids the source's span has.

A system without a relay gets ``None`` from :func:`relay_of` and its logs are unchanged.
"""

from __future__ import annotations

import random
from bisect import bisect_right
from collections.abc import Callable
from itertools import accumulate

from r2act.cluster.sim.podlogs import PodLogger
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.seeding import Reseeder
from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import LogLine, Topology
from r2act.systems import system_of
from r2act.systems.render import (
    NO_TRACES,
    LogRelay,
    PodIdentity,
    RelayIdentity,
    RequestError,
    Sized,
    TraceIds,
)

Starts = Callable[[PodTimeline, float, float], list[float]]
"""When a pod's container starts within [lo, hi) (``logs``' start instants)."""
Draw = Callable[[random.Random, float], int]
"""A Poisson draw of the given mean (``logs.poisson``)."""
TracesOf = Callable[[str], TraceIds]
"""Deployment -> where its lines take their trace context from (``logs.LogSource``'s)."""


def _drawn(app: str) -> TraceIds:
    return NO_TRACES


class RelayedLogger(PodLogger):
    """A source pod's logger whose hooks are the relay's, bound to the relay pod: the
    lines name the source (its identity is the source pod's) and land on the relay pod.

    Relayed: the kinds whose rates follow the pod's traffic, its start-ups and the relay's
    own fixed-rate kinds (``RelayRenderers.periodic``: a load generator's per-task
    records); not what the engine renders for off-the-shelf software itself (Redis' saves,
    Locust's console), the system's stdout periodic lines, nor tolerated-call warnings."""

    def __init__(
        self,
        source: tuple[Topology, str, str, str],
        relay: LogRelay,
        to: RelayIdentity,
        *,
        seed: int,
        users: int,
        traces: TraceIds = NO_TRACES,
    ) -> None:
        topology, pod, app, container = source
        super().__init__(topology, pod, app, container, seed=seed, users=users, traces=traces)
        hooks = relay.renderers

        def served(me: PodIdentity, op: str) -> Sized | None:
            return hooks.served(me, to, op)

        def failed(me: PodIdentity, callee: str, kind: str) -> Sized | None:
            return hooks.failed_call(me, to, callee, kind)

        def request(
            me: PodIdentity, method: str, path: str, extra_ms: float, error: RequestError
        ) -> Sized | None:
            return hooks.request(me, to, method, path, extra_ms, error)

        def startup(me: PodIdentity, ts: float, out: list[LogLine]) -> None:
            hooks.startup(me, to, ts, out)

        self._served, self._failed_call, self._request = served, failed, request
        self._tolerated = _no_warning
        self._startup = startup
        self._periodic = hooks.periodic(self, to)


def _no_warning(me: PodIdentity, callee: str, kind: str) -> None:
    return None


class Relay:
    """The relay of one system: its deployment, and one relayed logger per source pod."""

    def __init__(
        self,
        topology: Topology,
        relay: LogRelay,
        *,
        seed: int,
        users: int,
        scale: float,
        traces: TracesOf = _drawn,
    ) -> None:
        self.traces = traces
        """The relayed records carry their source's trace context: the record they copy
        is the one the source exported."""
        self.topology, self.relay, self.seed, self.users, self.scale = (
            topology,
            relay,
            seed,
            users,
            scale,
        )
        self._loggers: dict[tuple[str, str], RelayedLogger] = {}
        self._reseed = Reseeder(seed, "relay")
        """One generator re-seeded per (source pod, piece): the draws of a fresh generator
        of that key, without building one each time (renderers use it only while called)."""

    @property
    def deployment(self) -> str:
        """The relay's deployment (its pods print the relayed lines)."""
        return self.relay.deployment

    def _logger(self, source: PodTimeline, to: RelayIdentity) -> RelayedLogger:
        key = (source.pod.name, to.pod)
        found = self._loggers.get(key)
        if found is None:
            app = source.pod.app
            container = self.topology.deployment(app).main.name
            found = RelayedLogger(
                (self.topology, source.pod.name, app, container),
                self.relay,
                to,
                seed=self.seed,
                users=self.users,
                traces=self.traces(app),
            )
            self._loggers[key] = found
        return found

    def piece(
        self,
        to: RelayIdentity,
        timelines: dict[str, PodTimeline],
        scene: Scene,
        *,
        key: tuple[int, int],
        span: tuple[float, float],
        hooks: tuple[Starts, Draw],
    ) -> list[LogLine]:
        """Every source pod's relayed lines in [lo, hi) on the relay pod ``to``, unsorted.

        Each (source pod, piece) draws from its own seeded generator, so the relayed lines
        do not change the source's own, nor depend on the order pods are visited in."""
        lo, hi = span
        bucket, index = key
        starts, draw = hooks
        out: list[LogLine] = []
        width = hi - lo
        for name in sorted(timelines):
            line = timelines[name]
            pod = line.pod
            if pod.app not in self.relay.sources:
                continue
            if pod.created_at >= hi or (pod.deleted_at is not None and pod.deleted_at <= lo):
                continue
            logger = self._logger(line, to)
            r = self._reseed(f"{pod.name}|{bucket}|{index}")  # key_int's text of the key
            view = scene.services.get(pod.app)
            ready = view.ready if view is not None else []
            share = 1.0 / len(ready) if pod.name in ready else 0.0
            kinds = logger.kinds(scene, share, self.scale)
            if kinds and width > 0:
                cum = list(accumulate(k[0] for k in kinds))
                renders = [k[2] for k in kinds]
                total = cum[-1]
                n = draw(r, total * width)
                times = sorted(lo + width * r.random() for _ in range(n))
                for ts in times:
                    renders[bisect_right(cum, r.random() * total)](ts, r, out)
            for ts in starts(line, lo, hi):
                logger.startup(ts, out)
        return out


def relay_of(
    topology: Topology, *, seed: int, users: int, scale: float, traces: TracesOf = _drawn
) -> Relay | None:
    """The system's relay (``System.log_relay``), or ``None`` when it has none."""
    relay = system_of(topology).log_relay
    if relay is None:
        return None
    return Relay(topology, relay, seed=seed, users=users, scale=scale, traces=traces)
