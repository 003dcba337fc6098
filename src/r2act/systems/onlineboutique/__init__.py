"""Online Boutique v0.10.6, r2act's first system: everything true of that application alone.

- ``topology``: deployments, call graph, routes and load model of the release manifests,
  and the frontend's error wraps (which backend a failed request names);
- ``traffic``: the handlers' call patterns, per-call costs and the users' think time;
- ``catalogue``: the realizable (service, fault type) cells, with their evidence;
- ``texts``: every line its services print, with the upstream line it reproduces;
- ``renderers`` (``render_frontend``, ``render_backend``, ``render_startup``, ``errors``):
  what each service prints per request, call, failed call and start, in its own format;
- ``runtime``: start-up times, probe cadence and shell-less images per service;
- ``shop``: its catalogue's ids, currencies, and the forms the health oracle posts;
- ``policy``: its recovery-policy rules (which plans recover each fault type there);
- ``tracing``: its seven instrumented services and the shape of each span they open;
- ``steps``: the steps its handlers name when they wrap a failed call's error;
- its install files are in ``deploy/`` (kind cluster, the load generator's locustfile).
"""

from __future__ import annotations

from r2act.systems.base import System, TraceStore
from r2act.systems.onlineboutique.catalogue import CELLS
from r2act.systems.onlineboutique.policy import RULES
from r2act.systems.onlineboutique.renderers import RENDERERS
from r2act.systems.onlineboutique.runtime import NO_SHELL, PROBES, STARTUP_S
from r2act.systems.onlineboutique.shop import PROBE_FORMS, PRODUCTS
from r2act.systems.onlineboutique.steps import ERROR_STEPS
from r2act.systems.onlineboutique.texts import TEXTS
from r2act.systems.onlineboutique.topology import (
    FRONTEND_STEP_BACKENDS,
    ONLINE_BOUTIQUE,
    VERSION,
    frontend_error_backend,
)
from r2act.systems.onlineboutique.tracing import TRACING
from r2act.systems.onlineboutique.traffic import (
    REDIRECTS,
    REQUESTS_PER_TASK,
    ROUTE_CALLS,
    SERVICE_MS,
    THINK_S,
    USERS,
)

SYSTEM = System(
    name=ONLINE_BOUTIQUE.system,
    title="Online Boutique",
    version=VERSION,
    topology=ONLINE_BOUTIQUE,
    upstream=(
        "online-boutique/kubernetes-manifests.yaml",
        f"online-boutique/src-{VERSION}/",
    ),
    deploy_dir="deploy/",
    cells=CELLS,
    think_s=THINK_S,
    users=USERS,
    requests_per_task=REQUESTS_PER_TASK,
    redirects=REDIRECTS,
    route_calls=ROUTE_CALLS,
    service_ms=SERVICE_MS,
    texts=TEXTS,
    renderers=RENDERERS,
    startup_s=STARTUP_S,
    probes=PROBES,
    no_shell=NO_SHELL,
    path_ids=PRODUCTS,
    probe_forms=PROBE_FORMS,
    # The handlers read r.FormValue (src-v0.10.6/frontend/handlers.go L213-L214, L325-L326).
    probe_body="form",
    # Every Deployment selects its pods by ``app: <name>`` (kubernetes-manifests.yaml, e.g.
    # L28-L34 for frontend).
    workload_label="app",
    error_backend=frontend_error_backend,
    error_steps=ERROR_STEPS,
    recovery_rules=RULES,
    # r2act's own Jaeger (upstream's collector exports to Google Cloud only):
    # deploy/tracing/jaeger.yaml, Service jaeger, query port 16686, the base path the
    # Astronomy Shop's chart uses too (its values.yaml L1124), so both read alike.
    trace_store=TraceStore("jaeger", 16686, "/jaeger/ui"),
    tracing=TRACING,
)
"""Online Boutique as r2act benchmarks it."""

__all__ = [
    "FRONTEND_STEP_BACKENDS",
    "ONLINE_BOUTIQUE",
    "SYSTEM",
    "VERSION",
    "frontend_error_backend",
]
