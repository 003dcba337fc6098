"""Online Boutique v0.10.6's own texts: every log line, error wrap and banner its services
print, each with the upstream line it reproduces (``online-boutique/src-v0.10.6/``).

Its renderers (``render_*.py``, ``errors.py``) print these by key through ``T``, which
also holds the runtimes' texts they compose (grpc-go, Go's net: ``systems/runtime_texts``);
the keys start with the service's short name (``fe.``, ``co.``, ``ca.`` ...). Redis',
Locust's, the kubelet's and Chaos Mesh's texts are the engine's (``cluster/sim/texts.py``).
"""

from __future__ import annotations

from r2act.systems.runtime_texts import RUNTIME_TEXTS
from r2act.systems.texts import EXT, Text
from r2act.systems.texts import text as _t
from r2act.systems.texts import wrap as _w

OB = "online-boutique/src-v0.10.6/"
"""Where Online Boutique's sources are, under ``shared/reference``."""

_LIFETIME = EXT + "dotnet/runtime:src/libraries/Microsoft.Extensions.Hosting/src/Internal/"
_LIFETIME += "ConsoleLifetime.cs"

TEXTS: tuple[Text, ...] = (
    # --- frontend (Go, logrus) --------------------------------------------------------
    _t("fe.request_started", "request started", OB + "frontend/middleware.go", 71),
    _t("fe.request_complete", "request complete", OB + "frontend/middleware.go", 76),
    _t("fe.home", "home", OB + "frontend/handlers.go", 61),
    _t("fe.product", "serving product page", OB + "frontend/handlers.go", 152),
    _t("fe.add_to_cart", "adding to cart", OB + "frontend/handlers.go", 223),
    _t("fe.empty_cart", "emptying cart", OB + "frontend/handlers.go", 241),
    _t("fe.view_cart", "view user cart", OB + "frontend/handlers.go", 253),
    _t("fe.placing_order", "placing order", OB + "frontend/handlers.go", 322),
    _t("fe.order_placed", "order placed", OB + "frontend/handlers.go", 375),
    _t("fe.logout", "logging out", OB + "frontend/handlers.go", 420),
    _t("fe.set_currency", "setting currency", OB + "frontend/handlers.go", 508),
    _t("fe.request_error", "request error", OB + "frontend/handlers.go", 537),
    _t(
        "fe.env_invalid", "env platform is either empty or invalid", OB + "frontend/handlers.go", 96
    ),
    _t("fe.env_platform", "ENV_PLATFORM is: {}", OB + "frontend/handlers.go", 106),
    _t("fe.ads_failed", "failed to retrieve ads", OB + "frontend/handlers.go", 530),
    _t("fe.recs_failed", "failed to get product recommendations", OB + "frontend/handlers.go", 180),
    _t("fe.tracing_disabled", "Tracing disabled.", OB + "frontend/main.go", 117),
    _t("fe.profiling_disabled", "Profiling disabled.", OB + "frontend/main.go", 124),
    _t("fe.starting", "starting server on {}:{}", OB + "frontend/main.go", 170),
    # the frontend's wraps (errors.Wrap prints "<msg>: <err>")
    _w("fe.w.currencies", "could not retrieve currencies", OB + "frontend/handlers.go", 64),
    _w("fe.w.products", "could not retrieve products", OB + "frontend/handlers.go", 69),
    _w("fe.w.cart", "could not retrieve cart", OB + "frontend/handlers.go", 74),
    _w(
        "fe.w.convert_home",
        "failed to do currency conversion for product {}",
        OB + "frontend/handlers.go",
        86,
    ),
    _w("fe.w.product", "could not retrieve product", OB + "frontend/handlers.go", 156),
    _w("fe.w.convert", "failed to convert currency", OB + "frontend/handlers.go", 173),
    _w("fe.w.add", "failed to add to cart", OB + "frontend/handlers.go", 232),
    _w("fe.w.empty", "failed to empty cart", OB + "frontend/handlers.go", 244),
    _w("fe.w.quote", "failed to get shipping quote", OB + "frontend/handlers.go", 273),
    _w(
        "fe.w.cart_product",
        "could not retrieve product #{}",
        OB + "frontend/handlers.go",
        287,
    ),
    _w(
        "fe.w.cart_convert",
        "could not convert currency for product #{}",
        OB + "frontend/handlers.go",
        292,
    ),
    _w("fe.w.order", "failed to complete the order", OB + "frontend/handlers.go", 372),
    _w(
        "fe.w.shipping_convert",
        "failed to convert currency for shipping cost",
        OB + "frontend/rpc.go",
        96,
    ),
    _w(
        "fe.w.recommended_product",
        "failed to get recommended product info (#{})",
        OB + "frontend/rpc.go",
        109,
    ),
    _w("fe.w.ads", "failed to get ads", OB + "frontend/rpc.go", 126),
    # --- checkoutservice (Go, logrus) -------------------------------------------------
    _t("co.tracing_disabled", "Tracing disabled.", OB + "checkoutservice/main.go", 95),
    _t("co.profiling_disabled", "Profiling disabled.", OB + "checkoutservice/main.go", 102),
    _t("co.service_config", "service config: {}", OB + "checkoutservice/main.go", 125),
    _t("co.listening", "starting to listen on tcp: {}", OB + "checkoutservice/main.go", 145),
    _t(
        "co.place_order",
        "[PlaceOrder] user_id={} user_currency={}",
        OB + "checkoutservice/main.go",
        231,
    ),
    _t(
        "co.payment_ok",
        "payment went through (transaction_id: {})",
        OB + "checkoutservice/main.go",
        256,
    ),
    _t(
        "co.email_failed",
        "failed to send order confirmation to {}: {err}",
        OB + "checkoutservice/main.go",
        274,
    ),
    _t(
        "co.email_sent",
        "order confirmation email sent to {}",
        OB + "checkoutservice/main.go",
        276,
    ),
    _t("co.e.charge", "failed to charge card: {err}", OB + "checkoutservice/main.go", 254),
    _t("co.e.shipping", "shipping error: {err}", OB + "checkoutservice/main.go", 260),
    _t("co.e.cart", "cart failure: {err}", OB + "checkoutservice/main.go", 292),
    _t("co.e.prepare", "failed to prepare order: {err}", OB + "checkoutservice/main.go", 296),
    _t("co.e.quote", "shipping quote failure: {err}", OB + "checkoutservice/main.go", 300),
    _t(
        "co.e.get_quote",
        "failed to get shipping quote: {err}",
        OB + "checkoutservice/main.go",
        319,
    ),
    _t(
        "co.e.get_cart",
        "failed to get user cart during checkout: {err}",
        OB + "checkoutservice/main.go",
        327,
    ),
    _t("co.e.product", "failed to get product #{}", OB + "checkoutservice/main.go", 346),
    _t(
        "co.e.price",
        "failed to convert price of {} to {}",
        OB + "checkoutservice/main.go",
        350,
    ),
    _t("co.e.card", "could not charge the card: {err}", OB + "checkoutservice/main.go", 374),
    # --- shippingservice (Go, logrus) -------------------------------------------------
    _t(
        "sh.tracing",
        "Tracing enabled, but temporarily unavailable",
        OB + "shippingservice/main.go",
        58,
    ),
    _t(
        "sh.tracing_see",
        "See https://github.com/GoogleCloudPlatform/microservices-demo/issues/422 for more info.",
        OB + "shippingservice/main.go",
        59,
    ),
    _t("sh.profiling_disabled", "Profiling disabled.", OB + "shippingservice/main.go", 69),
    _t(
        "sh.stats", "Stats enabled, but temporarily unavailable", OB + "shippingservice/main.go", 85
    ),
    _t("sh.listening", "Shipping Service listening on port {}", OB + "shippingservice/main.go", 95),
    _t("sh.quote_in", "[GetQuote] received request", OB + "shippingservice/main.go", 120),
    _t("sh.quote_out", "[GetQuote] completed request", OB + "shippingservice/main.go", 121),
    _t("sh.ship_in", "[ShipOrder] received request", OB + "shippingservice/main.go", 143),
    _t("sh.ship_out", "[ShipOrder] completed request", OB + "shippingservice/main.go", 144),
    # --- productcatalogservice (Go, logrus) -------------------------------------------
    _t("pc.tracing_disabled", "Tracing disabled.", OB + "productcatalogservice/server.go", 75),
    _t(
        "pc.profiling_disabled",
        "Profiling disabled.",
        OB + "productcatalogservice/server.go",
        82,
    ),
    _t(
        "pc.starting",
        "starting grpc server at :{}",
        OB + "productcatalogservice/server.go",
        118,
    ),
    _t(
        "pc.loading",
        "loading catalog from local products.json file...",
        OB + "productcatalogservice/catalog_loader.go",
        45,
    ),
    _t(
        "pc.parsed",
        "successfully parsed product catalog json",
        OB + "productcatalogservice/catalog_loader.go",
        58,
    ),
    # --- currencyservice (Node, pino) -------------------------------------------------
    _t("cu.profiler_disabled", "Profiler disabled.", OB + "currencyservice/server.js", 29),
    _t("cu.tracing_disabled", "Tracing disabled.", OB + "currencyservice/server.js", 73),
    _t("cu.supported", "Getting supported currencies...", OB + "currencyservice/server.js", 129),
    _t("cu.converted", "conversion request successful", OB + "currencyservice/server.js", 162),
    _t("cu.starting", "Starting gRPC server on port {}...", OB + "currencyservice/server.js", 183),
    _t(
        "cu.started",
        "CurrencyService gRPC server started on port {}",
        OB + "currencyservice/server.js",
        192,
    ),
    # --- paymentservice (Node, pino) --------------------------------------------------
    _t("pa.profiler_disabled", "Profiler disabled.", OB + "paymentservice/index.js", 22),
    _t("pa.tracing_disabled", "Tracing disabled.", OB + "paymentservice/index.js", 63),
    _t(
        "pa.invoked",
        "PaymentService#Charge invoked with request {}",
        OB + "paymentservice/server.js",
        43,
    ),
    _t(
        "pa.processed",
        "Transaction processed: {} ending {}     Amount: {}{}.{}",
        OB + "paymentservice/charge.js",
        82,
    ),
    _t(
        "pa.started",
        "PaymentService gRPC server started on port {}",
        OB + "paymentservice/server.js",
        64,
    ),
    # --- emailservice (Python, python-json-logger) ------------------------------------
    _t(
        "em.dummy",
        "starting the email service in dummy mode.",
        OB + "emailservice/email_server.py",
        167,
    ),
    _t("em.profiler_disabled", "Profiler disabled.", OB + "emailservice/email_server.py", 177),
    _t("em.tracing_disabled", "Tracing disabled.", OB + "emailservice/email_server.py", 196),
    _t("em.listening", "listening on port: {}", OB + "emailservice/email_server.py", 130),
    _t(
        "em.received",
        "A request to send order confirmation email to {} has been received.",
        OB + "emailservice/email_server.py",
        110,
    ),
    # --- recommendationservice (Python, python-json-logger; grpcio) -------------------
    _t(
        "re.init",
        "initializing recommendationservice",
        OB + "recommendationservice/recommendation_server.py",
        98,
    ),
    _t(
        "re.profiler_disabled",
        "Profiler disabled.",
        OB + "recommendationservice/recommendation_server.py",
        107,
    ),
    _t(
        "re.tracing_disabled",
        "Tracing disabled.",
        OB + "recommendationservice/recommendation_server.py",
        126,
    ),
    _t(
        "re.catalog_addr",
        "product catalog address: {}",
        OB + "recommendationservice/recommendation_server.py",
        134,
    ),
    _t(
        "re.listening",
        "listening on port: {}",
        OB + "recommendationservice/recommendation_server.py",
        147,
    ),
    _t(
        "re.list",
        "[Recv ListRecommendations] product_ids={}",
        OB + "recommendationservice/recommendation_server.py",
        82,
    ),
    _t(
        "re.frame_call",
        "    cat_response = product_catalog_stub.ListProducts(demo_pb2.Empty())",
        OB + "recommendationservice/recommendation_server.py",
        73,
    ),
    _t(
        "grpcio.exception",
        "Exception calling application: {err}",
        EXT + "grpc/grpc:src/python/grpcio/grpc/_server.py",
    ),
    _t(
        "py.traceback",
        "Traceback (most recent call last):",
        EXT + "python/cpython:Lib/traceback.py",
    ),
    _t(
        "py.frame",
        '  File "{}", line {}, in {}',
        EXT + "python/cpython:Lib/traceback.py",
    ),
    _t(
        "grpcio.frame_behavior",
        "    response_or_iterator = behavior(argument, context)",
        EXT + "grpc/grpc:src/python/grpcio/grpc/_server.py",
    ),
    _t(
        "grpcio.frame_call",
        "    return _end_unary_response_blocking(state, call, False, None)",
        EXT + "grpc/grpc:src/python/grpcio/grpc/_channel.py",
    ),
    _t(
        "grpcio.frame_raise",
        "    raise _InactiveRpcError(state)  # pytype: disable=not-instantiable",
        EXT + "grpc/grpc:src/python/grpcio/grpc/_channel.py",
    ),
    _t(
        "grpcio.frame_interceptor",
        "    return continuation(client_call_details, request)",
        EXT + "grpc/grpc:src/python/grpcio/grpc/_interceptor.py",
    ),
    _t(
        "grpcio.raised",
        "grpc._channel._InactiveRpcError: {err}",
        EXT + "python/cpython:Lib/traceback.py",
    ),
    _t(
        "grpcio.inactive",
        "<_InactiveRpcError of RPC that terminated with:\n\tstatus = StatusCode.{}"
        '\n\tdetails = "{}"\n\tdebug_error_string = "{}"\n>',
        EXT + "grpc/grpc:src/python/grpcio/grpc/_channel.py",
    ),
    _t(
        "grpcio.refused",
        "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:{}: "
        "Failed to connect to remote host: connect: Connection refused (111)",
        EXT + "grpc/grpc:src/core/lib/iomgr/tcp_client_posix.cc",
    ),
    _t(
        "grpcio.timeout",
        "failed to connect to all addresses; last error: UNAVAILABLE: ipv4:{}: "
        "Failed to connect to remote host: Timeout occurred: FD Shutdown",
        EXT + "grpc/grpc:src/core/lib/iomgr/tcp_client_posix.cc",
    ),
    _t(
        "grpcio.dns",
        "DNS resolution failed for {}: C-ares status is not ARES_SUCCESS qtype=A name={} "
        "is_balancer=0: Domain name not found",
        EXT + "grpc/grpc:src/core/resolver/dns/c_ares/grpc_ares_wrapper.cc",
    ),
    # --- adservice (Java, log4j2) -----------------------------------------------------
    _t(
        "ad.starting",
        "AdService starting.",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        233,
    ),
    _t(
        "ad.started",
        "Ad Service started, listening on {}",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        63,
    ),
    _t(
        "ad.stats",
        "Stats enabled, but temporarily unavailable",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        200,
    ),
    _t(
        "ad.tracing",
        "Tracing enabled but temporarily unavailable",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        214,
    ),
    _t(
        "ad.tracing_see",
        "See https://github.com/GoogleCloudPlatform/microservices-demo/issues/422 for more info.",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        215,
    ),
    _t(
        "ad.tracing_init",
        "Tracing enabled - Stackdriver exporter initialized.",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        219,
    ),
    _t(
        "ad.request",
        "received ad request (context_words={})",
        OB + "adservice/src/main/java/hipstershop/AdService.java",
        98,
    ),
    _t("ad.ctx_trace", "${ctx:traceId}", OB + "adservice/src/main/resources/log4j2.xml", 28),
    # --- cartservice (C#, Console + ASP.NET console logger; grpc-dotnet) ---------------
    _t(
        "ca.add",
        "AddItemAsync called with userId={}, productId={}, quantity={}",
        OB + "cartservice/src/cartstore/RedisCartStore.cs",
        35,
    ),
    _t(
        "ca.empty",
        "EmptyCartAsync called with userId={}",
        OB + "cartservice/src/cartstore/RedisCartStore.cs",
        70,
    ),
    _t(
        "ca.get",
        "GetCartAsync called with userId={}",
        OB + "cartservice/src/cartstore/RedisCartStore.cs",
        85,
    ),
    _t(
        "ca.health",
        "Checking CartService Health",
        OB + "cartservice/src/services/HealthCheckService.cs",
        35,
    ),
    _t(
        "ca.storage",
        "Can't access cart storage. {err}",
        OB + "cartservice/src/cartstore/RedisCartStore.cs",
        102,
    ),
    _t(
        "dotnet.rpc_error",
        "Error status code '{}' with detail '{err}' raised.",
        EXT + "grpc/grpc-dotnet:src/Grpc.AspNetCore.Server/Internal/ServerCallHandlerLog.cs",
    ),
    _t(
        "dotnet.category",
        "info: Grpc.AspNetCore.Server.ServerCallHandler[7]",
        EXT + "grpc/grpc-dotnet:src/Grpc.AspNetCore.Server/Internal/ServerCallHandlerLog.cs",
    ),
    _t(
        "redis.not_connected",
        "StackExchange.Redis.RedisConnectionException: It was not possible to connect to the "
        "redis server(s). {}",
        EXT + "StackExchange/StackExchange.Redis:src/StackExchange.Redis/ExceptionFactory.cs",
    ),
    _t(
        "redis.unable",
        "UnableToConnect on redis-cart:6379/Interactive",
        EXT + "StackExchange/StackExchange.Redis:src/StackExchange.Redis/ExceptionFactory.cs",
    ),
    _t(
        "aspnet.listening",
        "info: Microsoft.Hosting.Lifetime[14]\n      Now listening on: http://[::]:{}",
        EXT + "dotnet/aspnetcore:src/Hosting/Hosting/src/Internal/HostingLoggerExtensions.cs",
    ),
    _t(
        "aspnet.env",
        "info: Microsoft.Hosting.Lifetime[0]\n      Hosting environment: {}",
        _LIFETIME,
    ),
    _t(
        "aspnet.root",
        "info: Microsoft.Hosting.Lifetime[0]\n      Content root path: {}",
        _LIFETIME,
    ),
    _t(
        "aspnet.started",
        "info: Microsoft.Hosting.Lifetime[0]\n"
        "      Application started. Press Ctrl+C to shut down.",
        _LIFETIME,
    ),
)
"""Every Online Boutique text, by service."""


_BY_KEY: dict[str, Text] = {t.key: t for t in (*TEXTS, *RUNTIME_TEXTS)}


def T(key: str) -> Text:  # noqa: N802 - reads as a constant lookup at call sites
    """The template ``key``: Online Boutique's own, or a runtime's its renderers compose."""
    return _BY_KEY[key]
