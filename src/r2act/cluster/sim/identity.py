"""Names a real cluster assigns that the simulator's state does not keep: UIDs, IPs, images.

The kubelet names a pod's UID in its BackOff events and kube-state-metrics labels pod
series with ``uid``; probes and clients print pod and ClusterIP addresses. These are pure
functions of the pod or service name, so every text and series that shows one agrees
with every other, and a run is reproducible without storing them.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache

from r2act.systems import DEFAULT_SYSTEM, SYSTEMS

REGISTRY = "us-central1-docker.pkg.dev/google-samples/microservices-demo/"
"""Where the release manifest pulls Online Boutique's images from."""
VERSION = "v0.10.6"
PAUSE_IMAGE = "gcr.io/google-containers/pause:latest"
"""The image Chaos Mesh's pod-failure swaps in (chart default)."""

_DEFAULT = SYSTEMS[DEFAULT_SYSTEM]
"""The simulated system's topology (the engine renders the default system; see docs/systems.md)."""


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


@lru_cache(maxsize=256)
def cluster_ip(service: str) -> str:
    """spec.clusterIP of ``service`` in kind's service network (10.96.0.0/16)."""
    d = _digest("clusterip", service)
    return f"10.96.{d[0] % 250 + 1}.{d[1] % 250 + 2}"


def container_id(seed: int, pod: str, instance: int | str) -> str:
    """containerd's 64-hex id of one container instance (or ``"sandbox"``) of ``pod``."""
    return _digest("container", str(seed), pod, str(instance)).hex()


def image(app: str) -> str:
    """The main container's image as the release manifest names it."""
    if app == "redis-cart":
        return "redis:alpine"
    return f"{REGISTRY}{app}:{VERSION}"


PORTS: dict[str, int] = {d.name: d.service_port or 0 for d in _DEFAULT.deployments}
"""Service port per deployment (what clients dial)."""
CONTAINER_PORTS: dict[str, int] = {d.name: d.main.port or 0 for d in _DEFAULT.deployments}
"""Main container port per deployment (what probes hit)."""
