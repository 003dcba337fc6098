"""The OpenTelemetry Astronomy Shop 2.2.0 (Helm chart 0.40.10), r2act's second system.

- ``topology``: deployments, containers, ports, ``*_ADDR`` variables, memory limits, the
  call graph and the entry point's routes, as the chart renders them;
- ``traffic``: the Locust tasks, the API handlers' and checkout's call trees, per-call
  costs and the users' think time;
- ``catalogue``: the realizable Chaos Mesh and ConfigFault cells, with their evidence;
- ``flags``: its flagd feature flags with a realizability verdict each;
- ``runtime``: images, start-up times, probes (none) and shell-less images per service;
- ``shop``: its catalogue's ids, currencies, and the bodies the health oracle posts;
- its install files are in ``deploy/astronomyshop/``.

Its services' texts, stdout renderers and the collector's copies (``log_relay``) are in
``texts`` and ``renderers``; its recovery rules in ``policy``.
"""

from __future__ import annotations

from r2act.systems.astronomyshop.catalogue import CELLS
from r2act.systems.astronomyshop.flags import FLAGS_2_2_0
from r2act.systems.astronomyshop.policy import RULES
from r2act.systems.astronomyshop.renderers import LOG_RELAY, RENDERERS
from r2act.systems.astronomyshop.runtime import (
    FLAG_CONFIG_MAP,
    FLAG_DEPLOYMENT,
    FLAG_FILE_KEY,
    IMAGES,
    NO_SHELL,
    PROBES,
    STARTUP_S,
)
from r2act.systems.astronomyshop.shop import PROBE_FORMS, PRODUCTS
from r2act.systems.astronomyshop.steps import ERROR_STEPS
from r2act.systems.astronomyshop.texts import TEXTS
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP, CHART_VERSION, VERSION
from r2act.systems.astronomyshop.tracing import TRACING
from r2act.systems.astronomyshop.traffic import (
    LOAD_STATS,
    REDIRECTS,
    REQUESTS_PER_TASK,
    ROUTE_CALLS,
    SERVICE_MS,
    THINK_S,
    USERS,
)
from r2act.systems.base import System, TraceStore
from r2act.systems.flags import FlagStore

SYSTEM = System(
    name=ASTRONOMY_SHOP.system,
    title="Astronomy Shop",
    version=VERSION,
    topology=ASTRONOMY_SHOP,
    upstream=(
        f"opentelemetry-demo-chart-{CHART_VERSION}/",
        f"opentelemetry-demo-{VERSION}/src/",
    ),
    deploy_dir="deploy/astronomyshop/",
    cells=CELLS,
    think_s=THINK_S,
    users=USERS,
    requests_per_task=REQUESTS_PER_TASK,
    redirects=REDIRECTS,
    route_calls=ROUTE_CALLS,
    service_ms=SERVICE_MS,
    texts=TEXTS,
    renderers=RENDERERS,
    log_relay=LOG_RELAY,
    load_stats=LOAD_STATS,
    error_steps=ERROR_STEPS,
    images=IMAGES,
    startup_s=STARTUP_S,
    probes=PROBES,
    no_shell=NO_SHELL,
    path_ids=PRODUCTS,
    probe_forms=PROBE_FORMS,
    # The frontend's API routes read a parsed JSON body (src/frontend/pages/api/cart.ts L35,
    # checkout.ts L17, product-ask-ai-assistant/[productId]/index.ts L16) as its own client
    # sends it (frontend/utils/Request.ts L18) and the load generator posts it (json=,
    # load-generator/locustfile.py L159, L193, L202).
    probe_body="json",
    # The chart's Deployments select their pods by ``opentelemetry.io/name: <name>``
    # (templates/_helpers.tpl L47-L51, used by _objects.tpl L17 and L21; rendered:
    # examples/default/rendered/component.yaml L713-L721 for cart); its pods carry no
    # ``app`` label.
    workload_label="opentelemetry.io/name",
    flags=FLAGS_2_2_0,
    flag_store=FlagStore(FLAG_CONFIG_MAP, FLAG_FILE_KEY, FLAG_DEPLOYMENT),
    recovery_rules=RULES,
    # The chart's Jaeger: Service jaeger, query port 16686 (rendered
    # jaeger/jaeger/jaeger-service.yaml L6, L58-59), query base path /jaeger/ui
    # (values.yaml L1124); deploy/astronomyshop/values.yaml keeps it on.
    trace_store=TraceStore("jaeger", 16686, "/jaeger/ui"),
    tracing=TRACING,
)
"""The Astronomy Shop as r2act benchmarks it."""

__all__ = [
    "ASTRONOMY_SHOP",
    "CHART_VERSION",
    "IMAGES",
    "NO_SHELL",
    "PROBES",
    "STARTUP_S",
    "SYSTEM",
    "USERS",
    "VERSION",
]
