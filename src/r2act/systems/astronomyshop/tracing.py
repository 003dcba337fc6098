"""The Astronomy Shop 2.2.0's spans: who opens which span on the browse and checkout paths.

Paths are under ``shared/reference/opentelemetry-demo-2.2.0/src/``. Every service exports
OTLP to the chart's collector with the SDK's default sampler (parent-based, always on), so
the whole-trace rate is r2act's. Per service, the set-up line and the pin:

- **frontend-proxy** (Envoy ``v1.34``): the HTTP connection manager's OpenTelemetry tracer
  with ``spawn_upstream_span: true`` (``frontend-proxy/envoy.tmpl.yaml`` L18-L31): an
  ``ingress`` server span per request and a ``router <cluster> egress`` client span per
  upstream request. Envoy's tags are strings (``http.status_code`` ``"200"``) and it marks
  5xx answers as errors.
- **frontend** (Next.js 16.1.1 on Node, ``frontend/package.json`` L44):
  ``getNodeAutoInstrumentations`` 0.67.3 (``frontend/utils/telemetry/Instrumentation.js``
  L15-L24; ``package.json`` L20) opens the HTTP server span, named by the method under the
  old HTTP conventions, and a ``grpc.<package.Service>/<Method>`` client span per gRPC
  call; Next.js' own tracer opens ``<METHOD> <route>`` (``BaseServer.handleRequest``) and,
  for an API route, ``executing api route (pages) <route>`` (``Node.runHandler``), on
  which ``InstrumentationMiddleware`` sets the status code and, on an exception, the error
  status (``utils/telemetry/InstrumentationMiddleware.ts`` L23-L33).
- **checkout**, **product-catalog** (Go): ``otelgrpc`` v0.64.0 server and client stats
  handlers (``checkout/main.go`` L248, L445; ``product-catalog/main.go`` L243;
  ``go.mod`` L12), ``otelhttp`` v0.64.0 for checkout's HTTP calls (``otelhttp.Post``,
  ``checkout/main.go`` L463, L561, L583; ``go.mod`` L13), named by the transport's default
  formatter ``HTTP <METHOD>``; the Kafka producer span ``orders publish`` is checkout's own
  (``createProducerSpan``, L677-L690; topic ``kafka/producer.go`` L13); product-catalog's
  PostgreSQL queries go through ``XSAM/otelsql`` v0.41.0 (``main.go`` L145-L150,
  ``go.mod`` L6), whose query span is ``sql.conn.query``.
- **cart** (.NET): ``AddAspNetCoreInstrumentation`` and ``AddRedisInstrumentation``
  (``cart/src/Program.cs`` L71-L78; ``OpenTelemetry.Instrumentation.AspNetCore`` 1.14.0,
  ``StackExchangeRedis`` 1.14.0-beta.1, ``cart.csproj`` L23, L27). The ASP.NET Core
  instrumentation's gRPC support is opt-in since 1.8 and the chart does not opt in
  (``values.yaml`` sets no ``OTEL_DOTNET_EXPERIMENTAL_ASPNETCORE_ENABLE_GRPC_INSTRUMENTATION``),
  so the server span is an HTTP one, ``POST /oteldemo.CartService/<Method>``, and a gRPC
  error (an HTTP 200 with a grpc-status trailer) leaves its status unset. Valkey commands
  are client spans named by the command. ``AddGrpcClientInstrumentation`` (L78) traces the
  flagd provider's calls: ``EmptyCart`` evaluates ``cartFailure`` on every call
  (``services/CartService.cs`` L83) and the .NET provider 0.3.4 caches nothing unless
  ``FLAGD_CACHE=lru``, so each one is a ``flagd.evaluation.v1.Service/ResolveBoolean``
  client span (see flagd below).
- **currency** (C++): hand-made server spans ``Currency/<Method>`` with the RPC attributes
  and an explicit ``Ok`` or ``Error`` status (``currency/src/server.cpp`` L109-L135,
  L170-L221).
- **payment** (Node): the same auto-instrumentations (``payment/opentelemetry.js``
  L16-L24; ``package.json`` L17) and its own ``charge`` span (``payment/charge.js`` L25,
  L56-L60), which sets no status.
- **shipping** (Rust): ``RequestTracing`` of ``opentelemetry-instrumentation-actix-web``
  0.23.0 (``shipping/src/main.rs`` L46-L49; ``Cargo.toml`` L21) names the server span
  ``<METHOD> <route>``; its quote call goes through ``awc`` with ``trace_request``
  (``shipping_service/quote.rs`` L40-L61).
- **email** (Ruby): ``OpenTelemetry::Instrumentation::Sinatra`` (``email/email_server.rb``
  L32-L33; ``opentelemetry-instrumentation-all`` ~> 0.87, ``Gemfile`` L22) names the
  server span ``<METHOD> <route>``; its own ``send_email`` span (L64).
- **quote** (PHP): ``opentelemetry-auto-slim`` 1.3.0 (``quote/composer.json`` L13) for the
  server span of ``POST /getquote`` (``quote/app/routes.php`` L52); its own
  ``calculate-quote`` internal span (L18-L21).
- **recommendation** (Python): ``opentelemetry-instrument`` of ``opentelemetry-distro``
  0.60b1 (``recommendation/requirements.txt`` L4): full-method gRPC span names with their
  leading ``/``; its own ``get_product_list`` span around the catalogue call
  (``recommendation_server.py`` L70).
- **ad** (Java): the OpenTelemetry Java agent 2.23.0 (``ad/Dockerfile`` L31-L32;
  ``build.gradle`` L20), gRPC server spans ``oteldemo.AdService/<Method>``.

- **product-reviews** (Python): ``opentelemetry-instrument`` after ``opentelemetry-bootstrap``
  (``product-reviews/Dockerfile`` L15, L31; distro 0.60b1, ``requirements.txt`` L4): gRPC
  server spans like recommendation's, each handler's own span (``get_product_reviews``,
  ``get_ai_assistant_response``: ``product_reviews_server.py`` L119, L157), psycopg2's
  ``SELECT`` spans, and the OpenAI client's ``chat astronomy-llm`` spans of the GenAI
  instrumentation (``llm/README.md`` L9-L11; the chart sets its
  ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).
- **llm**: not instrumented (plain ``python app.py``, no OpenTelemetry pin).
- **load-generator** (Locust): the locustfile's own SDK set-up and ``RequestsInstrumentor``
  (``load-generator/locustfile.py`` L41-L44, L71): every task opens ``user_<task>`` in a new
  trace (``context=Context()``, L122-L222) and requests' client span (named by the method)
  is the parent of Envoy's ``ingress`` (``Tracing.origin``). A checkout's cart rounds run
  inside its nested ``user_add_to_cart``. The engine walks one request at a time, so each
  request of a multi-request task has its own trace (a simplification: upstream, the
  task's requests share one).
- **accounting** (.NET auto-instrumentation 1.13.0, ``accounting/Dockerfile`` L34-L36):
  its loop's ``order-consumed`` activity, started before ``Consume`` with no parent
  (``Consumer.cs`` L65), the Kafka instrumentation's ``orders receive`` span in it, and
  the order's database write (``SaveChanges``, L132) as Npgsql's own ``postgresql`` client
  span: the chart turns the EF Core instrumentation off (rendered ``component.yaml``
  L611-L612), so EF Core adds none (``_accounting_client``).
- **fraud-detection** (Java agent 2.23.0): with receive telemetry on (chart
  ``component.yaml`` L1187-L1188) the poll's ``orders receive`` span roots a new trace and
  ``orders process`` is its child; the link to checkout's producer span has no place in a
  ``Span``. Both consumers' traces start ``QUEUE_LAG_MS`` after checkout's publish
  (``Tracing.consumers``).
- **image-provider** (nginx with ``ngx_otel_module``, ``nginx.conf.template`` L1, L13-L16):
  one ``image-provider`` server span per request; no request of the load model reaches it
  (Locust's ``HttpUser`` fetches no image; browser users are off).
- **flagd** (``ghcr.io/open-feature/flagd:v0.12.9``, rendered ``component.yaml`` L1037;
  its source is not in the reference tree, so its lines are cited at that tag,
  ``Cited.tree``): with a collector configured (``FLAGD_OTEL_COLLECTOR_URI``, L1066) it
  installs otelconnect's interceptor, so each evaluation RPC opens
  ``flagd.evaluation.v1.Service/<Method>`` (server, continuing the caller's trace), the
  handler's ``resolve<Type>`` server span carrying ``feature_flag.key``,
  ``feature_flag.result.variant`` and ``feature_flag.provider.name``, and the evaluator's
  ``resolve<Type>`` internal span (``_flagd_server``). The variant is what flagd serves:
  a FlagFault that flips a flag shows there, as it would to anyone reading flagd's spans.
  The dataset's answer guard reads the conventions' ``feature_flag.`` keys as blank (they are
  on every evaluation), so only their values are evidence (``FLAGD_FLAG_ATTRIBUTES``).
  Every provider runs in RPC mode against ``flagd:8013`` (no reader sets
  ``FLAGD_RESOLVER``; RPC is every provider's default), but only cart's and email's call
  flagd on each request: the Go, Java, Node and Python providers cache a ``STATIC`` resolution (no
  flag has targeting, ``flagd/demo.flagd.json``) until flagd's event stream reports a
  change (``EVALUATIONS``). email also asks on every order (``send_email``'s
  ``fetch_number_value``, L67): the release's ``Gemfile.lock`` (not in the reference copy,
  read at the release tag) pins the Ruby provider 0.1.0, which sends an integer default
  as ``ResolveInt`` and caches nothing, but email instruments only Sinatra (L32-L33), so
  its gRPC client opens no span and injects no context: flagd's spans of that call root a
  trace of their own (``FlagEvaluation.propagated``), kept with the order's trace. The
  OpenFeature OpenTelemetry hooks (checkout, product-catalog,
  recommendation, the load generator; cart's ``TraceEnricherHook``) add span *events*,
  not spans, and a ``Span`` carries no events. Not walked: the once-per-change
  evaluations of the caching readers and the event streams. A flagd that is down or
  unreachable shows as cart's failed client span and no flagd span (email's call shows
  nothing); the SDK then returns the default and ``EmptyCart`` goes on. flagd's own time
  per evaluation is the engine's default for a service the load model gives none (3 ms), as
  ``traffic.SERVICE_MS`` lists only the services the routes call.
- **flood_home's OFREP evaluation** (``Tracing.side_traces``, ``SIDE_TRACES``): every run
  of the task (weight 5 of 32, ``load-generator/locustfile.py`` L218-L220) evaluates
  ``loadGeneratorFloodHomepage`` through the ``OFREPProvider`` (L78-L85,
  ``openfeature-provider-ofrep`` 0.2.0, ``requirements.txt`` L4) before any span of its
  own is open, so requests' ``POST`` to ``http://flagd:8016/ofrep/v1/evaluate/flags/<key>``
  roots a trace of its own (the provider caches and batches nothing: one
  ``requests.Session.post`` per evaluation, its ``_resolve``, cited at its tag). flagd's
  OFREP service answers under otelhttp v0.62.0's ``flagd.ofrep`` server span
  (``ofrep/handler.go`` L45) and the evaluator's ``resolveAnyValue`` (``json.go`` L275);
  the flag's key is in the URL and the path, its variant on no span. A flagd that is down
  fails the ``POST`` with no status code and no flagd span (``_ofrep_client``,
  ``_flagd_ofrep_server``; the instrumentations' sources are cited at their tags).

Named assumptions where a library's exact names are not in the pinned tree: the attribute
sets are the RPC/HTTP/messaging conventions' required ones, not every optional attribute,
and no per-request value (a product id, a question, a statement); the awc client span is
named like the server's (``<METHOD> <path>``); the .NET Kafka consumer span is ``<topic>
receive``, a child of the loop's activity, and stays current until the next ``Consume``
(its instrumentation is not in the reference), so accounting's database span is its child;
otelconnect's server error rule is otelgrpc's; one Npgsql span per order (one batch).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from r2act.schema.traces import AttributeValue, SpanKind
from r2act.systems.astronomyshop.flags import flag
from r2act.systems.astronomyshop.topology import VERSION
from r2act.systems.astronomyshop.traffic import TASK_WEIGHT, TASKS
from r2act.systems.tracing import (
    Cited,
    FlagEvaluation,
    HandlerCall,
    Origin,
    ServiceTracing,
    SideTrace,
    SpanShape,
    Tracing,
    grpc_client_error,
    grpc_go_server_error,
    http_client_error,
    http_server_error,
    never_error,
    split_evaluation_op,
)

PACKAGE = "oteldemo"
"""The proto package (``pb/demo.proto``)."""

GRPC_SERVICES: dict[str, str] = {
    "cart": "CartService",
    "product-catalog": "ProductCatalogService",
    "currency": "CurrencyService",
    "payment": "PaymentService",
    "checkout": "CheckoutService",
    "recommendation": "RecommendationService",
    "ad": "AdService",
    "product-reviews": "ProductReviewService",
}
"""Deployment -> its gRPC service."""

Client = Callable[[str, str], SpanShape | None]
Attributes = dict[str, AttributeValue]


def _shape(  # noqa: PLR0917
    name: str,
    kind: SpanKind,
    attributes: Attributes,
    code_attribute: str | None,
    is_error: Callable[[int], bool],
    source: str,
    *,
    protocol: str = "grpc",
    ok_status: str = "unset",
    code_text: bool = False,
) -> SpanShape:
    return SpanShape(
        name=name,
        kind=kind,
        attributes=attributes,
        protocol="http" if protocol == "http" else "grpc",
        code_attribute=code_attribute,
        is_error=is_error,
        source=source,
        ok_status="ok" if ok_status == "ok" else "unset",
        code_text=code_text,
    )


def _rpc(callee: str, op: str) -> Attributes:
    return {
        "rpc.system": "grpc",
        "rpc.service": f"{PACKAGE}.{GRPC_SERVICES[callee]}",
        "rpc.method": op,
    }


def _grpc_client(prefix: str, source: str) -> Client:
    """gRPC client spans named ``<prefix><package.Service>/<Method>``; None off gRPC."""

    def client(callee: str, op: str) -> SpanShape | None:
        if callee not in GRPC_SERVICES:
            return None
        name = f"{prefix}{PACKAGE}.{GRPC_SERVICES[callee]}/{op}"
        return _shape(
            name, "client", _rpc(callee, op), "rpc.grpc.status_code", grpc_client_error, source
        )

    return client


def _grpc_server(
    deployment: str, prefix: str, is_error: Callable[[int], bool], source: str
) -> Callable[[str], tuple[SpanShape, ...]]:
    def server(op: str) -> tuple[SpanShape, ...]:
        name = f"{prefix}{PACKAGE}.{GRPC_SERVICES[deployment]}/{op}"
        return (
            _shape(name, "server", _rpc(deployment, op), "rpc.grpc.status_code", is_error, source),
        )

    return server


def _none(_callee: str, _op: str) -> SpanShape | None:
    return None


def _http_server(source: str) -> Callable[[str], tuple[SpanShape, ...]]:
    """An HTTP framework's server span ``<METHOD> <route>`` (op is ``POST /route``)."""

    def server(op: str) -> tuple[SpanShape, ...]:
        method, route = op.split(" ", 1)
        attributes: Attributes = {
            "http.request.method": method,
            "http.route": route,
            "url.scheme": "http",
        }
        return (
            _shape(
                op,
                "server",
                attributes,
                "http.response.status_code",
                http_server_error,
                source,
                protocol="http",
            ),
        )

    return server


# --- the entry point and the frontend -------------------------------------------------------

_ENVOY = "frontend-proxy/envoy.tmpl.yaml L18-L31 (Envoy v1.34 OpenTelemetry tracer)"


def _proxy_server(scope: str) -> tuple[SpanShape, ...]:
    method = scope.split(" ", 1)[0]
    attributes: Attributes = {
        "component": "proxy",
        "http.method": method,
        "http.protocol": "HTTP/1.1",
        "upstream_cluster": "frontend",
    }
    return (
        _shape(
            "ingress",
            "server",
            attributes,
            "http.status_code",
            http_server_error,
            _ENVOY,
            protocol="http",
            code_text=True,
        ),
    )


def _proxy_client(callee: str, _op: str) -> SpanShape | None:
    attributes: Attributes = {"component": "proxy", "upstream_cluster": callee}
    return _shape(
        f"router {callee} egress",
        "client",
        attributes,
        "http.status_code",
        http_server_error,
        _ENVOY,
        protocol="http",
        code_text=True,
    )


_FRONTEND = (
    "frontend/utils/telemetry/Instrumentation.js L15-L24 (auto-instrumentations-node "
    "0.67.3, package.json L20); Next.js 16.1.1 spans (package.json L44)"
)


def _frontend_server(op: str) -> tuple[SpanShape, ...]:
    method, route = op.split(" ", 1)
    http: Attributes = {"http.method": method, "http.scheme": "http", "http.flavor": "1.1"}
    handle: Attributes = {
        "next.span_type": "BaseServer.handleRequest",
        "next.span_name": op,
        "next.route": route,
        "http.method": method,
    }
    shapes = [
        _shape(
            method,
            "server",
            http,
            "http.status_code",
            http_server_error,
            _FRONTEND,
            protocol="http",
        ),
        _shape(
            op, "server", handle, "http.status_code", http_server_error, _FRONTEND, protocol="http"
        ),
    ]
    if route.startswith("/api/"):
        name = f"executing api route (pages) {route}"
        run: Attributes = {
            "next.span_type": "Node.runHandler",
            "next.span_name": name,
            "next.route": route,
        }
        shapes.append(
            _shape(
                name,
                "internal",
                run,
                "http.status_code",
                http_server_error,
                _FRONTEND,
                protocol="http",
            )
        )
    return tuple(shapes)


# --- the backends ---------------------------------------------------------------------------

_CHECKOUT = "checkout/main.go L248, L445, L463-L583 (otelgrpc, otelhttp v0.64.0, go.mod L12-L13)"
_CHECKOUT_GRPC = _grpc_client("", _CHECKOUT)


def _checkout_client(callee: str, op: str) -> SpanShape | None:
    if callee == "kafka":
        attributes: Attributes = {
            "peer.service": "kafka",
            "network.transport": "tcp",
            "messaging.system": "kafka",
            "messaging.destination.name": "orders",
            "messaging.operation": "publish",
        }
        source = "checkout/main.go L677-L690 (createProducerSpan)"
        return _shape("orders publish", "producer", attributes, None, never_error, source)
    if callee in ("shipping", "email"):
        attributes = {"http.request.method": "POST", "server.address": callee}
        return _shape(
            "HTTP POST",
            "client",
            attributes,
            "http.response.status_code",
            http_client_error,
            _CHECKOUT,
            protocol="http",
        )
    return _CHECKOUT_GRPC(callee, op)


_CATALOG = "product-catalog/main.go L145-L150, L243 (otelsql v0.41.0, otelgrpc v0.64.0; go.mod)"


def _catalog_client(callee: str, _op: str) -> SpanShape | None:
    if callee != "postgresql":
        return None
    attributes: Attributes = {"db.system.name": "postgresql"}
    return _shape("sql.conn.query", "client", attributes, None, grpc_client_error, _CATALOG)


_CART = "cart/src/Program.cs L71-L78 (AspNetCore 1.14.0, StackExchangeRedis 1.14.0-beta.1)"
_CART_FLAGD = (
    "cart/src/Program.cs L52, L78 (FlagdProvider of OpenFeature.Contrib.Providers.Flagd "
    "0.3.4, cart.csproj L32; GrpcNetClient 1.14.0-beta.1, L24)"
)


def _cart_server(op: str) -> tuple[SpanShape, ...]:
    route = f"/{PACKAGE}.CartService/{op}"
    attributes: Attributes = {
        "http.request.method": "POST",
        "http.route": route,
        "url.path": route,
        "url.scheme": "http",
        "network.protocol.version": "2",
    }
    # A gRPC error travels in a trailer of an HTTP 200: the HTTP span sees 200.
    return (
        _shape(f"POST {route}", "server", attributes, None, never_error, _CART, protocol="http"),
    )


def _cart_client(callee: str, op: str) -> SpanShape | None:
    """Valkey commands, and the flagd provider's gRPC calls (``Grpc.Net.Client``, which
    ``AddGrpcClientInstrumentation`` traces: ``Program.cs`` L78; ``GrpcNetClient``
    1.14.0-beta.1, ``cart.csproj`` L24). The HttpClient span the HTTP instrumentation opens
    under the gRPC one is left out (one client span per outgoing call in the engine), an
    assumption of this declaration."""
    if callee == FLAG_SERVICE:
        method = split_evaluation_op(op)[0]
        attributes: Attributes = {
            "rpc.system": "grpc",
            "rpc.service": FLAGD_RPC_SERVICE,
            "rpc.method": method,
            "server.address": FLAG_SERVICE,
            "server.port": FLAGD_RPC_PORT,
        }
        name = f"{FLAGD_RPC_SERVICE}/{method}"
        return _shape(
            name, "client", attributes, "rpc.grpc.status_code", grpc_client_error, _CART_FLAGD
        )
    if callee != "valkey-cart":
        return None
    return _shape(op, "client", {"db.system": "redis"}, None, grpc_client_error, _CART)


_CURRENCY = "currency/src/server.cpp L109-L135, L170-L221"


def _currency_server(op: str) -> tuple[SpanShape, ...]:
    attributes = _rpc("currency", op)
    attributes["rpc.grpc.status_code"] = 0  # set when the span starts, whatever the outcome
    if op == "Convert":
        attributes["app.currency.conversion.from"] = "USD"
        attributes["app.currency.conversion.to"] = "USD"
    return (
        _shape(
            f"Currency/{op}",
            "server",
            attributes,
            None,
            grpc_client_error,
            _CURRENCY,
            ok_status="ok",
        ),
    )


_PAYMENT = "payment/opentelemetry.js L16-L24 (auto-instrumentations-node 0.67.3); charge.js L25"


def _payment_server(op: str) -> tuple[SpanShape, ...]:
    grpc = _grpc_server("payment", "grpc.", grpc_client_error, _PAYMENT)(op)
    charge = _shape(
        "charge", "internal", {"app.payment.charged": True}, None, never_error, _PAYMENT
    )
    return (*grpc, charge)


_SHIPPING = "shipping/src/main.rs L46-L49 (actix-web instrumentation 0.23.0); quote.rs L40-L61"


def _shipping_client(callee: str, op: str) -> SpanShape | None:
    if callee != "quote":
        return None
    attributes: Attributes = {"http.request.method": "POST", "server.address": callee}
    return _shape(
        op,
        "client",
        attributes,
        "http.response.status_code",
        http_client_error,
        _SHIPPING,
        protocol="http",
    )


_EMAIL = "email/email_server.rb L32-L33, L64 (opentelemetry-instrumentation-all ~> 0.87)"


def _email_server(op: str) -> tuple[SpanShape, ...]:
    send = _shape("send_email", "internal", {}, None, never_error, _EMAIL)
    return (*_http_server(_EMAIL)(op), send)


_QUOTE = "quote/app/routes.php L18-L21, L52 (opentelemetry-auto-slim 1.3.0)"


def _quote_server(op: str) -> tuple[SpanShape, ...]:
    calculate = _shape("calculate-quote", "internal", {}, None, never_error, _QUOTE)
    return (*_http_server(_QUOTE)(op), calculate)


_RECOMMENDATION = "recommendation/recommendation_server.py L70 (opentelemetry-distro 0.60b1)"


def _recommendation_server(op: str) -> tuple[SpanShape, ...]:
    """The gRPC server span and ``get_product_list`` around the catalogue call: a failed
    call raises out of its ``start_as_current_span`` block, which sets the error status
    (the Python SDK's ``set_status_on_exception`` default)."""
    grpc = _grpc_server("recommendation", "/", grpc_client_error, _RECOMMENDATION)(op)
    listing = _shape(
        "get_product_list",
        "internal",
        {"app.recommendation.cache_enabled": False},
        None,
        grpc_client_error,
        _RECOMMENDATION,
    )
    return (*grpc, listing)


_AD = "ad/Dockerfile L31-L32 (Java agent 2.23.0, build.gradle L20)"


_REVIEWS = (
    "product-reviews/Dockerfile L31 (opentelemetry-instrument of opentelemetry-distro 0.60b1, "
    "requirements.txt L4); product_reviews_server.py L119, L157"
)
_REVIEW_SPANS = {
    "GetProductReviews": "get_product_reviews",  # L119
    "GetAverageProductReviewScore": "get_average_product_review_score",  # L143
    "AskProductAIAssistant": "get_ai_assistant_response",  # L157
}
"""Each handler's own span, opened with ``tracer.start_as_current_span`` around its work."""


def _reviews_server(op: str) -> tuple[SpanShape, ...]:
    """The gRPC server span (Python's full-method name, like recommendation's), then the
    handler's own span. An exception that leaves a ``start_as_current_span`` block sets
    the error status on it (the Python SDK's ``set_status_on_exception`` default), and the
    gRPC span records it too; the rate-limit path sets it by hand (L197-L199)."""
    grpc = _grpc_server("product-reviews", "/", grpc_client_error, _REVIEWS)(op)
    own = _REVIEW_SPANS.get(op)
    if own is None:
        return grpc
    return (*grpc, _shape(own, "internal", {}, None, grpc_client_error, _REVIEWS))


REVIEWS_QUERY = (
    "SELECT username, description, score FROM reviews.productreviews WHERE product_id= %s"
)
"""``fetch_product_reviews_from_db``'s query (``product-reviews/database.py`` L37)."""


LLM_MODEL = "astronomy-llm"
"""``LLM_MODEL`` in the chart (rendered ``component.yaml`` L1999), the model both chat calls
name (``product_reviews_server.py`` L219, L293)."""


def _reviews_client(callee: str, _op: str) -> SpanShape | None:
    """psycopg2's DB-API spans (named by the statement's first word, with the statement),
    and the OpenAI client's chat calls to the llm as the GenAI instrumentation
    (``opentelemetry-instrumentation-openai-v2``, ``llm/README.md`` L9-L11) names them:
    ``<operation> <model>``, an error when the call raises (a 4xx or 5xx answer, none).
    opentelemetry-bootstrap installs an instrumentation for each library the image has
    (Dockerfile L15); httpx's own span under the chat span is left out (one client span
    per outgoing call in the engine), an assumption of this declaration."""
    if callee == "postgresql":
        attributes: Attributes = {
            "db.system": "postgresql",
            "db.name": "otel",
            "db.user": "otelu",
            "db.statement": REVIEWS_QUERY,
            "net.peer.name": "postgresql",
        }
        return _shape("SELECT", "client", attributes, None, grpc_client_error, _REVIEWS)
    if callee == "llm":
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.system": "openai",
            "gen_ai.request.model": LLM_MODEL,
            "server.address": "llm",
            "server.port": 8000,
        }
        name = f"chat {LLM_MODEL}"
        return _shape(
            name, "client", attributes, None, http_client_error, _REVIEWS, protocol="http"
        )
    return None


_LOADGEN = (
    "load-generator/locustfile.py L41-L44, L71 (opentelemetry-sdk 1.39.1, "
    "opentelemetry-instrumentation-requests 0.60b1: requirements.txt L9, L12); task spans "
    "L122-L222"
)
TASK_SPANS: dict[str, str] = {
    "index": "user_index",  # L122
    "browse_product": "user_browse_product",  # L129
    "get_recommendations": "user_get_recommendations",  # L136
    "get_product_reviews": "user_get_product_reviews",  # L146
    "ask_product_ai_assistant": "user_ask_product_ai_assistant",  # L154
    "get_ads": "user_get_ads",  # L164
    "view_cart": "user_view_cart",  # L173
    "add_to_cart": "user_add_to_cart",  # L183
    "checkout": "user_checkout_single",  # L198
    "checkout_multi": "user_checkout_multi",  # L209
}
"""Each Locust task's span: ``start_as_current_span(<name>, context=Context())``, a new
trace per task run; it sets no status (an exception inside would, none is raised: Locust's
client records a failed request instead of raising)."""
NESTED_TASK = "add_to_cart"
"""The task the checkout tasks call for their cart rounds (L199, L211): its span nests in
theirs, around its own two requests."""


def _task_span(task: str) -> SpanShape:
    return _shape(TASK_SPANS[task], "internal", {}, None, never_error, _LOADGEN)


@cache
def _load_tasks(scope: str) -> tuple[tuple[float, tuple[SpanShape, ...]], ...]:
    """Route scope -> (weight, the task spans open around one of its requests): the task's
    weight times how many such requests one run sends (``traffic.TASKS``); a checkout's
    cart requests run inside its ``add_to_cart`` span."""
    cart_round = {scope for scope, _ in TASKS[NESTED_TASK][1]}
    found: list[tuple[float, tuple[SpanShape, ...]]] = []
    for task, (weight, requests) in TASKS.items():
        for sent, count in requests:
            if sent != scope:
                continue
            spans: tuple[SpanShape, ...] = (_task_span(task),)
            if task.startswith("checkout") and scope in cart_round:
                spans = (*spans, _task_span(NESTED_TASK))
            found.append((weight * count, spans))
    return tuple(found)


def _loadgen_client(callee: str, op: str) -> SpanShape | None:
    """The requests library's client span of each HTTP request (old conventions: named by
    the method); the urllib3 instrumentation below it opens none, as requests' span
    suppresses the HTTP instrumentations under it. The OFREP provider's evaluations go
    through requests too (a ``requests.Session``), so they are the same span, with the
    evaluation's fixed URL (``_ofrep_client``)."""
    if callee == FLAG_SERVICE:
        return _ofrep_client(op)
    if callee != "frontend-proxy":
        return None
    method = op.split(" ", 1)[0]
    return _shape(
        method,
        "client",
        {"http.method": method},
        "http.status_code",
        http_client_error,
        _LOADGEN,
        protocol="http",
    )


def _no_server(_op: str) -> tuple[SpanShape, ...]:
    return ()


_ACCOUNTING = (
    "accounting/Dockerfile L34-L36 (instrument.sh of OpenTelemetry.AutoInstrumentation "
    "1.13.0, Accounting.csproj L22); Consumer.cs L65"
)
ORDERS_TOPIC = "orders"
"""The topic checkout produces to and both consumers subscribe to (``accounting/Consumer.cs``
L29, ``checkout/kafka/producer.go`` L13)."""


ACCOUNTING_DB = "otel"
"""The database of accounting's ``DB_CONNECTION_STRING`` (rendered ``component.yaml``
L609-L610: ``Host=postgresql;Username=otelu;Password=otelp;Database=otel``)."""
ACCOUNTING_WRITE = "SaveChanges"
"""The operation accounting's order write is walked as (``Consumer.cs`` L132)."""


def _accounting_client(callee: str, _op: str) -> SpanShape | None:
    """Npgsql's own command span for the order's ``SaveChanges`` (``Consumer.cs`` L132).

    The chart turns the auto-instrumentation's EF Core instrumentation off
    (``OTEL_DOTNET_AUTO_TRACES_ENTITYFRAMEWORKCORE_INSTRUMENTATION_ENABLED: "false"``,
    rendered ``component.yaml`` L611-L612), so EF Core opens no span; the Npgsql
    instrumentation (on by default) listens to Npgsql's ``ActivitySource``. Npgsql 10.0.0
    (the floor ``Npgsql.EntityFrameworkCore.PostgreSQL`` 10.0.0 requires, ``Accounting.csproj``
    L21) names a text command's span ``postgresql`` (its ``NpgsqlActivitySource.CommandStart``:
    no query summary without parsing SQL, so the system's name) and tags it with
    ``db.system.name``, ``db.namespace`` (the database) and ``server.address`` (the host);
    the port is left out at 5432. Named assumptions (Npgsql's source is not in the reference
    tree): EF Core sends the order's inserts as one batch, hence one span per order; the
    statement (``db.query.text``, which varies with the order's items) and the per-connection
    tags are left out, as every per-request value here; a connection that cannot be opened
    fails before the command starts, which upstream opens no span, while the engine still
    shows the failed call as its client span (one per call)."""
    if callee != "postgresql":
        return None
    attributes: Attributes = {
        "db.system.name": "postgresql",
        "db.namespace": ACCOUNTING_DB,
        "server.address": "postgresql",
    }
    return _shape("postgresql", "client", attributes, None, grpc_client_error, _ACCOUNTING_DB)


_ACCOUNTING_DB = (
    "accounting/Consumer.cs L22, L132 (UseNpgsql, SaveChanges; Npgsql 10.0.0's ActivitySource, "
    "Accounting.csproj L21); EF Core instrumentation off (chart component.yaml L611-L612)"
)


def _kafka_consumer(operation: str, group: str, source: str) -> SpanShape:
    attributes: Attributes = {
        "messaging.system": "kafka",
        "messaging.destination.name": ORDERS_TOPIC,
        "messaging.operation": operation,
        "messaging.kafka.consumer.group": group,
    }
    name = f"{ORDERS_TOPIC} {operation}"
    return _shape(name, "consumer", attributes, None, never_error, source)


def _accounting_server(_op: str) -> tuple[SpanShape, ...]:
    """The loop's own ``order-consumed`` activity (registered by
    ``OTEL_DOTNET_AUTO_TRACES_ADDITIONAL_SOURCES``, Dockerfile L34), started before
    ``Consume`` with no parent, then the auto-instrumentation's Kafka consumer span under
    it (``<topic> receive``)."""
    own = _shape("order-consumed", "internal", {}, None, never_error, _ACCOUNTING)
    return (own, _kafka_consumer("receive", "accounting", _ACCOUNTING))


_FRAUD = (
    "fraud-detection/Dockerfile L22 (Java agent 2.23.0); receive telemetry on "
    "(chart component.yaml L1187-L1188)"
)


def _fraud_server(_op: str) -> tuple[SpanShape, ...]:
    """The Java agent's Kafka spans with ``OTEL_INSTRUMENTATION_MESSAGING_EXPERIMENTAL_
    RECEIVE_TELEMETRY_ENABLED``: the poll's ``receive`` span, a root, and the ``process``
    span of iterating its record, a child (linked to the producer, not parented by it)."""
    receive = _kafka_consumer("receive", "fraud-detection", _FRAUD)
    return (receive, _kafka_consumer("process", "fraud-detection", _FRAUD))


_IMAGES = "image-provider/nginx.conf.template L1, L13-L16 (ngx_otel_module, Dockerfile L4)"


def _images_server(op: str) -> tuple[SpanShape, ...]:
    """nginx's otel module: one server span per request, named by ``otel_span_name``."""
    method = op.split(" ", 1)[0]
    return (
        _shape(
            "image-provider",
            "server",
            {"http.method": method},
            "http.status_code",
            http_server_error,
            _IMAGES,
            protocol="http",
        ),
    )


# --- flagd and the flag evaluations -----------------------------------------------------------

FLAG_SERVICE = "flagd"
"""The flag service's deployment; every provider dials ``FLAGD_HOST`` (``flagd`` in the
chart's environment of each reader, e.g. rendered ``component.yaml`` L681-L682)."""
FLAGD_RPC_SERVICE = "flagd.evaluation.v1.Service"
"""The evaluation service the RPC providers call: the ``flagd/evaluation/v1`` schema
(generated ``evaluationv1connect`` in ``checkout/go.mod`` L29; its ``Service`` in flagd's
``flag_evaluator_v2.go``)."""
FLAGD_RPC_PORT = 8013
"""``--port 8013`` (rendered ``component.yaml`` L1042-L1043), ``FLAGD_PORT``."""
DEMO_TAG = "open-telemetry/opentelemetry-demo@2.2.0"
"""The release itself, for a file its reference copy lacks (email's ``Gemfile.lock``, which
``email/Dockerfile`` L8 copies into the image)."""
RUBY_PROVIDER_TAG = "open-feature/ruby-sdk-contrib@openfeature-flagd-provider/v0.1.0"
"""email's flagd provider at the release lock's pin (``Gemfile.lock`` L52)."""
_RUBY_PROVIDER_SRC = "providers/openfeature-flagd-provider/lib/openfeature/flagd/provider/client.rb"
FLAGD_TAG = "open-feature/flagd@flagd/v0.12.9"
"""flagd's source at the chart's image tag (``ghcr.io/open-feature/flagd:v0.12.9``,
rendered ``component.yaml`` L1037): not in the reference tree, read at that tag."""

_FLAGD = (
    f"{FLAGD_TAG}: core/pkg/telemetry/builder.go L108-L116 (otelconnect v0.7.2 with "
    "WithTrustRemote, flagd/go.mod L45), flagd/pkg/service/flag-evaluation/"
    "flag_evaluator_v2.go L48, L201 (resolve<Type> server spans), flag_evaluator.go L361-L362 "
    "(feature-flag attributes), core/pkg/evaluator/json.go L199 (the evaluator's span); "
    "FLAGD_OTEL_COLLECTOR_URI set (chart component.yaml L1066-L1067)"
)


FLAGD_FLAG_ATTRIBUTES = True
"""Whether flagd's ``resolve<Type>`` server span carries the three feature-flag attributes
the pinned flagd sets on it (``flag_evaluator.go`` L361-L362 at v0.12.9). On: the variant
flagd serves is evidence a method can see, as in flagd's real traces. The dataset's answer
guard (``datasets/traces.answer_leaks``) reads the conventions' ``feature_flag.`` keys as
blank, since their presence says nothing about the fault (flagd sets them on every
evaluation) while the fault type ``feature_flag`` is a substring of each; off, a span
carries none of them (the switch keeps the shape testable both ways)."""


def _lower_first(method: str) -> str:
    return method[:1].lower() + method[1:]


def _flagd_server(op: str) -> tuple[SpanShape, ...]:
    """What flagd opens per evaluation RPC, outermost first:

    - otelconnect's server interceptor, which flagd installs when a collector is configured
      (the chart sets one): the span named by the procedure without its leading ``/``,
      the RPC attributes (the client's address, a per-request value, left out) and the
      gRPC code; it continues the caller's trace (``WithTrustRemote``). Its error rule is
      assumed to be otelgrpc's server list (the interceptor's ``serverSpanStatus`` is not
      in the reference tree);
    - the handler's own ``resolve<Type>`` span (kind server, tracer
      ``flagd.evaluation.v1``), on which ``resolve`` sets the semantic conventions' (v1.34)
      ``feature_flag.key``, ``feature_flag.result.variant`` and ``feature_flag.provider.name``
      (``flagd``): the variant flagd serves is on the span, so a flipped flag shows there as
      it would to a reader of flagd's traces (``FLAGD_FLAG_ATTRIBUTES``);
    - the JSON evaluator's ``resolve<Type>`` span (internal) under it."""
    if len(op.split(" ")) != 3:  # not an evaluation: flagd serves no other operation
        return ()
    method, key, variant = split_evaluation_op(op)
    if method == OFREP:
        return _flagd_ofrep_server(op)
    rpc: Attributes = {"rpc.system": "grpc", "rpc.service": FLAGD_RPC_SERVICE, "rpc.method": method}
    flagged: Attributes = {}
    if FLAGD_FLAG_ATTRIBUTES:
        flagged = {
            "feature_flag.key": key,
            "feature_flag.result.variant": variant,
            "feature_flag.provider.name": FLAG_SERVICE,
        }
    own = _lower_first(method)
    return (
        _shape(
            f"{FLAGD_RPC_SERVICE}/{method}",
            "server",
            rpc,
            "rpc.grpc.status_code",
            grpc_go_server_error,
            _FLAGD,
        ),
        _shape(own, "server", flagged, None, never_error, _FLAGD),
        _shape(own, "internal", {}, None, never_error, _FLAGD),
    )


OFREP = "OFREP"
"""The operation an OFREP evaluation is walked as (``evaluation_op(OFREP, flag, variant)``):
an HTTP ``POST`` to flagd's OFREP port, not an RPC of the evaluation service."""
FLAGD_OFREP_PORT = 8016
"""``--ofrep-port 8016`` (rendered ``component.yaml`` L1044-L1045), the load generator's
``FLAGD_OFREP_PORT`` (L1694-L1695)."""
OFREP_PATH = "/ofrep/v1/evaluate/flags/"
"""The single-flag evaluation path, followed by the flag's key: the provider posts to
``<base>/ofrep/v1/`` + ``evaluate/flags/<key>`` (``_get_ofrep_api_url``, ``_resolve``),
the route flagd serves (``ofrep/handler.go`` L21, L43: ``POST`` only)."""
_OFREP_PROVIDER = "open-feature/python-sdk-contrib@openfeature-provider-ofrep/v0.2.0"
"""The load generator's OFREP provider at its pin (``load-generator/requirements.txt`` L4):
not in the reference tree, read at that tag."""
_OFREP_SRC = "providers/openfeature-provider-ofrep/src/openfeature/contrib/provider/ofrep"
_REQUESTS = (
    "open-telemetry/opentelemetry-python-contrib@v0.60b1: instrumentation/"
    "opentelemetry-instrumentation-requests/src/opentelemetry/instrumentation/requests/"
    "__init__.py L241, L246-L252, L262, L310, L334, L388"
)
"""The requests instrumentation at the load generator's pin (``requirements.txt`` L9): not in
the reference tree, read at its tag."""
_LOADGEN_OFREP = (
    "load-generator/locustfile.py L78-L80, L82-L85, L218-L220 (OFREPProvider, "
    "get_integer_value); "
    f"{_OFREP_PROVIDER}: providers/openfeature-provider-ofrep/src/openfeature/contrib/"
    "provider/ofrep/__init__.py L58, L149-L154 (one requests.Session POST per evaluation); "
    f"{_REQUESTS}"
)
_OTELHTTP = (
    "open-telemetry/opentelemetry-go-contrib@instrumentation/net/http/otelhttp/v0.62.0: "
    "instrumentation/net/http/otelhttp/handler.go L39, L58 (the operation as the name, kind "
    "server), internal/semconv/httpconv.go L20, L46-L168, L209-L241 (semconv v1.34.0 "
    "attributes), internal/semconv/env.go L104-L112 (error on 5xx)"
)
"""otelhttp's server side at the version flagd v0.12.9 requires (``flagd/go.mod`` L23): not
in the reference tree, read at its tag."""
_FLAGD_OFREP = (
    f"{FLAGD_TAG}: flagd/pkg/service/flag-evaluation/ofrep/handler.go L45 (otelhttp v0.62.0, "
    "flagd/go.mod L23), L69 (ResolveAsAnyValue); core/pkg/evaluator/json.go L275; "
    f"core/pkg/telemetry/builder.go L101 (W3C trace-context propagator); {_OTELHTTP}"
)


def _ofrep_client(op: str) -> SpanShape | None:
    """requests' span of the OFREP provider's ``POST`` (``_REQUESTS``): named by the method,
    the old HTTP conventions' method and URL (fixed: ``FLAGD_HOST``, the OFREP port, the
    flag's path), the status code when an answer came; an error from a 4xx/5xx answer, or
    from the exception of a call that got none (re-raised inside the span, so the SDK marks
    it). The user agent it also sets is left out: the requests version is not pinned."""
    if len(op.split(" ")) != 3 or split_evaluation_op(op)[0] != OFREP:
        return None
    url = f"http://{FLAG_SERVICE}:{FLAGD_OFREP_PORT}{OFREP_PATH}{split_evaluation_op(op)[1]}"
    return _shape(
        "POST",
        "client",
        {"http.method": "POST", "http.url": url},
        "http.status_code",
        http_client_error,
        _LOADGEN_OFREP,
        protocol="http",
    )


def _flagd_ofrep_server(op: str) -> tuple[SpanShape, ...]:
    """What flagd opens per OFREP evaluation, outermost first: otelhttp's handler span
    named by its operation, ``flagd.ofrep`` (kind server; it continues the caller's trace
    through the propagator flagd installs), with the attributes otelhttp v0.62.0 sets from
    the request under the HTTP conventions v1.34 (``_OTELHTTP``: host, method, scheme, the
    port, which is not the scheme's default, the path and the protocol version; no
    ``http.route``, as gorilla/mux sets no ``Request.Pattern``) and the response code, an
    error on 5xx only; then the JSON evaluator's ``resolveAnyValue`` (internal, no
    attributes). The handler's own tracer (``flagd.ofrep.v1``) opens nothing, and no span
    of this path carries the flag's variant (``resolve`` with
    ``SemConvFeatureFlagAttributes`` is the RPC path's only). Left out as per-connection
    or unpinned values: the peer's and client's address and port, the user agent (the
    requests version is not pinned) and the body sizes."""
    key = split_evaluation_op(op)[1]
    attributes: Attributes = {
        "server.address": FLAG_SERVICE,
        "http.request.method": "POST",
        "url.scheme": "http",
        "server.port": FLAGD_OFREP_PORT,
        "url.path": f"{OFREP_PATH}{key}",
        "network.protocol.version": "1.1",
    }
    handler = _shape(
        "flagd.ofrep",
        "server",
        attributes,
        "http.response.status_code",
        http_server_error,
        _FLAGD_OFREP,
        protocol="http",
    )
    return (handler, _shape("resolveAnyValue", "internal", {}, None, never_error, _FLAGD_OFREP))


def _evaluation(key: str, resolve: str, source: str) -> FlagEvaluation:
    return FlagEvaluation(key, resolve, flag(VERSION, key).off, source)


EVALUATIONS: dict[tuple[str, str], tuple[FlagEvaluation, ...]] = {
    ("cart", "EmptyCart"): (
        _evaluation(
            "cartFailure",
            "ResolveBoolean",
            "cart/src/services/CartService.cs L83 (GetBooleanValueAsync); no cache: "
            "FlagdConfig enables one only for FLAGD_CACHE=lru, unset in the chart",
        ),
    ),
    ("email", "POST /send_order_confirmation"): (
        FlagEvaluation(
            "emailMemoryLeak",
            "ResolveInt",
            flag(VERSION, "emailMemoryLeak").off,
            "email/email_server.rb L67 (fetch_number_value, default 0); the release's "
            "Gemfile.lock L52 pins openfeature-flagd-provider 0.1.0, whose "
            "fetch_number_value sends an Integer default as ResolveInt (client.rb L49-L61); "
            "only Sinatra is instrumented (L32-L33): no client span, no context",
            propagated=False,
        ),
    ),
}
"""The evaluations that reach flagd on every request: cart's and email's. Every other reader's
provider answers from its own LRU cache after the first evaluation (a flag without targeting
resolves ``STATIC``, which the RPC resolvers cache until flagd's event stream reports a
configuration change): the Go provider v0.3.1 (checkout, product-catalog: cache ``lru`` by
default), Java 0.11.19 (ad, fraud-detection), Node 0.13.3 (payment) and Python 0.2.3
(recommendation, product-reviews, llm). Those once-per-change calls and flagd's event
streams are not walked. email's provider is the Ruby 0.1.0 of the release's lock (from
0.1.1 on, its ``fetch_number_value`` raises before any call and the SDK would return the
default, so the pin matters: the flag works in this release). The load generator's OFREP
evaluation in ``flood_home`` reaches flagd directly, not through the entry point's routes:
it is a side trace (``SIDE_TRACES``)."""

FLOOD_TASK = "flood_home"
"""The task that evaluates ``loadGeneratorFloodHomepage`` on every run (L218-L220)."""
OFREP_TIMEOUT_MS = 5000.0
"""The OFREP provider's default ``timeout=5.0`` s (its ``__init__``, L52), which the
locustfile keeps (``OFREPProvider(base_url=base_url)``, L79), passed to each ``POST``."""

SIDE_TRACES = (
    SideTrace(
        task=FLOOD_TASK,
        evaluation=_evaluation(
            "loadGeneratorFloodHomepage", OFREP, "load-generator/locustfile.py L220"
        ),
        share=TASKS[FLOOD_TASK][0] / TASK_WEIGHT,
        timeout_ms=OFREP_TIMEOUT_MS,
        source=_LOADGEN_OFREP,
    ),
)
"""The load generator's evaluation outside its task spans: ``flood_home`` (weight 5 of 32)
calls ``get_flagd_value`` before it opens ``user_flood_home``, so no span of its own is
current and requests' ``POST`` is the root of a trace; the OFREP provider keeps no cache
and sends one ``POST`` per evaluation (it batches nothing: the bulk path is another
provider's), and ``TracingHook`` adds span events, which a ``Span`` does not carry. While
the flag is off (0) the task ends there; flipped, the task would open ``user_flood_home``
and send its ``GET /`` requests, which the load model does not send (``traffic.TASKS``:
the flag is not realizable), so only the value flagd serves changes. A flagd that is down
or unreachable fails the ``POST`` (no status code) and opens no span; the SDK returns the
default 0."""


_SRC = "opentelemetry-demo-2.2.0/src"
_RENDERED = "opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml"


def _cite(path: str, line: int, fragment: str) -> Cited:
    return Cited(f"{_SRC}/{path}", line, fragment)


EVIDENCE: dict[str, tuple[Cited, ...]] = {
    "frontend-proxy": (
        _cite("frontend-proxy/envoy.tmpl.yaml", 19, "spawn_upstream_span: true"),
        _cite("frontend-proxy/envoy.tmpl.yaml", 21, "name: envoy.tracers.opentelemetry"),
    ),
    "frontend": (
        _cite("frontend/utils/telemetry/Instrumentation.js", 18, "getNodeAutoInstrumentations({"),
        _cite("frontend/package.json", 20, '"@opentelemetry/auto-instrumentations-node": "0.67.3"'),
        _cite("frontend/package.json", 44, '"next": "16.1.1"'),
        _cite(
            "frontend/utils/telemetry/InstrumentationMiddleware.ts",
            25,
            "span.setStatus({ code: SpanStatusCode.ERROR })",
        ),
        _cite(
            "frontend/utils/telemetry/InstrumentationMiddleware.ts",
            30,
            "span.setAttribute(SemanticAttributes.HTTP_STATUS_CODE, httpStatus)",
        ),
    ),
    "checkout": (
        _cite("checkout/main.go", 248, "otelgrpc.NewServerHandler()"),
        _cite("checkout/main.go", 445, "otelgrpc.NewClientHandler()"),
        _cite("checkout/main.go", 463, 'otelhttp.Post(ctx, cs.shippingSvcAddr+"/get-quote"'),
        _cite("checkout/main.go", 583, 'otelhttp.Post(ctx, cs.shippingSvcAddr+"/ship-order"'),
        _cite(
            "checkout/main.go", 561, 'otelhttp.Post(ctx, cs.emailSvcAddr+"/send_order_confirmation"'
        ),
        _cite("checkout/main.go", 680, 'fmt.Sprintf("%s publish", msg.Topic)'),
        _cite("checkout/kafka/producer.go", 13, '"orders"'),
        _cite("checkout/go.mod", 12, "otelgrpc v0.64.0"),
        _cite("checkout/go.mod", 13, "otelhttp v0.64.0"),
    ),
    "product-catalog": (
        _cite("product-catalog/main.go", 243, "otelgrpc.NewServerHandler()"),
        _cite("product-catalog/main.go", 145, 'otelsql.Open("postgres", connStr,'),
        _cite("product-catalog/go.mod", 6, "github.com/XSAM/otelsql v0.41.0"),
        _cite("product-catalog/go.mod", 12, "otelgrpc v0.64.0"),
    ),
    "cart": (
        _cite("cart/src/Program.cs", 77, ".AddAspNetCoreInstrumentation()"),
        _cite("cart/src/Program.cs", 78, ".AddGrpcClientInstrumentation()"),
        _cite("cart/src/Program.cs", 52, ".AddProvider(_ => new FlagdProvider())"),
        _cite("cart/src/services/CartService.cs", 83, 'GetBooleanValueAsync("cartFailure", false)'),
        _cite(
            "cart/src/cart.csproj",
            24,
            'OpenTelemetry.Instrumentation.GrpcNetClient" Version="1.14.0-beta.1"',
        ),
        _cite(
            "cart/src/cart.csproj",
            32,
            'OpenFeature.Contrib.Providers.Flagd" Version="0.3.4"',
        ),
        _cite("cart/src/Program.cs", 75, ".AddRedisInstrumentation("),
        _cite(
            "cart/src/cart.csproj", 23, 'OpenTelemetry.Instrumentation.AspNetCore" Version="1.14.0"'
        ),
        _cite(
            "cart/src/cart.csproj",
            27,
            'OpenTelemetry.Instrumentation.StackExchangeRedis" Version="1.14.0-beta.1"',
        ),
    ),
    "currency": (
        _cite("currency/src/server.cpp", 118, '"Currency/GetSupportedCurrencies"'),
        _cite("currency/src/server.cpp", 179, '"Currency/Convert"'),
        _cite("currency/src/server.cpp", 135, "span->SetStatus(StatusCode::kOk)"),
        _cite("currency/src/server.cpp", 221, "span->SetStatus(StatusCode::kError)"),
    ),
    "payment": (
        _cite("payment/opentelemetry.js", 19, "getNodeAutoInstrumentations({"),
        _cite("payment/package.json", 17, '"@opentelemetry/auto-instrumentations-node": "0.67.3"'),
        _cite("payment/charge.js", 25, "tracer.startSpan('charge')"),
    ),
    "shipping": (
        _cite("shipping/src/main.rs", 48, ".wrap(RequestTracing::new())"),
        _cite("shipping/src/shipping_service/quote.rs", 61, ".trace_request()"),
        _cite(
            "shipping/Cargo.toml",
            21,
            'opentelemetry-instrumentation-actix-web = { version = "0.23.0"',
        ),
        _cite("shipping/src/shipping_service.rs", 18, '#[post("/get-quote")]'),
        _cite("shipping/src/shipping_service.rs", 47, '#[post("/ship-order")]'),
    ),
    "email": (
        _cite("email/email_server.rb", 33, 'c.use "OpenTelemetry::Instrumentation::Sinatra"'),
        _cite(
            "email/email_server.rb",
            67,
            'client.fetch_number_value(flag_key: "emailMemoryLeak", default_value: 0)',
        ),
        Cited("src/email/Gemfile.lock", 52, "openfeature-flagd-provider (0.1.0)", tree=DEMO_TAG),
        *(
            Cited(_RUBY_PROVIDER_SRC, line, fragment, tree=RUBY_PROVIDER_TAG)
            for line, fragment in (
                (49, "def fetch_number_value(flag_key:, default_value:, evaluation_context: nil)"),
                (51, "when Integer"),
                (59, "request = Grpc::Evaluation::ResolveIntRequest.new("),
                (60, "process_request(default_value) { @grpc_client.resolve_int(request) }"),
            )
        ),
        _cite("email/email_server.rb", 43, 'post "/send_order_confirmation" do'),
        _cite("email/email_server.rb", 64, 'tracer.in_span("send_email")'),
        _cite("email/Gemfile", 22, '"opentelemetry-instrumentation-all",   "~> 0.87"'),
    ),
    "quote": (
        _cite("quote/app/routes.php", 19, "->spanBuilder('calculate-quote')"),
        _cite("quote/app/routes.php", 52, "$app->post('/getquote'"),
        _cite("quote/composer.json", 13, '"open-telemetry/opentelemetry-auto-slim": "1.3.0"'),
    ),
    "recommendation": (
        _cite("recommendation/Dockerfile", 30, "/venv/bin/opentelemetry-instrument"),
        _cite("recommendation/requirements.txt", 4, "opentelemetry-distro==0.60b1"),
        _cite(
            "recommendation/recommendation_server.py",
            70,
            'tracer.start_as_current_span("get_product_list")',
        ),
    ),
    "ad": (
        _cite("ad/Dockerfile", 32, "ENV JAVA_TOOL_OPTIONS=-javaagent:"),
        Cited("opentelemetry-demo-2.2.0/.env", 8, "OTEL_JAVA_AGENT_VERSION=2.23.0"),
    ),
    "product-reviews": (
        _cite("product-reviews/Dockerfile", 31, "/venv/bin/opentelemetry-instrument"),
        _cite("product-reviews/Dockerfile", 15, "opentelemetry-bootstrap -a install"),
        _cite("product-reviews/requirements.txt", 4, "opentelemetry-distro==0.60b1"),
        _cite(
            "product-reviews/product_reviews_server.py",
            119,
            'tracer.start_as_current_span("get_product_reviews")',
        ),
        _cite(
            "product-reviews/product_reviews_server.py",
            143,
            'tracer.start_as_current_span("get_average_product_review_score")',
        ),
        _cite(
            "product-reviews/product_reviews_server.py",
            157,
            'tracer.start_as_current_span("get_ai_assistant_response")',
        ),
        _cite("product-reviews/database.py", 37, REVIEWS_QUERY),
        _cite("llm/README.md", 10, "opentelemetry-instrumentation-openai-v2"),
        Cited(
            "opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml",
            2020,
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
        ),
        Cited(
            "opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml",
            1999,
            f"value: {LLM_MODEL}",
        ),
    ),
    "load-generator": (
        _cite(
            "load-generator/locustfile.py",
            44,
            "tracer_provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter(",
        ),
        _cite("load-generator/locustfile.py", 71, "RequestsInstrumentor().instrument()"),
        _cite(
            "load-generator/requirements.txt", 9, "opentelemetry-instrumentation-requests==0.60b1"
        ),
        _cite("load-generator/requirements.txt", 12, "opentelemetry-sdk==1.39.1"),
        _cite(
            "load-generator/locustfile.py", 79, "api.set_provider(OFREPProvider(base_url=base_url))"
        ),
        _cite("load-generator/locustfile.py", 85, "return client.get_integer_value(FlagName, 0)"),
        _cite(
            "load-generator/locustfile.py",
            220,
            'flood_count = get_flagd_value("loadGeneratorFloodHomepage")',
        ),
        _cite("load-generator/requirements.txt", 4, "openfeature-provider-ofrep==0.2.0"),
        Cited(_RENDERED, 1694, "FLAGD_OFREP_PORT"),
        *(
            Cited(f"{_OFREP_SRC}/__init__.py", line, fragment, tree=_OFREP_PROVIDER)
            for line, fragment in (
                (52, "timeout: float = 5.0,"),
                (58, "self.session = requests.Session()"),
                (149, "response = self.session.post("),
                (150, 'urljoin(self._get_ofrep_api_url(), f"evaluate/flags/{flag_key}"),'),
                (122, 'return urljoin(ofrep_base_url, f"ofrep/{api_version}/")'),
            )
        ),
        *(
            _cite("load-generator/locustfile.py", line, f'start_as_current_span("{name}"')
            for line, name in (
                (122, "user_index"),
                (129, "user_browse_product"),
                (136, "user_get_recommendations"),
                (146, "user_get_product_reviews"),
                (154, "user_ask_product_ai_assistant"),
                (164, "user_get_ads"),
                (173, "user_view_cart"),
                (183, "user_add_to_cart"),
                (198, "user_checkout_single"),
                (209, "user_checkout_multi"),
            )
        ),
    ),
    "accounting": (
        _cite(
            "accounting/Dockerfile",
            34,
            "ENV OTEL_DOTNET_AUTO_TRACES_ADDITIONAL_SOURCES=Accounting.Consumer",
        ),
        _cite("accounting/Dockerfile", 36, 'ENTRYPOINT ["./instrument.sh", "dotnet"'),
        _cite(
            "accounting/Accounting.csproj",
            22,
            'OpenTelemetry.AutoInstrumentation" Version="1.13.0"',
        ),
        _cite(
            "accounting/Consumer.cs", 65, 'StartActivity("order-consumed",  ActivityKind.Internal)'
        ),
        _cite("accounting/Consumer.cs", 29, 'TopicName = "orders"'),
        _cite("accounting/Consumer.cs", 22, "optionsBuilder.UseNpgsql(connectionString)"),
        _cite("accounting/Consumer.cs", 132, "_dbContext.SaveChanges();"),
        _cite(
            "accounting/Accounting.csproj",
            21,
            'Npgsql.EntityFrameworkCore.PostgreSQL" Version="10.0.0"',
        ),
        Cited(_RENDERED, 610, "Database=otel"),
        Cited(
            _RENDERED, 611, "OTEL_DOTNET_AUTO_TRACES_ENTITYFRAMEWORKCORE_INSTRUMENTATION_ENABLED"
        ),
        Cited(_RENDERED, 612, 'value: "false"'),
    ),
    FLAG_SERVICE: (
        Cited(_RENDERED, 1037, "image: 'ghcr.io/open-feature/flagd:v0.12.9'"),
        Cited(_RENDERED, 1066, "FLAGD_OTEL_COLLECTOR_URI"),
        Cited(_RENDERED, 1043, '"8013"'),
        Cited(_RENDERED, 1044, "--ofrep-port"),
        Cited(_RENDERED, 1045, '"8016"'),
        *(
            Cited(path, line, fragment, tree=FLAGD_TAG)
            for path, line, fragment in (
                (
                    "core/pkg/telemetry/builder.go",
                    111,
                    "otelconnect.NewInterceptor(otelconnect.WithTrustRemote())",
                ),
                ("flagd/go.mod", 45, "connectrpc.com/otelconnect v0.7.2"),
                (
                    "flagd/pkg/service/flag-evaluation/flag_evaluator_v2.go",
                    48,
                    'otel.Tracer("flagd.evaluation.v1")',
                ),
                (
                    "flagd/pkg/service/flag-evaluation/flag_evaluator_v2.go",
                    201,
                    's.flagEvalTracer.Start(ctx, "resolveBoolean", trace.WithSpanKind(trace.'
                    "SpanKindServer))",
                ),
                (
                    "flagd/pkg/service/flag-evaluation/flag_evaluator.go",
                    362,
                    "telemetry.SemConvFeatureFlagAttributes(flagKey, variant)",
                ),
                (
                    "core/pkg/telemetry/utils.go",
                    5,
                    'semconv "go.opentelemetry.io/otel/semconv/v1.34.0"',
                ),
                ("core/pkg/telemetry/utils.go", 10, 'const provider = "flagd"'),
                ("core/pkg/evaluator/json.go", 199, 'je.tracer.Start(ctx, "resolveBoolean")'),
                (
                    "flagd/pkg/service/flag-evaluation/flag_evaluator_v2.go",
                    257,
                    's.flagEvalTracer.Start(ctx, "resolveInt", trace.WithSpanKind(trace.'
                    "SpanKindServer))",
                ),
                ("core/pkg/evaluator/json.go", 244, 'je.tracer.Start(ctx, "resolveInt")'),
                (
                    "flagd/pkg/service/flag-evaluation/ofrep/handler.go",
                    45,
                    'otelhttp.NewHandler(router, "flagd.ofrep")',
                ),
                (
                    "flagd/pkg/service/flag-evaluation/ofrep/handler.go",
                    21,
                    'singleEvaluation = "/ofrep/v1/evaluate/flags/{key}"',
                ),
                (
                    "flagd/pkg/service/flag-evaluation/ofrep/handler.go",
                    43,
                    'router.HandleFunc(singleEvaluation, h.HandleFlagEvaluation).Methods("POST")',
                ),
                (
                    "flagd/pkg/service/flag-evaluation/ofrep/handler.go",
                    69,
                    "h.evaluator.ResolveAsAnyValue(r.Context(), requestID, flagKey, context)",
                ),
                ("core/pkg/evaluator/json.go", 275, 'je.tracer.Start(ctx, "resolveAnyValue")'),
                ("flagd/go.mod", 23, "otelhttp v0.62.0"),
                (
                    "core/pkg/telemetry/builder.go",
                    101,
                    "otel.SetTextMapPropagator(propagation.NewCompositeTextMapPropagator("
                    "propagation.TraceContext{}, propagation.Baggage{}))",
                ),
            )
        ),
    ),
    "fraud-detection": (
        _cite("fraud-detection/Dockerfile", 22, "ENV JAVA_TOOL_OPTIONS=-javaagent:"),
        Cited("opentelemetry-demo-2.2.0/.env", 8, "OTEL_JAVA_AGENT_VERSION=2.23.0"),
        Cited(
            "opentelemetry-demo-chart-0.40.10/examples/default/rendered/component.yaml",
            1187,
            "OTEL_INSTRUMENTATION_MESSAGING_EXPERIMENTAL_RECEIVE_TELEMETRY_ENABLED",
        ),
        _cite(
            "fraud-detection/src/main/kotlin/frauddetection/main.kt",
            27,
            'groupID = "fraud-detection"',
        ),
    ),
    "image-provider": (
        _cite("image-provider/nginx.conf.template", 1, "load_module modules/ngx_otel_module.so;"),
        _cite("image-provider/nginx.conf.template", 13, "otel_trace on;"),
        _cite("image-provider/nginx.conf.template", 16, "otel_span_name image-provider;"),
        _cite("image-provider/Dockerfile", 4, "nginx-unprivileged:1.29.0-alpine3.22-otel"),
    ),
}
"""Per instrumented deployment, the lines that show its instrumentation, its pins and the
names of the spans its own code opens."""


def _service(
    name: str, server: Callable[[str], tuple[SpanShape, ...]], client: Client, source: str
) -> ServiceTracing:
    return ServiceTracing(
        service_name=name, server=server, client=client, source=source, evidence=EVIDENCE[name]
    )


TRACING = Tracing(
    services={
        "frontend-proxy": _service("frontend-proxy", _proxy_server, _proxy_client, _ENVOY),
        "frontend": _service(
            "frontend", _frontend_server, _grpc_client("grpc.", _FRONTEND), _FRONTEND
        ),
        "checkout": _service(
            "checkout",
            _grpc_server("checkout", "", grpc_go_server_error, _CHECKOUT),
            _checkout_client,
            _CHECKOUT,
        ),
        "product-catalog": _service(
            "product-catalog",
            _grpc_server("product-catalog", "", grpc_go_server_error, _CATALOG),
            _catalog_client,
            _CATALOG,
        ),
        "cart": _service("cart", _cart_server, _cart_client, _CART),
        "currency": _service("currency", _currency_server, _none, _CURRENCY),
        "payment": _service("payment", _payment_server, _none, _PAYMENT),
        "shipping": _service("shipping", _http_server(_SHIPPING), _shipping_client, _SHIPPING),
        "email": _service("email", _email_server, _none, _EMAIL),
        "quote": _service("quote", _quote_server, _none, _QUOTE),
        "recommendation": _service(
            "recommendation",
            _recommendation_server,
            _grpc_client("/", _RECOMMENDATION),
            _RECOMMENDATION,
        ),
        "ad": _service("ad", _grpc_server("ad", "", grpc_go_server_error, _AD), _none, _AD),
        "product-reviews": _service("product-reviews", _reviews_server, _reviews_client, _REVIEWS),
        "load-generator": _service("load-generator", _no_server, _loadgen_client, _LOADGEN),
        "accounting": _service("accounting", _accounting_server, _accounting_client, _ACCOUNTING),
        "fraud-detection": _service("fraud-detection", _fraud_server, _none, _FRAUD),
        "image-provider": _service("image-provider", _images_server, _none, _IMAGES),
        FLAG_SERVICE: _service(FLAG_SERVICE, _flagd_server, _none, _FLAGD),
    },
    not_instrumented={
        "postgresql": (
            "the postgres:17 image; seen only as its clients' spans (product-catalog's "
            "otelsql, product-reviews' psycopg2, accounting's Npgsql)"
        ),
        "valkey-cart": "the valkey image; seen only as cart's Redis client spans",
        "kafka": "the apache/kafka image; seen only as checkout's producer span",
        "otel-collector-agent": "the collector itself (its own telemetry is not traced)",
        "llm": (
            "llm/Dockerfile L26 runs plain python app.py and llm/requirements.txt L1-L4 pins no "
            "OpenTelemetry package: seen only as product-reviews' chat client spans"
        ),
    },
    origin=Origin("load-generator", _load_tasks),
    consumers={"kafka": ("accounting", "fraud-detection")},
    path_attribute="http.url",
    path_prefix="http://frontend-proxy:8080",
    flag_service=FLAG_SERVICE,
    evaluations=EVALUATIONS,
    side_traces=SIDE_TRACES,
    handler_calls={
        ("accounting", "Produce"): (
            HandlerCall("postgresql", ACCOUNTING_WRITE, "accounting/Consumer.cs L132"),
        ),
    },
)
"""The Astronomy Shop's traces."""
