"""The Astronomy Shop 2.2.0's own texts: every line its services print on the load's paths,
each with the upstream line it reproduces (``opentelemetry-demo-2.2.0/src/``).

A text is the message a service's code writes; where it lands (the pod's stdout, the
collector's debug exporter, or both) is ``logsinks``; how it is framed there (slog
record, .NET console entry, log4j pattern, Python logging, the debug exporter's
``LogRecord`` block) is ``render_formats`` and ``render_collector``. Keys start with
``as.`` and the service's short name (``as.co.`` checkout, ``as.pc.`` product-catalog ...)
so the engine's joined table keeps them apart from Online Boutique's. Texts of software
outside the reference folder (grpc-go, grpc-js, Go's ``net/http``, Node's ``net``,
Next.js, the collector's debug exporter) carry an ``ext:`` source and are listed in
``docs/systems.md`` ("Astronomy Shop texts outside the reference").
"""

from __future__ import annotations

from r2act.systems.runtime_texts import RUNTIME_TEXTS
from r2act.systems.texts import EXT, Text
from r2act.systems.texts import text as _t

D = "opentelemetry-demo-2.2.0/src/"
"""Where the Astronomy Shop's sources are, under ``shared/reference``."""
CHART = "opentelemetry-demo-chart-0.40.10/"

_CO = D + "checkout/main.go"
_PC = D + "product-catalog/main.go"
_CART = D + "cart/src/cartstore/ValkeyCartStore.cs"
_CUR = D + "currency/src/server.cpp"
_SHIP = D + "shipping/src/shipping_service.rs"
_REC = D + "recommendation/recommendation_server.py"
_LG = D + "load-generator/locustfile.py"
_LOCUST = "locust-2.43.0/locust/main.py"
_AD = D + "ad/src/main/java/oteldemo/AdService.java"
_DEBUG = EXT + "open-telemetry/opentelemetry-collector:exporter/debugexporter/internal/otlptext/"
_GRPCIO = EXT + "grpc/grpc:src/python/grpcio/grpc/"
_CPYTHON = EXT + "python/cpython:Lib/traceback.py"
_GRPC_JS = EXT + "grpc/grpc-js:packages/grpc-js/src/"
_LIFETIME = EXT + "dotnet/runtime:src/libraries/Microsoft.Extensions.Hosting/src/Internal/"
_LIFETIME += "ConsoleLifetime.cs"

TEXTS: tuple[Text, ...] = (
    # --- checkout (Go, slog through the otelslog bridge: OTLP only) -------------------
    _t("as.co.service_config", "service config: {}", _CO, 240),
    _t("as.co.listening", "starting to listen on tcp: {}", _CO, 254),
    _t("as.co.place_order", "[PlaceOrder]", _CO, 297),
    _t("as.co.payment_ok", "payment went through", _CO, 338),
    _t("as.co.order_placed", "order placed", _CO, 371),
    _t("as.co.email_failed", "failed to send order confirmation to {}: {err}", _CO, 380),
    _t("as.co.email_sent", "order confirmation email sent to {}", _CO, 382),
    _t("as.co.post_processor", "sending to postProcessor", _CO, 387),
    _t(
        "as.co.kafka_written",
        "Successful to write message. offset: {}, duration: {}",
        _CO,
        638,
    ),
    # checkout's error chain (status.Errorf / fmt.Errorf with %+v)
    _t("as.co.e.charge", "failed to charge card: {err}", _CO, 331),
    _t("as.co.e.shipping", "shipping error: {err}", _CO, 344),
    _t("as.co.e.cart", "cart failure: {err}", _CO, 409),
    _t("as.co.e.prepare", "failed to prepare order: {err}", _CO, 413),
    _t("as.co.e.quote", "shipping quote failure: {err}", _CO, 417),
    _t(
        "as.co.e.convert_shipping",
        "failed to convert shipping cost to currency: {err}",
        _CO,
        421,
    ),
    _t("as.co.e.post_shipping", "failed POST to shipping service: {err}", _CO, 465),
    _t("as.co.e.get_cart", "failed to get user cart during checkout: {err}", _CO, 494),
    _t("as.co.e.product", "failed to get product #{}", _CO, 512),
    _t("as.co.e.price", "failed to convert price of {} to {}", _CO, 516),
    _t("as.co.e.card", "could not charge the card: {err}", _CO, 547),
    _t("as.co.e.post_email", "failed POST to email service: {err}", _CO, 563),
    _t(
        "as.co.e.status_email",
        "failed POST to email service: expected 200, got {}",
        _CO,
        568,
    ),
    # --- product-catalog (Go, slog through otelslog: OTLP only) -----------------------
    _t("as.pc.db_ready", "Database connection established", _PC, 165),
    _t("as.pc.started", "Product Catalog gRPC server started on port: {}", _PC, 235),
    _t("as.pc.loaded", "Found {} products from database", _PC, 369),
    _t("as.pc.found", "Product Found", _PC, 462),
    _t("as.pc.e.load", "failed to load products: {err}", _PC, 423),
    _t("as.pc.e.not_found", "Product Not Found: {}", _PC, 448),
    _t("as.pc.e.flag", "Error: Product Catalog Fail Feature Flag Enabled", _PC, 440),
    # --- cart (.NET ILogger: console and OTLP; grpc-dotnet) ---------------------------
    _t("as.ca.redis_ok", "Successfully connected to Redis", _CART, 104),
    _t(
        "as.ca.add",
        "AddItemAsync called with userId={}, productId={}, quantity={}",
        _CART,
        138,
    ),
    _t("as.ca.empty", "EmptyCartAsync called with userId={}", _CART, 190),
    _t("as.ca.get", "GetCartAsync called with userId={}", _CART, 213),
    _t(
        "as.ca.add_format",
        "AddItemAsync called with userId={userId}, productId={productId}, quantity={quantity}",
        _CART,
        138,
    ),
    _t("as.ca.empty_format", "EmptyCartAsync called with userId={userId}", _CART, 190),
    _t("as.ca.get_format", "GetCartAsync called with userId={userId}", _CART, 213),
    _t("as.ca.storage", "Can't access cart storage. {err}", _CART, 235),
    _t("as.ca.e.not_connected", "Wasn't able to connect to redis", _CART, 98),
    _t(
        "as.dotnet.app_exception",
        "System.ApplicationException: {}",
        EXT + "dotnet/runtime:src/libraries/System.Private.CoreLib/src/System/Exception.cs",
    ),
    _t(
        "as.dotnet.rpc_error",
        "Error status code '{}' with detail '{err}' raised.",
        EXT + "grpc/grpc-dotnet:src/Grpc.AspNetCore.Server/Internal/ServerCallHandlerLog.cs",
    ),
    _t(
        "as.dotnet.rpc_error_format",
        "Error status code '{StatusCode}' with detail '{Detail}' raised.",
        EXT + "grpc/grpc-dotnet:src/Grpc.AspNetCore.Server/Internal/ServerCallHandlerLog.cs",
    ),
    _t(
        "as.redis.not_connected",
        "StackExchange.Redis.RedisConnectionException: It was not possible to connect to the "
        "redis server(s). {}",
        EXT + "StackExchange/StackExchange.Redis:src/StackExchange.Redis/ExceptionFactory.cs",
    ),
    _t(
        "as.redis.unable",
        "UnableToConnect on valkey-cart:6379/Interactive",
        EXT + "StackExchange/StackExchange.Redis:src/StackExchange.Redis/ExceptionFactory.cs",
    ),
    _t(
        "as.aspnet.listening",
        "Now listening on: {}",
        EXT + "dotnet/aspnetcore:src/Hosting/Hosting/src/Internal/HostingLoggerExtensions.cs",
    ),
    _t("as.aspnet.started", "Application started. Press Ctrl+C to shut down.", _LIFETIME),
    _t("as.aspnet.env", "Hosting environment: {}", _LIFETIME),
    _t("as.aspnet.root", "Content root path: {}", _LIFETIME),
    # --- currency (C++, OpenTelemetry C++ logs SDK: OTLP only) ------------------------
    _t("as.cu.supported", "{} successful", _CUR, 137),
    _t("as.cu.converted", "{} conversion successful", _CUR, 213),
    _t("as.cu.listening", "Currency Server listening on port: {}", _CUR, 261),
    # --- payment (Node, pino through pino-opentelemetry-transport) --------------------
    _t("as.pa.received", "Charge request received.", D + "payment/index.js", 19),
    _t("as.pa.complete", "Transaction complete.", D + "payment/charge.js", 83),
    _t("as.pa.started", "payment gRPC server started on {}", D + "payment/index.js", 64),
    _t(
        "as.pa.e.invalid_token",
        "Payment request failed. Invalid token. app.loyalty.level=gold",
        D + "payment/charge.js",
        37,
    ),
    # --- email (Ruby: an OTLP record and a puts) ---------------------------------------
    _t("as.em.sent", "Order confirmation email sent", D + "email/email_server.rb", 91),
    _t("as.em.sent_to", "Order confirmation email sent to: {}", D + "email/email_server.rb", 95),
    _t(
        "as.rack.access",
        '{} - {} [{}] "{} {}{}{} {}" {} {} {} ',
        EXT + "rack/rack:lib/rack/common_logger.rb",
        pattern=r'[\d.]+ - - \[\d\d/\w{3}/\d{4}:[\d:]{8} \+0000\] "POST /send_order_confirmation '
        r'HTTP/1\.1" \d{3} - \d+\.\d{4} ',
    ),
    # --- shipping (Rust, tracing through opentelemetry-appender-tracing: OTLP only) ---
    _t("as.sh.quote", "Sending Quote", _SHIP, 41),
    _t("as.sh.tracking", "Tracking ID Created", _SHIP, 53),
    _t("as.sh.requesting", "Requesting quote", D + "shipping/src/shipping_service/quote.rs", 53),
    _t("as.sh.otel", "Successfully configured OTel", D + "shipping/src/main.rs", 18),
    _t("as.sh.running", "Shipping service is running", D + "shipping/src/main.rs", 43),
    # --- quote (PHP, Monolog with the OpenTelemetry handler: OTLP only) ----------------
    _t("as.qu.calculated", "Calculated quote", D + "quote/app/routes.php", 67),
    # --- load-generator (Locust with the locustfile's root OTLP handler: OTLP only) ----
    _t(
        "as.lg.instrumented",
        "Instrumentation complete - logs will now include trace context",
        _LG,
        75,
    ),
    _t("as.lg.session", "Starting user session: {}", _LG, 230),
    _t("as.lg.index", "User accessing index page", _LG, 123),
    _t("as.lg.browse", "User browsing product: {}", _LG, 130),
    _t("as.lg.recommendations", "User getting recommendations for product: {}", _LG, 137),
    _t("as.lg.reviews", "User getting product reviews for product: {}", _LG, 147),
    _t("as.lg.ask", "Asking the AI Assistant a question for: {} {}", _LG, 155),
    _t("as.lg.ads", "User getting ads for category: {}", _LG, 165),
    _t("as.lg.cart", "User viewing cart", _LG, 174),
    _t("as.lg.add", "User {} adding {} of product {} to cart", _LG, 184),
    _t("as.lg.checkout", "Checkout completed for user {}", _LG, 203),
    _t("as.lg.checkout_multi", "Multi-item checkout completed for user {}", _LG, 216),
    _t("as.lg.starting", "Starting Locust {}", _LOCUST, 180),
    _t(
        "as.lg.web",
        "Starting web interface at {}, press enter to open your default browser.",
        _LOCUST,
        455,
    ),
    _t("as.lg.no_limit", "No run time limit set, use CTRL+C to interrupt", _LOCUST, 573),
    # --- recommendation (Python logging: OTLP handler, and the root handler) ----------
    _t("as.re.list", "Receive ListRecommendations for product ids:{}", _REC, 47),
    _t("as.re.started", "Recommendation service started, listening on port {}", _REC, 172),
    _t(
        "as.py.log_correlation",
        "%(asctime)s %(levelname)s [%(name)s] [%(filename)s:%(lineno)d] [trace_id=%(otelTraceID)s "
        "span_id=%(otelSpanID)s resource.service.name=%(otelServiceName)s "
        "trace_sampled=%(otelTraceSampled)s] - %(message)s",
        EXT
        + "open-telemetry/opentelemetry-python-contrib:instrumentation/"
        + "opentelemetry-instrumentation-logging/src/opentelemetry/instrumentation/logging/"
        + "constants.py",
    ),
    _t(
        "as.re.frame_list",
        "    prod_list = get_product_list(request.product_ids)",
        _REC,
        44,
    ),
    _t(
        "as.re.frame_products",
        "    cat_response = product_catalog_stub.ListProducts(demo_pb2.Empty())",
        _REC,
        95,
    ),
    _t("as.re.cache_miss", "get_product_list: cache miss", _REC, 83),
    _t(
        "as.re.frame_get_product",
        "    cat_response = product_catalog_stub.GetProduct(demo_pb2.Empty())",
        _REC,
        84,
    ),
    # --- product-reviews (Python logging: the same two handlers as recommendation) -----
    _t(
        "as.pr.reviews",
        "Receive GetProductReviews for product id:{}",
        D + "product-reviews/product_reviews_server.py",
        92,
    ),
    _t(
        "as.pr.ask",
        "Receive AskProductAIAssistant for product id:{}, question: {}",
        D + "product-reviews/product_reviews_server.py",
        104,
    ),
    _t(
        "as.pr.e.caught",
        "Caught Exception: {err}",
        D + "product-reviews/product_reviews_server.py",
        195,
    ),
    _t(
        "as.openai.status_error",
        "Error code: {} - {}",
        EXT + "openai/openai-python:src/openai/_client.py",
    ),
    _t("as.llm.rate_limit", "Rate limit reached. Please try again later.", D + "llm/app.py", 124),
    _t("as.llm.rate_limit_type", "rate_limit_exceeded", D + "llm/app.py", 125),
    # grpcio's server: a handler's exception, logged on grpc._server (the root handler)
    _t("as.grpcio.exception", "Exception calling application: {err}", _GRPCIO + "_server.py"),
    _t("as.py.traceback", "Traceback (most recent call last):", _CPYTHON),
    _t("as.py.frame", '  File "{}", line {}, in {}', _CPYTHON),
    _t(
        "as.grpcio.frame_behavior",
        "    response_or_iterator = behavior(argument, context)",
        _GRPCIO + "_server.py",
    ),
    _t(
        "as.grpcio.frame_interceptor",
        "    return continuation(client_call_details, request)",
        _GRPCIO + "_interceptor.py",
    ),
    _t(
        "as.grpcio.frame_call",
        "    return _end_unary_response_blocking(state, call, False, None)",
        _GRPCIO + "_channel.py",
    ),
    _t(
        "as.grpcio.frame_raise",
        "    raise _InactiveRpcError(state)  # pytype: disable=not-instantiable",
        _GRPCIO + "_channel.py",
    ),
    _t("as.grpcio.raised", "grpc._channel._InactiveRpcError: {err}", _CPYTHON),
    _t(
        "as.grpcio.inactive",
        "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.{}"
        '\n\tdetails = "{}"\n\tdebug_error_string = "{}"\n>',
        _GRPCIO + "_channel.py",
    ),
    _t(
        "as.grpcio.refused",
        "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:{}: "
        "Failed to connect to remote host: connect: Connection refused (111)",
        EXT + "grpc/grpc:src/core/lib/iomgr/tcp_client_posix.cc",
    ),
    _t(
        "as.grpcio.timeout",
        "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:{}: "
        "Failed to connect to remote host: Timeout occurred: FD Shutdown",
        EXT + "grpc/grpc:src/core/lib/iomgr/tcp_client_posix.cc",
    ),
    _t(
        "as.grpcio.dns",
        "DNS resolution failed for {}: C-ares status is not ARES_SUCCESS qtype=A name={} "
        "is_balancer=0: Domain name not found",
        EXT + "grpc/grpc:src/core/resolver/dns/c_ares/grpc_ares_wrapper.cc",
    ),
    _t(
        "as.grpcio.peer",
        "Error received from peer ipv4:{}",
        EXT + "grpc/grpc:src/core/lib/surface/call.cc",
    ),
    # --- ad (Java, log4j2 PatternLayout on stdout; the Java agent's OTLP copy) --------
    _t("as.ad.started", "Ad service started, listening on {}", _AD, 102),
    _t("as.ad.targeted", "Targeted ad request received for {}", _AD, 177),
    _t("as.ad.random", "Non-targeted ad request received, preparing random response.", _AD, 185),
    _t("as.ad.e.failed", "GetAds Failed with status {}", _AD, 222),
    _t(
        "as.grpcjava.status",
        "Status{code={}, description={}, cause={}}",
        EXT + "grpc/grpc-java:api/src/main/java/io/grpc/Status.java",
    ),
    _t("as.ad.starting", "Ad service starting.", _AD, 323),
    _t(
        "as.log4j.pattern",
        "{} - {} - {} trace_id={} span_id={} trace_flags={} ",
        D + "ad/src/main/resources/log4j2.xml",
        10,
    ),
    # --- accounting and fraud-detection (Kafka consumers) -----------------------------
    _t("as.ac.started", "Accounting service started", D + "accounting/Program.cs", 8),
    _t("as.ac.connecting", "Connecting to Kafka: {}", D + "accounting/Consumer.cs", 49),
    _t("as.ac.order", "Order details: {}.", D + "accounting/Log.cs", 13),
    _t("as.ac.order_format", "Order details: {@OrderResult}.", D + "accounting/Log.cs", 13),
    _t(
        "as.fd.consumed",
        "Consumed record with orderId: {}, and updated total count to: {}",
        D + "fraud-detection/src/main/kotlin/frauddetection/main.kt",
        65,
    ),
    # --- frontend-proxy (Envoy's OpenTelemetry access log, its body format) -----------
    # the body's fields after the start time are quoted in the YAML (\"): the pattern
    # holds the whole line, the fixed text the part the file holds verbatim
    _t(
        "as.fp.access",
        "[{}] {}",
        D + "frontend-proxy/envoy.tmpl.yaml",
        90,
        pattern=r'\[[\dTZ:.-]+\] "[A-Z]+ \S+ HTTP/1\.1" \d{3} \S+ \S+ \S+ "\S+" \d+ \d+ \d+ '
        r'\S+ "[^"]*" "[^"]*" "[^"]*" "[^"]*" "[^"]*" \S+ \S+ \S+ \S+ \S+ \S+',
    ),
    # --- frontend (Next.js: a failed API handler's error, printed by console.error) ---
    _t(
        "as.fe.grpc_error",
        "Error: {} {}: {err}",
        _GRPC_JS + "call.ts",
    ),
    _t("as.fe.frame", "    at {} ({})", EXT + "nodejs/node:lib/internal/errors.js"),
    _t("as.fe.for_call", "for call at", _GRPC_JS + "call.ts"),
    _t("as.fe.props_open", "{} {", EXT + "nodejs/node:lib/internal/util/inspect.js"),
    _t("as.fe.prop", "  {}: {},", EXT + "nodejs/node:lib/internal/util/inspect.js"),
    _t("as.fe.prop_last", "  {}: {}", EXT + "nodejs/node:lib/internal/util/inspect.js"),
    _t("as.fe.props_close", "}", EXT + "nodejs/node:lib/internal/util/inspect.js"),
    _t(
        "as.fe.metadata",
        "Metadata { internalRepr: Map(0) {}, options: {} }",
        _GRPC_JS + "metadata.ts",
    ),
    # --- grpc-js client errors (the frontend's gateways) ------------------------------
    _t(
        "as.grpcjs.no_connection",
        "No connection established. Last error: {err}",
        _GRPC_JS + "load-balancer-pick-first.ts",
    ),
    _t(
        "as.grpcjs.resolution",
        "Name resolution failed for target dns:{}",
        _GRPC_JS + "resolver-dns.ts",
    ),
    _t("as.grpcjs.deadline", "Deadline exceeded after {}s", _GRPC_JS + "deadline.ts"),
    _t("as.grpcjs.cancelled", "Cancelled on client", _GRPC_JS + "call-interface.ts"),
    _t("as.node.refused", "connect ECONNREFUSED {}", EXT + "nodejs/node:lib/internal/errors.js"),
    _t("as.node.timeout", "connect ETIMEDOUT {}", EXT + "nodejs/node:lib/internal/errors.js"),
    # --- Go's net/http client errors (checkout's HTTP calls to email and shipping) ----
    _t("as.go.url_error", '{} "{}": {err}', EXT + "golang/go:src/net/url/url.go"),
    _t("as.go.no_such_host", "dial tcp: lookup {}: no such host", EXT + "golang/go:src/net/net.go"),
    _t(
        "as.go.servfail",
        "dial tcp: lookup {} on {}: server misbehaving",
        EXT + "golang/go:src/net/dnsclient_unix.go",
    ),
    _t(
        "as.grpc.dns_lookup",
        "dns: A record lookup error: lookup {} on {}: server misbehaving",
        EXT + "grpc/grpc-go:internal/resolver/dns/dns_resolver.go",
    ),
    # --- the collector's debug exporter (verbosity: detailed) -------------------------
    _t(
        "as.otel.header",
        "Logs",
        EXT + "open-telemetry/opentelemetry-collector:exporter/debugexporter/exporter.go",
    ),
    _t("as.otel.resource_log", "ResourceLog #{}", _DEBUG + "logs.go"),
    _t("as.otel.resource_schema", "Resource SchemaURL: {}", _DEBUG + "logs.go"),
    _t("as.otel.resource_attrs", "Resource attributes:", _DEBUG + "databuffer.go"),
    _t("as.otel.attribute", "     -> {}: {}", _DEBUG + "databuffer.go"),
    _t("as.otel.scope_logs", "ScopeLogs #{}", _DEBUG + "logs.go"),
    _t("as.otel.scope_schema", "ScopeLogs SchemaURL: {}", _DEBUG + "logs.go"),
    _t("as.otel.scope", "InstrumentationScope {} {}", _DEBUG + "databuffer.go"),
    _t("as.otel.record", "LogRecord #{}", _DEBUG + "logs.go"),
    _t("as.otel.observed", "ObservedTimestamp: {}", _DEBUG + "logs.go"),
    _t("as.otel.timestamp", "Timestamp: {}", _DEBUG + "logs.go"),
    _t("as.otel.severity_text", "SeverityText: {}", _DEBUG + "logs.go"),
    _t("as.otel.severity_number", "SeverityNumber: {}({})", _DEBUG + "logs.go"),
    _t("as.otel.body", "Body: {}", _DEBUG + "logs.go"),
    _t("as.otel.attributes", "Attributes:", _DEBUG + "databuffer.go"),
    _t("as.otel.trace_id", "Trace ID: {}", _DEBUG + "logs.go"),
    _t("as.otel.span_id", "Span ID: {}", _DEBUG + "logs.go"),
    _t("as.otel.flags", "Flags: {}", _DEBUG + "logs.go"),
)
"""Every Astronomy Shop text, by service, then the runtimes' its renderers compose."""


_BY_KEY: dict[str, Text] = {t.key: t for t in (*TEXTS, *RUNTIME_TEXTS)}


def T(key: str) -> Text:  # noqa: N802 - reads as a constant lookup at call sites
    """The template ``key``: the Astronomy Shop's own, or a runtime's its renderers compose."""
    return _BY_KEY[key]
