"""Names a real cluster assigns that the simulator's state does not keep: UIDs, IPs, images.

The kubelet names a pod's UID in its BackOff events and kube-state-metrics labels pod
series with ``uid``; probes and clients print pod and ClusterIP addresses. These are pure
functions of the pod or service name, so every text and series that shows one agrees
with every other, and a run is reproducible without storing them. (A service's ClusterIP
is ``systems.render.cluster_ip``: a system's client errors print it too.)

``PodFacts`` gathers, per deployment, what the kubelet knows of its pods beyond the
state: the main container, the image it reports, the probe handler, port and cadence,
read from the topology and its system once per cluster.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from functools import lru_cache

from r2act.schema import Topology
from r2act.systems import system_of

PAUSE_IMAGE = "gcr.io/google-containers/pause:latest"
"""The image Chaos Mesh's pod-failure swaps in (chart default)."""


def _digest(*parts: str) -> bytes:
    return hashlib.sha256("|".join(parts).encode()).digest()


@lru_cache(maxsize=4096)
def pod_uid(pod: str) -> str:
    """metadata.uid of ``pod`` (a version-4 UUID drawn from its name)."""
    h = _digest("uid", pod).hex()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"


@lru_cache(maxsize=4096)
def pod_ip(pod: str) -> str:
    """status.podIP of ``pod`` in kind's pod network (10.244.0.0/24 on the one node)."""
    d = _digest("ip", pod)
    return f"10.244.0.{2 + d[0] % 250}"


def container_id(seed: int, pod: str, instance: int | str) -> str:
    """containerd's 64-hex id of one container instance (or ``"sandbox"``) of ``pod``."""
    return _digest("container", str(seed), pod, str(instance)).hex()


@dataclass(frozen=True)
class PodFacts:
    """What the kubelet knows of one deployment's pods that the state does not keep."""

    container: str
    """The main container's name."""
    image: str
    """The image the kubelet's events and cAdvisor's series name."""
    probe: str
    """The probe handler: ``http``, ``tcp`` or ``grpc`` (the default for a server)."""
    port: int
    """The main container's port, which probes hit (0: none)."""
    health_path: str
    """The path an HTTP probe gets (the entry point's health endpoint)."""
    readiness_s: float
    """The readiness probe's period (0: the deployment has no probes)."""
    liveness_s: float
    """The liveness probe's period (0: the deployment has no probes)."""


def pod_facts(topology: Topology) -> dict[str, PodFacts]:
    """``PodFacts`` of every deployment of ``topology``, by name."""
    system = system_of(topology)
    facts: dict[str, PodFacts] = {}
    for spec in topology.deployments:
        main = spec.main
        readiness, liveness, _ = system.probes.get(spec.name, (0.0, 0.0, 0.0))
        facts[spec.name] = PodFacts(
            container=main.name,
            image=system.images.get(spec.name, main.image),
            probe=main.probe or "grpc",
            port=main.port or 0,
            health_path=topology.health_path,
            readiness_s=readiness,
            liveness_s=liveness,
        )
    return facts
