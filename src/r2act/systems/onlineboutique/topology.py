"""Online Boutique v0.10.6 as its release manifests deploy it.

Names, labels, container names, ports, resources, probes and the call graph follow the
upstream ``release/kubernetes-manifests.yaml`` (a test compares them when the reference copy
is available). The frontend routes and their fan-out follow the frontend's handlers; their
weights follow the load generator's Locust task weights (index 1, setCurrency 2,
browseProduct 10, addToCart 2, viewCart 3, checkout 1).
"""

from __future__ import annotations

from r2act.schema.quantities import memory_bytes
from r2act.schema.topology import ContainerSpec, DeploymentSpec, HttpRoute, Topology

VERSION = "v0.10.6"
_REGISTRY = "us-central1-docker.pkg.dev/online-boutique-ci/microservices-demo"


WORKING_SET_SHARE = 0.9
"""Peak working set of each container under the shipped load (10 Locust users), as a share
of its memory request. No upstream source publishes Online Boutique's working sets; the
release manifests size each request near the working set under load, so this is a named
simulation parameter (``docs/simulator.md``, "Memory"), not a measurement."""


def working_set(request: str) -> str:
    """The assumed peak working set for a memory request, in whole Mi (rounded down)."""
    return f"{int(memory_bytes(request) * WORKING_SET_SHARE) // 2**20}Mi"


def _server(
    name: str, port: int | None, cpu: tuple[str, str], mem: tuple[str, str], probe: str | None
) -> ContainerSpec:
    return ContainerSpec(
        name="server",
        image=f"{_REGISTRY}/{name}:{VERSION}",
        port=port,
        cpu_request=cpu[0],
        cpu_limit=cpu[1],
        memory_request=mem[0],
        memory_limit=mem[1],
        probe=probe,
        working_set=working_set(mem[0]),
    )


def _deployment(
    name: str,
    language: str,
    *,
    port: int,
    service_port: int,
    calls: dict[str, str] | None = None,
    cpu: tuple[str, str] = ("100m", "200m"),
    mem: tuple[str, str] = ("64Mi", "128Mi"),
) -> DeploymentSpec:
    env = calls or {}
    return DeploymentSpec(
        name=name,
        language=language,
        containers=[_server(name, port, cpu, mem, "grpc")],
        service_port=service_port,
        calls=[address.split(":")[0] for address in env.values()],
        env=env,
    )


_CATALOG = {"PRODUCT_CATALOG_SERVICE_ADDR": "productcatalogservice:3550"}
_CURRENCY = {"CURRENCY_SERVICE_ADDR": "currencyservice:7000"}
_CART = {"CART_SERVICE_ADDR": "cartservice:7070"}
_SHIPPING = {"SHIPPING_SERVICE_ADDR": "shippingservice:50051"}

_FRONTEND = DeploymentSpec(
    name="frontend",
    language="go",
    containers=[_server("frontend", 8080, ("100m", "200m"), ("64Mi", "128Mi"), "http")],
    service_port=80,
    env={
        **_CATALOG,
        **_CURRENCY,
        **_CART,
        "RECOMMENDATION_SERVICE_ADDR": "recommendationservice:8080",
        **_SHIPPING,
        "CHECKOUT_SERVICE_ADDR": "checkoutservice:5050",
        "AD_SERVICE_ADDR": "adservice:9555",
    },
    calls=[
        "productcatalogservice",
        "currencyservice",
        "cartservice",
        "recommendationservice",
        "shippingservice",
        "checkoutservice",
        "adservice",
    ],
)

_REDIS = DeploymentSpec(
    name="redis-cart",
    language="redis",
    containers=[
        ContainerSpec(
            name="redis",
            image="redis:alpine",
            port=6379,
            cpu_request="70m",
            cpu_limit="125m",
            memory_request="200Mi",
            memory_limit="256Mi",
            probe="tcp",
            working_set=working_set("200Mi"),
        )
    ],
    service_port=6379,
)

_LOADGENERATOR = DeploymentSpec(
    name="loadgenerator",
    language="locust",
    containers=[
        ContainerSpec(
            name="main",
            image=f"{_REGISTRY}/loadgenerator:{VERSION}",
            port=None,
            cpu_request="300m",
            cpu_limit="500m",
            memory_request="256Mi",
            memory_limit="512Mi",
            probe=None,
            working_set=working_set("256Mi"),
        )
    ],
    calls=["frontend"],
    env={"FRONTEND_ADDR": "frontend:80"},
)

ONLINE_BOUTIQUE = Topology(
    system="onlineboutique",
    entrypoint="frontend",
    entrypoint_port=8080,
    health_path="/_healthz",
    load_generator="loadgenerator",
    # deploy/ runs the stock locustfile with `Connection: close` on every request
    # (deploy/loadgenerator/): each request is a new connection, which HTTPChaos can meet.
    load_connection_reuse=False,
    deployments=[
        _FRONTEND,
        _deployment(
            "adservice",
            "java",
            port=9555,
            service_port=9555,
            cpu=("200m", "300m"),
            mem=("180Mi", "300Mi"),
        ),
        _deployment("currencyservice", "node", port=7000, service_port=7000),
        _deployment(
            "cartservice",
            "csharp",
            port=7070,
            service_port=7070,
            calls={"REDIS_ADDR": "redis-cart:6379"},
            cpu=("200m", "300m"),
        ),
        _REDIS,
        _LOADGENERATOR,
        _deployment(
            "recommendationservice",
            "python",
            port=8080,
            service_port=8080,
            calls=_CATALOG,
            mem=("220Mi", "450Mi"),
        ),
        _deployment(
            "checkoutservice",
            "go",
            port=5050,
            service_port=5050,
            calls={
                **_CATALOG,
                **_SHIPPING,
                "PAYMENT_SERVICE_ADDR": "paymentservice:50051",
                "EMAIL_SERVICE_ADDR": "emailservice:5000",
                **_CURRENCY,
                **_CART,
            },
        ),
        _deployment("emailservice", "python", port=8080, service_port=5000),
        _deployment("paymentservice", "node", port=50051, service_port=50051),
        _deployment("shippingservice", "go", port=50051, service_port=50051),
        _deployment("productcatalogservice", "go", port=3550, service_port=3550),
    ],
    routes=[
        HttpRoute(
            method="GET",
            path="/",
            weight=1,
            services=["currencyservice", "productcatalogservice", "cartservice", "adservice"],
        ),
        HttpRoute(method="POST", path="/setCurrency", weight=2, services=["currencyservice"]),
        HttpRoute(
            method="GET",
            path="/product/*",
            weight=10 + 2 + 1,
            services=[
                "productcatalogservice",
                "currencyservice",
                "cartservice",
                "recommendationservice",
                "adservice",
            ],
        ),
        HttpRoute(
            method="POST",
            path="/cart",
            weight=2 + 1,
            services=["productcatalogservice", "cartservice"],
        ),
        HttpRoute(
            method="GET",
            path="/cart",
            weight=3,
            services=[
                "currencyservice",
                "cartservice",
                "recommendationservice",
                "shippingservice",
                "productcatalogservice",
            ],
        ),
        HttpRoute(
            method="POST",
            path="/cart/checkout",
            weight=1,
            services=[
                "checkoutservice",
                "productcatalogservice",
                "shippingservice",
                "paymentservice",
                "emailservice",
                "currencyservice",
                "cartservice",
                "recommendationservice",
            ],
        ),
    ],
)
"""Online Boutique as deployed by the v0.10.6 release manifests."""


FRONTEND_STEP_BACKENDS: tuple[tuple[str, str], ...] = (
    ("could not retrieve currencies", "currencyservice"),  # frontend/handlers.go L64
    ("could not retrieve products", "productcatalogservice"),  # L69
    ("could not retrieve cart", "cartservice"),  # L74
    ("failed to do currency conversion for product", "currencyservice"),  # L86
    ("could not retrieve product", "productcatalogservice"),  # L156, L287 ("#N")
    ("failed to convert currency", "currencyservice"),  # L173, rpc.go L96
    ("could not convert currency", "currencyservice"),  # L292
    ("failed to add to cart", "cartservice"),  # L232
    ("failed to empty cart", "cartservice"),  # L244
    ("failed to get shipping quote", "shippingservice"),  # L273
    ("failed to complete the order", "checkoutservice"),  # L372
    ("failed to get recommended product info", "productcatalogservice"),  # rpc.go L109
    ("failed to get ads", "adservice"),  # rpc.go L126
)
"""The frontend's error wraps (``errors.Wrap`` in ``frontend/handlers.go`` and ``rpc.go``)
and the backend each handler step calls: the wrap is how the frontend's own log names the
backend a request failed on, since the gRPC error under it names only an address."""


def frontend_error_backend(error: str) -> str | None:
    """The backend a frontend ``request error`` text says failed, from its outermost wrap."""
    for wrap, backend in FRONTEND_STEP_BACKENDS:
        if error.startswith(wrap):
            return backend
    return None
