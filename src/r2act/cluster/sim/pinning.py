"""Which pod each client's connection is pinned to, and so how a service's load spreads.

A gRPC client dials one ClusterIP name with no balancer configuration (Online Boutique's Go
clients: ``grpc.NewClient(addr)`` in its entry point's ``main.go`` L225-235; its Python and
Node clients likewise open one channel): kube-proxy picks one ready endpoint when the
HTTP/2 connection is opened and every later call of that client goes to that pod. A
connection is re-opened only when it breaks: the pod is deleted or its container restarts
(or the client's own container restarts). Hence replicas added later receive no traffic
from existing gRPC clients (scale-out does not relieve a stressed backend pod), while a
restart of the stressed service moves every client to the fresh pods.

The load generator is the exception when the topology says it does not reuse connections
(``Topology.load_connection_reuse``; the deployment ``deploy/`` installs sends
``Connection: close``, so Go's net/http server closes each connection after its reply):
every user request is a new connection, and kube-proxy spreads new connections over the
ready pods, so user traffic is even over the ready entry-point pods at every instant and
every connection is opened after any rule applied before the request. Locust's stock
``FastHttpUser`` keeps one connection per user alive instead, pinned like a gRPC client.

A client whose pinned pod is not ready at the instant (its container is down) is counted
as spread over the ready pods: its calls fail over once the broken connection is redialled.
"""

from __future__ import annotations

import zlib
from collections import defaultdict

from r2act.cluster.sim.timeline import PodTimeline
from r2act.schema import Topology

MAX_HOPS = 32
"""Re-connections followed per client before giving up (each is a pod deletion or restart)."""


class Pinning:
    """Connection targets of every client in one history (pure function of the timelines)."""

    def __init__(self, topology: Topology, timelines: dict[str, PodTimeline], users: int) -> None:
        self.topology, self.timelines, self.users = topology, timelines, max(1, users)
        by_app: dict[str, list[PodTimeline]] = defaultdict(list)
        for line in timelines.values():
            by_app[line.pod.app].append(line)
        self.by_app = dict(by_app)

    def _fresh(self, caller: str) -> bool:
        """Whether ``caller`` opens a new connection for every request."""
        return caller == self.topology.load_generator and not self.topology.load_connection_reuse

    def _connections(self, caller: str) -> int:
        return self.users if caller == self.topology.load_generator else 1

    def _target(
        self, client: PodTimeline, index: int, app: str, ready: list[str], t: float
    ) -> tuple[str | None, float]:
        """(pod the connection uses at ``t`` or None if its pod is not ready, when opened)."""
        at = max([client.pod.created_at] + [ts for ts, _ in client.restarts if ts <= t])
        callees = self.by_app.get(app, [])
        for _ in range(MAX_HOPS):
            candidates = sorted(c.pod.name for c in callees if c.pod.exists(at) and c.ready(at))
            if not candidates:  # the client redials until a pod becomes ready
                later = [c.pod.ready_at for c in callees if at < c.pod.ready_at <= t]
                if not later:
                    return None, at
                at = min(later)
                continue
            key = f"{client.pod.name}|{index}|{app}|{at:.3f}".encode()
            pick = candidates[zlib.crc32(key) % len(candidates)]
            line = self.timelines[pick]
            ends = [ts for ts, _ in line.restarts if at < ts <= t]
            if line.pod.deleted_at is not None and at < line.pod.deleted_at <= t:
                ends.append(line.pod.deleted_at)
            if not ends:
                return (pick if pick in ready else None), at
            at = min(ends)
        return None, at

    def shares(self, app: str, ready: list[str], t: float) -> dict[str, dict[str, float]]:
        """Per calling app, the share of its calls to ``app`` that each ready pod receives."""
        out: dict[str, dict[str, float]] = {}
        if not ready:
            return out
        for caller in self.topology.callers(app):
            clients = [c for c in self.by_app.get(caller, []) if c.pod.exists(t)]
            if not clients:
                continue
            if self._fresh(caller):
                out[caller] = {name: 1.0 / len(ready) for name in ready}
                continue
            conns = self._connections(caller)
            weight = 1.0 / (len(clients) * conns)
            dist: dict[str, float] = defaultdict(float)
            for client in clients:
                for index in range(conns):
                    pod, _ = self._target(client, index, app, ready, t)
                    if pod is None:
                        for name in ready:
                            dist[name] += weight / len(ready)
                    else:
                        dist[pod] += weight
            out[caller] = dict(dist)
        return out

    def opened(self, app: str, ready: list[str], t: float) -> dict[str, float]:
        """When the load generator's connections to each ready pod of ``app`` were opened
        (the latest per pod): a rule applied after that does not see them."""
        found: dict[str, float] = {}
        generator = self.topology.load_generator
        if generator is None:
            return found
        if self._fresh(generator):
            return dict.fromkeys(ready, t)
        for client in self.by_app.get(generator, []):
            if not client.pod.exists(t):
                continue
            for index in range(self._connections(generator)):
                pod, at = self._target(client, index, app, ready, t)
                if pod is not None:
                    found[pod] = max(found.get(pod, at), at)
        return found

    @staticmethod
    def total(by_caller: dict[str, dict[str, float]], ready: list[str]) -> dict[str, float]:
        """Share of the service's whole traffic per ready pod (callers weighted equally)."""
        if not by_caller:
            return {name: 1.0 / len(ready) for name in ready}
        out = dict.fromkeys(ready, 0.0)
        for dist in by_caller.values():
            for name, share in dist.items():
                out[name] = out.get(name, 0.0) + share / len(by_caller)
        return out
