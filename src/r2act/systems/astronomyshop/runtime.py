"""The Astronomy Shop's per-service runtime facts beyond its topology.

- **Images**: the chart names ``ghcr.io/open-telemetry/demo:2.2.0-<service>`` for every
  demo service, and its own image for flagd, postgresql and valkey-cart; the kubelet's
  events and cAdvisor's ``image`` label name the same reference, so ``IMAGES`` is the
  topology's template image, spelled out per deployment.
- **Probes**: the chart sets none (``values.yaml`` has no ``readinessProbe`` or
  ``livenessProbe`` anywhere; nor does the rendering), so ``PROBES`` is empty and no
  probe event is ever due.
- **Start-up**: without probes a pod is Ready when its containers have started; what
  delays it is the init containers that wait for a dependency (``wait-for-kafka`` on
  accounting, checkout and fraud-detection, ``wait-for-valkey-cart`` on cart, flagd's
  ``init-config``). The seconds below are simulation parameters, not measurements.
- **Flag store**: the ConfigMap, data key and Deployment a FlagFault names
  (``cluster.flag_fault_object``): flagd serves the copy an init container makes of the
  chart's ConfigMap, so an edit takes a restart of that Deployment.
- **No shell**: the images whose final stage is distroless (chaos-daemon's DNSChaos runs
  ``sh`` in the target container and fails there). The chart sets no
  ``readOnlyRootFilesystem``, so every other container can be rewritten.
"""

from __future__ import annotations

from r2act.systems.astronomyshop.topology import COLLECTOR_SPEC, SERVICES, image_of

IMAGES: dict[str, str] = {
    **{name: image_of(name) for name in SERVICES},
    COLLECTOR_SPEC.name: COLLECTOR_SPEC.main.image,
}
"""Per deployment, the main container's image as the chart's pod template names it (the
collector's: its DaemonSet's)."""

PROBES: dict[str, tuple[float, float, float]] = {}
"""(readiness period, liveness period, readiness initial delay): none, the chart sets no
probe on any container."""

STARTUP_S: dict[str, float] = {
    "kafka": 20.0,  # a JVM broker (KAFKA_HEAP_OPTS -Xmx400M), KRaft controller election
    "accounting": 25.0,  # wait-for-kafka, then the .NET runtime
    "checkout": 22.0,  # wait-for-kafka
    "fraud-detection": 30.0,  # wait-for-kafka, then the JVM
    "cart": 8.0,  # wait-for-valkey-cart
    "ad": 15.0,  # JVM with the OpenTelemetry Java agent
    "flagd": 5.0,  # init-config copies the ConfigMap first
}
"""Seconds until a new pod is ready, where it is not the engine's default: named
simulation parameters derived from the init containers in ``values.yaml`` (not measured
on a cluster)."""

DISTROLESS: dict[str, tuple[str, int]] = {
    "checkout": ("gcr.io/distroless/static-debian12:nonroot", 21),
    "product-catalog": ("gcr.io/distroless/static-debian12:nonroot", 19),
    "shipping": ("gcr.io/distroless/cc-debian13:nonroot", 37),
    "frontend": ("gcr.io/distroless/nodejs22-debian12:nonroot", 45),
    "payment": ("gcr.io/distroless/nodejs22-debian12:nonroot", 16),
    "fraud-detection": ("gcr.io/distroless/java17-debian12:nonroot", 16),
}
"""Per demo service built from distroless: its final base image and the line of that
``FROM`` in ``opentelemetry-demo-2.2.0/src/<service>/Dockerfile``."""

NO_SHELL: dict[str, str] = {
    **{
        name: f"no shell in the image ({base}, src/{name}/Dockerfile L{line})"
        for name, (base, line) in DISTROLESS.items()
    },
    "flagd": (
        "no shell in the image (ghcr.io/open-feature/flagd:v0.12.9, built FROM "
        "gcr.io/distroless/static:nonroot by open-feature/flagd's flagd/build.Dockerfile; "
        "not in the pinned reference: shared/facts/astronomy-shop-traces-2026.md 1.3)"
    ),
}
"""Why DNSChaos cannot apply in each of these (the 7 distroless images); the six demo
images are checked against their Dockerfile's final ``FROM`` by
``tests/unit/systems/test_astronomyshop_topology.py``."""

FLAG_CONFIG_MAP = "flagd-config"
"""The ConfigMap holding the flag file (``opentelemetry-demo-chart-0.40.10/templates/
flagd-config.yaml`` L5)."""
FLAG_FILE_KEY = "demo.flagd.json"
"""Its data key: the chart's ``flagd/*.json`` (``templates/flagd-config.yaml`` L10; the one
file there, ``flagd/demo.flagd.json``)."""
FLAG_DEPLOYMENT = "flagd"
"""The Deployment serving the flags from an emptyDir its init container seeds from that
ConfigMap (``examples/bring-your-own-observability/rendered/component.yaml`` L1002-L1004,
with ``--uri`` L1046-L1047, the copy L1113, the volumes L1122-L1125)."""
