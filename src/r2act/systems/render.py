"""How a system's services write their log lines: the hooks the simulator calls.

The engine (``cluster/sim``) decides *how often* each kind of line occurs (request rates,
failed calls, probes, restarts, all read off the scene); a system decides *what* its own
services print for each. A system declares that in one :class:`Renderers`
(``System.renderers``): each hook is called once per pod and key (an operation, a failed
call, a request shape) and returns a renderer, a closure with the pod's constant parts
already filled in, so the per-line work is the closure's alone. A hook that returns
``None`` means the service prints nothing for that occurrence; a system without
renderers (a test's toy system) therefore logs nothing of its own, and the engine still
renders everything that is not the application's (the kubelet, Chaos Mesh, Redis, Locust).

Service addresses are here too, because both sides print them: a client's dial error
names the callee's ClusterIP, which must be the one the engine's texts name.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from r2act.schema import LogLine, Topology

Render = Callable[[float, random.Random, list[LogLine]], None]
"""Appends the lines of one occurrence at a timestamp, drawing from the given generator."""
Sized = tuple[int, Render]
"""(lines per occurrence, renderer)."""
Kind = tuple[float, int, Render]
"""(occurrences per second, lines per occurrence, renderer)."""
RequestError = tuple[str, str] | None
"""(failure kind, backend the handler called) of a failed request; None when it succeeded."""


SpanAsk = tuple[str, str, bool | None]
"""Which span of the logging service a line is written in: (what, name, error).

``what`` is ``op`` (the outermost span of the handler serving the operation ``name``, its
server span; ``*``: any operation), ``op-inner`` (the innermost one, a span the handler
opens and makes current around its code), ``failed`` (the server span of a handler whose
call to the service ``name`` failed) or ``task`` (a traced client's task span, ``name``
the span names from the outermost down, joined by ``/``). ``error``: the span's status
must be an error (True), must not be (False), or either (None)."""


class TraceIds(Protocol):
    """The trace context a service's log line carries (the engine's ``tracebook`` when
    traces are collected, else ``NO_TRACES``)."""

    def placed(self, ask: SpanAsk, ts: float, drawn: tuple[str, str]) -> tuple[str, str, float]:
        """(trace id, span id, time) of the line drawn at ``ts`` and written in the span
        ``ask`` names: ``drawn`` is the renderer's own per-occurrence draw, which decides
        (by the sampler's rule on its lower 64 bits) whether the request is one the trace
        store keeps; a line of a kept request is written while its span runs, so its time
        moves there (a line of any other request keeps ``ts``)."""
        ...


class _DrawnIds:
    """Traces not collected: a line carries the ids its renderer drew, at its own time."""

    def placed(self, ask: SpanAsk, ts: float, drawn: tuple[str, str]) -> tuple[str, str, float]:
        return (*drawn, ts)


NO_TRACES: TraceIds = _DrawnIds()
"""The trace context of lines when no trace store is read: each line's own draw."""


class PodIdentity(Protocol):
    """The pod a renderer writes for (the engine's ``podlogs.PodLogger`` is one)."""

    topology: Topology
    pod: str
    app: str
    container: str
    seed: int
    sessions: list[str]
    """One session id per load-generator user."""
    route_ms: dict[str, float]
    """Healthy latency per entry-point route scope."""
    node: str
    """The pod's 'MAC address' (12 hex digits): the node part of version-1 UUIDs it makes."""
    traces: TraceIds
    """Where the trace ids of the service's log lines come from (``NO_TRACES``: drawn)."""


def _no_call(logger: PodIdentity, first: str, second: str = "") -> Sized | None:
    return None


def _no_request(
    logger: PodIdentity, method: str, path: str, extra_ms: float, error: RequestError
) -> Sized | None:
    return None


def _no_warning(logger: PodIdentity, callee: str, kind: str) -> Render | None:
    return None


def _no_start(logger: PodIdentity, ts: float, out: list[LogLine]) -> None:
    return None


def _no_periodic(logger: PodIdentity) -> tuple[Kind, ...]:
    return ()


def _no_relay_periodic(source: PodIdentity, relay: RelayIdentity) -> tuple[Kind, ...]:
    return ()


@dataclass(frozen=True)
class Renderers:
    """A system's line renderers; every default prints nothing."""

    served: Callable[[PodIdentity, str], Sized | None] = _no_call
    """(logger, operation): what the service prints for one call it handled."""
    failed_call: Callable[[PodIdentity, str, str], Sized | None] = _no_call
    """(logger, callee, failure kind): what a backend prints when its own call failed."""
    request: Callable[[PodIdentity, str, str, float, RequestError], Sized | None] = _no_request
    """(logger, method, route path, extra ms, error): the entry point's lines for one user
    request, from ``request started`` to its end, with the handler's lines between."""
    tolerated: Callable[[PodIdentity, str, str], Render | None] = _no_warning
    """(logger, callee, failure kind): the entry point's line for a failed call its handler
    tolerates (renders the page anyway); None when it logs nothing for that callee."""
    startup: Callable[[PodIdentity, float, list[LogLine]], None] = _no_start
    """(logger, ts, out): the banner a container prints when it starts."""
    periodic: Callable[[PodIdentity], tuple[Kind, ...]] = _no_periodic
    """(logger): lines at a fixed rate whatever the load (health checks), per serving pod."""


class RelayIdentity(Protocol):
    """The pod a relay's lines are written on (the relay deployment's pod, e.g. a node's
    log collector): the stream a relayed line lands in."""

    pod: str
    container: str
    app: str


@dataclass(frozen=True)
class RelayRenderers:
    """A relay's renderers: like :class:`Renderers`' hooks, but told the relay pod the
    lines go to besides the source pod whose occurrence they record. A hook returning
    ``None`` relays nothing for that occurrence."""

    served: Callable[[PodIdentity, RelayIdentity, str], Sized | None]
    """(source pod, relay pod, operation)."""
    failed_call: Callable[[PodIdentity, RelayIdentity, str, str], Sized | None]
    """(source pod, relay pod, callee, failure kind)."""
    request: Callable[[PodIdentity, RelayIdentity, str, str, float, RequestError], Sized | None]
    """(entry-point pod, relay pod, method, route path, extra ms, error)."""
    startup: Callable[[PodIdentity, RelayIdentity, float, list[LogLine]], None]
    """(source pod, relay pod, ts, out)."""
    periodic: Callable[[PodIdentity, RelayIdentity], tuple[Kind, ...]] = _no_relay_periodic
    """(source pod, relay pod): lines at a fixed rate whatever the load, per serving source
    pod (a load generator's per-task records: its users run their tasks whatever the
    system answers)."""


@dataclass(frozen=True)
class LogRelay:
    """A deployment whose pod prints lines other pods send it (``System.log_relay``).

    Some systems' services export their log records to an agent (a log collector on the
    node) that prints them on its own stdout: those lines are read from the agent's pod,
    not the service's. The engine places them: for every serving pod of a ``sources``
    service, the same kinds of occurrence at the same rates as the pod's own lines,
    rendered by ``renderers`` and appended to the relay pod's stream (lost while the relay
    pod is down). ``stdout`` names the deployments whose own pod log holds lines; the
    engine's own renderings for off-the-shelf software (the load generator's console)
    are left off a deployment that is not in it."""

    deployment: str
    """The relay's deployment in the topology (one pod: a node agent on a one-node
    cluster)."""
    sources: frozenset[str]
    """Deployments whose lines (some of them) go to the relay."""
    stdout: frozenset[str]
    """Deployments whose own pod log holds (some of) their lines."""
    renderers: RelayRenderers


@lru_cache(maxsize=256)
def cluster_ip(service: str) -> str:
    """spec.clusterIP of ``service`` in kind's service network (10.96.0.0/16), a pure
    function of its name, so every text that names it agrees."""
    d = hashlib.sha256(f"clusterip|{service}".encode()).digest()
    return f"10.96.{d[0] % 250 + 1}.{d[1] % 250 + 2}"
