"""Online Boutique's per-service runtime facts the simulator needs beyond its topology.

- how long a new pod takes to become ready, per service;
- the probe cadence of the release manifest;
- which images have no shell (Chaos Mesh's DNSChaos needs one).

The kubelet's events and cAdvisor's ``image`` label name the image the pod spec names,
which is the topology's template image (the release manifest's
``us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo/<service>:v0.10.6``,
``redis:alpine``), so ``System.images`` stays empty: pod state, events and series agree.
"""

from __future__ import annotations

STARTUP_S: dict[str, float] = {
    "frontend": 10.0,
    "adservice": 22.0,
    "cartservice": 15.0,
    "redis-cart": 5.0,
}
"""Seconds until a new pod is ready: its probes' initialDelaySeconds plus a little (the
engine's default for the others)."""

PROBES: dict[str, tuple[float, float, float]] = {
    "frontend": (10.0, 10.0, 10.0),
    "adservice": (15.0, 15.0, 20.0),
    "currencyservice": (10.0, 10.0, 0.0),
    "cartservice": (10.0, 10.0, 15.0),
    "redis-cart": (5.0, 5.0, 0.0),
    "recommendationservice": (5.0, 5.0, 0.0),
    "checkoutservice": (10.0, 10.0, 0.0),
    "emailservice": (5.0, 5.0, 0.0),
    "paymentservice": (10.0, 10.0, 0.0),
    "shippingservice": (5.0, 10.0, 0.0),
    "productcatalogservice": (10.0, 10.0, 0.0),
}
"""(readiness period, liveness period, readiness initial delay) in seconds per app, from
the release manifest (``online-boutique/kubernetes-manifests.yaml``; 10 s where it sets no
``periodSeconds``). Every probe has the default 1 s timeout and failureThreshold 3. The
load generator has no probes."""

NO_SHELL: dict[str, str] = {
    "frontend": "no shell in the image (gcr.io/distroless/static)",
    "checkoutservice": "no shell in the image (gcr.io/distroless/static)",
    "productcatalogservice": "no shell in the image (gcr.io/distroless/static)",
    "shippingservice": "no shell in the image (gcr.io/distroless/static)",
    "cartservice": "no shell in the image (runtime-deps noble-chiseled)",
}
"""Why chaos-daemon's ``sh -c "cp /etc/resolv.conf ..."`` (dns_server.go L57, L74) fails in
each of these callers; every other container has a shell but a read-only root
(``readOnlyRootFilesystem: true`` in the release manifest), so the backup copy under /etc
fails instead."""
