"""Online Boutique v0.10.6's spans: seven instrumented services and the shape of each span.

Paths are under ``shared/reference/online-boutique/``. Tracing is switched on by the
kustomize component ``kustomize-v0.10.6/components/google-cloud-operations/kustomization.yaml``
(``ENABLE_TRACING=1``, ``COLLECTOR_SERVICE_ADDR``, ``OTEL_SERVICE_NAME`` = the deployment
name, L26-L160); every SDK samples every trace (``sdktrace.AlwaysSample()``,
``src-v0.10.6/frontend/main.go`` L186-L188), so the whole-trace rate is r2act's.

- **frontend** (Go): one server span per request from ``otelhttp.NewHandler(handler,
  "frontend")`` (``frontend/main.go`` L168), named by its operation, ``frontend``; a client
  span per gRPC call from ``otelgrpc.NewClientHandler()`` on every backend connection
  (L229-L231), named ``<package.Service>/<Method>``.
- **checkoutservice**, **productcatalogservice** (Go): ``otelgrpc.NewServerHandler()``
  (``checkoutservice/main.go`` L139, ``productcatalogservice/server.go`` L135); checkout's
  backend connections add ``otelgrpc.NewClientHandler()`` (``checkoutservice/main.go``
  L216).
- **currencyservice**, **paymentservice** (Node): ``GrpcInstrumentation`` of
  ``@opentelemetry/instrumentation-grpc`` 0.219.0 (``currencyservice/server.js`` L43-L47,
  ``paymentservice/index.js`` L41-L58; pins in each ``package.json`` L19 and L18), whose
  span names start with ``grpc.``.
- **emailservice**, **recommendationservice** (Python): ``GrpcInstrumentorServer`` (and
  ``GrpcInstrumentorClient`` in recommendation) of ``opentelemetry-instrumentation-grpc``
  0.60b1 (``emailservice/email_server.py`` L192-L193, ``recommendationservice/
  recommendation_server.py`` L110-L113; ``requirements.txt`` L62 and L45), whose span names
  are the full method with its leading ``/``.

The Go services' ``go.mod`` files are not in the pinned tree (only the sources are), so the
Go attribute set is the one otelgrpc's stats handlers set under the RPC semantic
conventions (``rpc.system``, ``rpc.service``, ``rpc.method``, ``rpc.grpc.status_code``),
without the network attributes whose names changed between releases; ``otelhttp``'s server
span carries the stable HTTP names (``http.request.method``, ``url.path``,
``http.response.status_code``). An assumption, named here because the pin is missing.
"""

from __future__ import annotations

from collections.abc import Callable

from r2act.systems.tracing import (
    Cited,
    ServiceTracing,
    SpanShape,
    Tracing,
    grpc_client_error,
    grpc_go_server_error,
    http_server_error,
)

PACKAGE = "hipstershop"
"""The proto package of every service (``protos/demo.proto``)."""

SERVICES: dict[str, str] = {
    "frontend": "",
    "cartservice": "CartService",
    "recommendationservice": "RecommendationService",
    "productcatalogservice": "ProductCatalogService",
    "shippingservice": "ShippingService",
    "currencyservice": "CurrencyService",
    "paymentservice": "PaymentService",
    "emailservice": "EmailService",
    "checkoutservice": "CheckoutService",
    "adservice": "AdService",
}
"""Deployment -> its gRPC service (the frontend serves HTTP)."""

_GO = "otelgrpc (go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc)"
_NODE = "@opentelemetry/instrumentation-grpc 0.219.0"
_PYTHON = "opentelemetry-instrumentation-grpc 0.60b1"


def _rpc_attributes(callee: str, op: str) -> dict[str, str | int | float | bool]:
    return {
        "rpc.system": "grpc",
        "rpc.service": f"{PACKAGE}.{SERVICES[callee]}",
        "rpc.method": op,
    }


_SRC = "online-boutique/src-v0.10.6"


def _cite(path: str, line: int, fragment: str) -> Cited:
    return Cited(f"{_SRC}/{path}", line, fragment)


EVIDENCE: dict[str, tuple[Cited, ...]] = {
    "frontend": (
        _cite("frontend/main.go", 168, 'otelhttp.NewHandler(handler, "frontend")'),
        _cite("frontend/main.go", 231, "otelgrpc.NewClientHandler()"),
        _cite("frontend/main.go", 188, "sdktrace.AlwaysSample()"),
    ),
    "checkoutservice": (
        _cite("checkoutservice/main.go", 139, "otelgrpc.NewServerHandler()"),
        _cite("checkoutservice/main.go", 216, "otelgrpc.NewClientHandler()"),
    ),
    "productcatalogservice": (
        _cite("productcatalogservice/server.go", 135, "otelgrpc.NewServerHandler()"),
    ),
    "currencyservice": (
        _cite("currencyservice/server.js", 47, "new GrpcInstrumentation()"),
        _cite(
            "currencyservice/package.json", 19, '"@opentelemetry/instrumentation-grpc": "0.219.0"'
        ),
    ),
    "paymentservice": (
        _cite("paymentservice/index.js", 58, "new GrpcInstrumentation()"),
        _cite(
            "paymentservice/package.json", 18, '"@opentelemetry/instrumentation-grpc": "0.219.0"'
        ),
    ),
    "emailservice": (
        _cite("emailservice/email_server.py", 192, "GrpcInstrumentorServer()"),
        _cite("emailservice/requirements.txt", 62, "opentelemetry-instrumentation-grpc==0.60b1"),
    ),
    "recommendationservice": (
        _cite("recommendationservice/recommendation_server.py", 110, "GrpcInstrumentorClient()"),
        _cite("recommendationservice/recommendation_server.py", 112, "GrpcInstrumentorServer()"),
        _cite(
            "recommendationservice/requirements.txt",
            45,
            "opentelemetry-instrumentation-grpc==0.60b1",
        ),
    ),
}
"""Per instrumented deployment, the lines that show its instrumentation and its pin."""


def _go_server(deployment: str, where: str) -> ServiceTracing:
    def server(op: str) -> tuple[SpanShape, ...]:
        return (
            SpanShape(
                name=f"{PACKAGE}.{SERVICES[deployment]}/{op}",
                kind="server",
                attributes=_rpc_attributes(deployment, op),
                protocol="grpc",
                code_attribute="rpc.grpc.status_code",
                is_error=grpc_go_server_error,
                source=f"{where}; {_GO}",
            ),
        )

    return ServiceTracing(
        service_name=deployment,
        server=server,
        client=_go_client(where),
        source=where,
        evidence=EVIDENCE[deployment],
    )


def _go_client(where: str) -> Callable[[str, str], SpanShape | None]:
    def client(callee: str, op: str) -> SpanShape | None:
        if callee not in SERVICES or callee == "frontend":
            return None
        return SpanShape(
            name=f"{PACKAGE}.{SERVICES[callee]}/{op}",
            kind="client",
            attributes=_rpc_attributes(callee, op),
            protocol="grpc",
            code_attribute="rpc.grpc.status_code",
            is_error=grpc_client_error,
            source=f"{where}; {_GO}",
        )

    return client


def _no_client(_callee: str, _op: str) -> SpanShape | None:
    return None


def _node_server(deployment: str, where: str) -> ServiceTracing:
    def server(op: str) -> tuple[SpanShape, ...]:
        return (
            SpanShape(
                name=f"grpc.{PACKAGE}.{SERVICES[deployment]}/{op}",
                kind="server",
                attributes=_rpc_attributes(deployment, op),
                protocol="grpc",
                code_attribute="rpc.grpc.status_code",
                is_error=grpc_client_error,  # the server side marks every non-OK code too
                source=f"{where}; {_NODE}",
            ),
        )

    return ServiceTracing(
        service_name=deployment,
        server=server,
        client=_no_client,
        source=where,
        evidence=EVIDENCE[deployment],
    )


def _python(deployment: str, where: str, *, client: bool) -> ServiceTracing:
    def server(op: str) -> tuple[SpanShape, ...]:
        return (
            SpanShape(
                name=f"/{PACKAGE}.{SERVICES[deployment]}/{op}",
                kind="server",
                attributes=_rpc_attributes(deployment, op),
                protocol="grpc",
                code_attribute="rpc.grpc.status_code",
                is_error=grpc_client_error,
                source=f"{where}; {_PYTHON}",
            ),
        )

    def outgoing(callee: str, op: str) -> SpanShape | None:
        if callee not in SERVICES or callee == "frontend":
            return None
        return SpanShape(
            name=f"/{PACKAGE}.{SERVICES[callee]}/{op}",
            kind="client",
            attributes=_rpc_attributes(callee, op),
            protocol="grpc",
            code_attribute="rpc.grpc.status_code",
            is_error=grpc_client_error,
            source=f"{where}; {_PYTHON}",
        )

    return ServiceTracing(
        service_name=deployment,
        server=server,
        client=outgoing if client else _no_client,
        source=where,
        evidence=EVIDENCE[deployment],
    )


_FRONTEND_WHERE = "src-v0.10.6/frontend/main.go L168 (otelhttp.NewHandler), L229-L231"


def _frontend_server(scope: str) -> tuple[SpanShape, ...]:
    method = scope.split(" ", 1)[0]
    return (
        SpanShape(
            name="frontend",
            kind="server",
            attributes={"http.request.method": method, "url.scheme": "http"},
            protocol="http",
            code_attribute="http.response.status_code",
            is_error=http_server_error,
            source=f"{_FRONTEND_WHERE}; otelhttp (net/http/otelhttp)",
        ),
    )


TRACING = Tracing(
    services={
        "frontend": ServiceTracing(
            service_name="frontend",
            server=_frontend_server,
            client=_go_client(_FRONTEND_WHERE),
            source=_FRONTEND_WHERE,
            evidence=EVIDENCE["frontend"],
        ),
        "checkoutservice": _go_server(
            "checkoutservice", "src-v0.10.6/checkoutservice/main.go L139, L216"
        ),
        "productcatalogservice": _go_server(
            "productcatalogservice", "src-v0.10.6/productcatalogservice/server.go L135"
        ),
        "currencyservice": _node_server(
            "currencyservice", "src-v0.10.6/currencyservice/server.js L43-L47"
        ),
        "paymentservice": _node_server(
            "paymentservice", "src-v0.10.6/paymentservice/index.js L41-L58"
        ),
        "emailservice": _python(
            "emailservice", "src-v0.10.6/emailservice/email_server.py L192-L193", client=False
        ),
        "recommendationservice": _python(
            "recommendationservice",
            "src-v0.10.6/recommendationservice/recommendation_server.py L110-L113",
            client=True,
        ),
    },
    not_instrumented={
        "cartservice": "C#, no OpenTelemetry code in src-v0.10.6/cartservice/",
        "shippingservice": (
            "logs 'Tracing enabled, but temporarily unavailable' "
            "(src-v0.10.6/shippingservice/main.go L56-L58, initTracing a TODO at L159-L160)"
        ),
        "adservice": (
            "logs 'Tracing enabled but temporarily unavailable' "
            "(src-v0.10.6/adservice/src/main/java/hipstershop/AdService.java L209-L217)"
        ),
        "loadgenerator": "Locust with no OpenTelemetry set-up (src-v0.10.6/loadgenerator/)",
        "redis-cart": "the off-the-shelf Redis image, called only by the uninstrumented cart",
    },
    path_attribute="url.path",
)
"""Online Boutique's traces."""
