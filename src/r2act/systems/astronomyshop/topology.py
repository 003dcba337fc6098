"""The OpenTelemetry Astronomy Shop 2.2.0 as Helm chart 0.40.10 deploys it.

Names, ``app.kubernetes.io/component`` labels, containers, ports, ``*_ADDR`` variables and
memory limits follow the chart's own rendering,
``opentelemetry-demo-chart-0.40.10/examples/bring-your-own-observability/rendered/component.yaml``
(``tests/unit/systems/test_astronomyshop_topology.py`` compares them). The call graph
follows the services' sources in ``opentelemetry-demo-2.2.0/src`` (cited per edge below);
the entry point's routes, their weights (requests per 32 tasks) and the services each
reaches follow the Locust tasks of ``src/load-generator/locustfile.py`` (L120-L225) and the
handlers' calls, both in ``traffic``.

What ``schema.Topology`` cannot say about this system (``schema/`` is left unchanged):

- **No CPU requests or limits, no memory requests.** The chart sets only a memory limit
  per container (``values.yaml`` ``components.<name>.resources.limits.memory``); the API
  server then defaults the memory request to the limit. ``ContainerSpec`` requires four
  strings, so ``"0"`` stands for "not set" (CPU, and the llm's memory, which has no
  ``resources`` at all: ``resources: null`` in the rendering).
- **No probes.** No container of the chart has a readiness or liveness probe, so
  ``probe`` is ``None`` everywhere and ``runtime.PROBES`` is empty: a pod is Ready as soon
  as its containers start, and a health oracle must probe through the entry point.
- **HTTP callees by URL.** checkout's ``EMAIL_ADDR``/``SHIPPING_ADDR``, the frontend's
  ``SHIPPING_ADDR`` and shipping's ``QUOTE_ADDR`` are URLs (``http://email:8080``); the
  ``env`` below keeps the manifest's values verbatim and ``schema.topology.split_address``
  reads their host past the scheme.
- **Dependencies not named by ``*_ADDR``.** flagd is reached through ``FLAGD_HOST`` and
  ``FLAGD_PORT``, the llm through ``LLM_HOST``/``LLM_PORT``, postgresql through
  ``DB_CONNECTION_STRING``; these edges are in ``calls`` but not in ``env``.
- **Kafka is asynchronous.** ``calls`` records who opens a connection to whom, so
  checkout (producer), accounting and fraud-detection (consumers) all "call" kafka; the
  order flow checkout -> kafka -> accounting / fraud-detection, and the fact that a
  consumer's failure never reaches checkout's caller, cannot be expressed.
- **Several ports.** kafka (9092, 9093) and flagd (8013 gRPC, 8016 OFREP, 4000 flagd-ui)
  expose more than one; ``port`` and ``service_port`` hold the first of each.
- **The collector is a DaemonSet.** ``otel-collector-agent`` (``COLLECTOR``) is here
  because services' log records are printed on its pod (``logsinks``): on kind's one
  node a DaemonSet runs one pod, so it is a 1-replica workload, which ``schema`` can only
  call a deployment (``ClusterState`` on a real cluster lists Deployments, not it). Its
  pod is named like a Deployment's (the engine's ``<name>-<hash>-<suffix>``; a DaemonSet's
  is ``<name>-<suffix>``), it has no Service in front (the chart's ``otel-collector``
  Service is named otherwise) and no call edge (an export failing fails no request), and
  its probes (``httpGet /`` on 13133) are left out: the engine's probes hit the main port.
- **Outside this topology**: Jaeger (the jaeger subchart's Deployment) is observability
  nobody's lines go to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from r2act.schema import memory_bytes
from r2act.schema.topology import ContainerSpec, DeploymentSpec, HttpRoute, Topology
from r2act.systems.astronomyshop.traffic import ROUTE_CALLS, reached, route_weights

VERSION = "2.2.0"
CHART_VERSION = "0.40.10"
IMAGE_REPOSITORY = "ghcr.io/open-telemetry/demo"
UNSET = "0"
"""What a resource field holds when the chart sets none (see the module docstring)."""
WORKING_SET_SHARE = 0.9
"""Peak working set of each container under the shipped load, as a share of its memory
limit. No upstream source publishes the demo's working sets; the chart sizes each limit
near the container's usage, so this is a named simulation parameter, Online Boutique's
assumption (``docs/simulator.md``, "Memory"), not a measurement. Without it a container's
working set would sit at its limit, leaving a memory-leak flag no room to grow in."""


def working_set(limit: str) -> str | None:
    """The assumed peak working set for a memory limit, in whole Mi (None: no limit)."""
    if limit == UNSET:
        return None
    return f"{int(memory_bytes(limit) * WORKING_SET_SHARE) // 2**20}Mi"


@dataclass(frozen=True)
class _Service:
    """One Deployment of the chart, as the table below states it."""

    language: str
    port: int | None
    service_port: int | None
    memory_limit: str
    calls: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    sidecars: tuple[ContainerSpec, ...] = ()


_CART = {"CART_ADDR": "cart:8080"}
_CURRENCY = {"CURRENCY_ADDR": "currency:8080"}
_CATALOG = {"PRODUCT_CATALOG_ADDR": "product-catalog:8080"}
_KAFKA = {"KAFKA_ADDR": "kafka:9092"}

_FLAGD_UI = ContainerSpec(
    name="flagd-ui",
    image=f"{IMAGE_REPOSITORY}:{VERSION}-flagd-ui",
    port=4000,
    cpu_request=UNSET,
    cpu_limit=UNSET,
    memory_request="250Mi",
    memory_limit="250Mi",
)

SERVICES: dict[str, _Service] = {
    # Consumer.cs L20, L41: KAFKA_ADDR and DB_CONNECTION_STRING (postgresql).
    "accounting": _Service("csharp", None, None, "120Mi", ("kafka", "postgresql"), _KAFKA),
    # AdService.java: OpenFeature client on FLAGD_HOST (adFailure, adHighCpu, adManualGc).
    "ad": _Service("java", 8080, 8080, "300Mi", ("flagd",)),
    # Program.cs L31 VALKEY_ADDR; CartService.cs: OpenFeature (cartFailure).
    "cart": _Service(
        "csharp", 8080, 8080, "160Mi", ("valkey-cart", "flagd"), {"VALKEY_ADDR": "valkey-cart:6379"}
    ),
    # main.go L201-L231 (mustMapEnv), L443 grpc.NewClient (cart, currency, payment,
    # product-catalog), L463 and L583 HTTP POST to shipping, L561 HTTP POST to email, the
    # Kafka producer (L57, L231), L704 OpenFeature.
    "checkout": _Service(
        "go",
        8080,
        8080,
        "20Mi",
        ("cart", "currency", "email", "payment", "product-catalog", "shipping", "kafka", "flagd"),
        {
            **_CART,
            **_CURRENCY,
            "EMAIL_ADDR": "http://email:8080",
            "PAYMENT_ADDR": "payment:8080",
            **_CATALOG,
            "SHIPPING_ADDR": "http://shipping:8080",
            **_KAFKA,
        },
    ),
    "currency": _Service("cpp", 8080, 8080, "20Mi"),
    # email_server.rb: OpenFeature (emailMemoryLeak).
    "email": _Service("ruby", 8080, 8080, "100Mi", ("flagd",)),
    "flagd": _Service(
        "go", 8013, 8013, "75Mi", image="ghcr.io/open-feature/flagd:v0.12.9", sidecars=(_FLAGD_UI,)
    ),
    # main.kt L42 KAFKA_ADDR; OpenFeature (kafkaQueueProblems).
    "fraud-detection": _Service("kotlin", None, None, "300Mi", ("kafka", "flagd"), _KAFKA),
    # gateways/rpc/*.gateway.ts L7-L9 (one gRPC client per *_ADDR),
    # gateways/http/Shipping.gateway.ts L31 (HTTP), pages/_app.tsx OpenFeature.
    "frontend": _Service(
        "typescript",
        8080,
        8080,
        "250Mi",
        (
            "ad",
            "cart",
            "checkout",
            "currency",
            "product-catalog",
            "product-reviews",
            "recommendation",
            "shipping",
            "flagd",
        ),
        {
            "AD_ADDR": "ad:8080",
            **_CART,
            "CHECKOUT_ADDR": "checkout:8080",
            **_CURRENCY,
            **_CATALOG,
            "PRODUCT_REVIEWS_ADDR": "product-reviews:3551",
            "RECOMMENDATION_ADDR": "recommendation:8080",
            "SHIPPING_ADDR": "http://shipping:8080",
        },
    ),
    # envoy.tmpl.yaml L42-L65: routes to the load generator's web UI, image-provider,
    # flagd (OFREP and flagd-ui) and, for everything else, the frontend.
    "frontend-proxy": _Service(
        "envoy", 8080, 8080, "65Mi", ("frontend", "image-provider", "flagd", "load-generator")
    ),
    "image-provider": _Service("nginx", 8081, 8081, "50Mi"),
    "kafka": _Service("kafka", 9092, 9092, "700Mi"),
    # app.py: OpenFeature (llmInaccurateResponse, llmRateLimitError).
    "llm": _Service("python", 8000, 8000, UNSET, ("flagd",)),
    # locustfile.py: LOCUST_HOST (frontend-proxy) and get_flagd_value L82 (OFREP).
    "load-generator": _Service("locust", 8089, 8089, "1500Mi", ("frontend-proxy", "flagd")),
    # charge.js: OpenFeature (paymentFailure).
    "payment": _Service("node", 8080, 8080, "140Mi", ("flagd",)),
    "postgresql": _Service("postgres", 5432, 5432, "100Mi", image="postgres:17.6"),
    # main.go L139 DB_CONNECTION_STRING; OpenFeature (productCatalogFailure).
    "product-catalog": _Service("go", 8080, 8080, "20Mi", ("postgresql", "flagd")),
    # product_reviews_server.py L368-L369 LLM_HOST/LLM_PORT, PRODUCT_CATALOG_ADDR,
    # DB_CONNECTION_STRING, OpenFeature (llm* flags).
    "product-reviews": _Service(
        "python", 3551, 3551, "100Mi", ("product-catalog", "llm", "postgresql", "flagd"), _CATALOG
    ),
    "quote": _Service("php", 8080, 8080, "40Mi"),
    # recommendation_server.py: PRODUCT_CATALOG_ADDR, OpenFeature (recommendationCacheFailure).
    "recommendation": _Service(
        "python", 8080, 8080, "500Mi", ("product-catalog", "flagd"), _CATALOG
    ),
    # shipping_service/quote.rs L43: QUOTE_ADDR (HTTP).
    "shipping": _Service(
        "rust", 8080, 8080, "20Mi", ("quote",), {"QUOTE_ADDR": "http://quote:8080"}
    ),
    "valkey-cart": _Service("valkey", 6379, 6379, "20Mi", image="valkey/valkey:9.0.1-alpine3.23"),
}
"""Every Deployment of the chart's application (``component.yaml``), by name."""


COLLECTOR = "otel-collector-agent"
"""The collector DaemonSet (the node agent that prints the services' log records)."""
_COLLECTOR_RENDERED = (
    "opentelemetry-demo-chart-0.40.10/examples/bring-your-own-observability/rendered/"
    "opentelemetry-collector/daemonset.yaml"
)
COLLECTOR_SPEC = DeploymentSpec(
    name=COLLECTOR,  # daemonset.yaml L6
    language="go",
    containers=[
        ContainerSpec(
            name="opentelemetry-collector",  # L42
            image="otel/opentelemetry-collector-contrib:0.151.0",  # L47
            port=4317,  # L66-L69: the OTLP gRPC port the SDKs export to
            cpu_request=UNSET,
            cpu_limit=UNSET,
            memory_request="200Mi",  # L125-L127, a limit only (request defaulted to it)
            memory_limit="200Mi",
            probe=None,
        )
    ],
)
"""The collector as a 1-replica workload (see the module docstring), after
``_COLLECTOR_RENDERED``."""


def image_of(name: str) -> str:
    """The image the chart's pod template names for ``name``'s main container."""
    own = SERVICES[name].image
    return own if own is not None else f"{IMAGE_REPOSITORY}:{VERSION}-{name}"


def _deployment(name: str, service: _Service) -> DeploymentSpec:
    main = ContainerSpec(
        name=name,
        image=image_of(name),
        port=service.port,
        cpu_request=UNSET,
        cpu_limit=UNSET,
        memory_request=service.memory_limit,
        memory_limit=service.memory_limit,
        probe=None,
        working_set=working_set(service.memory_limit),
    )
    return DeploymentSpec(
        name=name,
        language=service.language,
        containers=[main, *service.sidecars],
        service_port=service.service_port,
        calls=list(service.calls),
        env=dict(service.env),
    )


ASTRONOMY_SHOP = Topology(
    system="astronomyshop",
    entrypoint="frontend-proxy",
    entrypoint_port=8080,
    # The chart sets no probe and the frontend serves no health route; its home page
    # through Envoy's catch-all route (envoy.tmpl.yaml L64-L65) is what answers.
    health_path="/",
    load_generator="load-generator",
    # Locust's HttpUser keeps each user's connection alive (deploy/astronomyshop does not
    # patch the load generator as deploy/loadgenerator does for Online Boutique).
    load_connection_reuse=True,
    deployments=[
        *(_deployment(name, service) for name, service in SERVICES.items()),
        COLLECTOR_SPEC,
    ],
    # Per route: the requests per 32 tasks the Locust tasks send (traffic.TASKS) and the
    # services its handler's calls reach (traffic.ROUTE_CALLS), in the tasks' order.
    routes=[
        HttpRoute(
            method=scope.split(" ", 1)[0],
            path=scope.split(" ", 1)[1],
            weight=weight,
            services=reached(ROUTE_CALLS[scope]),
        )
        for scope, weight in route_weights().items()
    ],
)
"""The Astronomy Shop as deploy/astronomyshop installs it (chart 0.40.10, app 2.2.0)."""
