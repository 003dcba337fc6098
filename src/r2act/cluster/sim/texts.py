"""Every text the simulator renders, each with the upstream line it reproduces.

A method trained on simulated telemetry learns its strings, so no string may be invented:
each message, error fragment, banner, kubelet and chaos-controller event the simulator
prints is a :class:`Text` here, naming the file (under ``shared/reference``) and line it
comes from. ``{}`` marks a value the simulator fills in; ``{err}`` marks a nested error
text that must itself be one of these templates (an error chain such as ``could not
retrieve cart: rpc error: code = ...``). Texts of software that is not in the reference
folder (the kubelet, grpc-go, grpcio, grpc-dotnet, Go's net package, Redis) carry an
``ext:`` source: the repository path they come from, and they are listed in
``docs/simulator.md`` ("Texts and their sources"), which the conformance test checks them
against. Renderers take their fixed text from here (``TEXTS[key].fmt``), never from literals.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property

OB = "online-boutique/src-v0.10.6/"
CM = "chaos-mesh-v2.8.3/"
LC = "locust-2.43.0/"
EXT = "ext:"
"""Prefix of a source outside ``shared/reference`` (checked against docs/simulator.md)."""


_LIFETIME = EXT + "dotnet/runtime:src/libraries/Microsoft.Extensions.Hosting/src/Internal/"
_LIFETIME += "ConsoleLifetime.cs"


LOCUST_HEADER = (
    f"{'Type':<8} {'Name':<76} {'# reqs':>7} {'# fails':>12} |{'Avg':>7} {'Min':>7} "
    f"{'Max':>7}{'Med':>7} | {'req/s':>7} {'failures/s':>11}"
)
"""Locust's stats header without a TTY (stats.py L833-835, name column 80 - 8 + 4 wide)."""


@dataclass(frozen=True)
class Text:
    """One template: fixed text with ``{}`` values and ``{err}`` nested error texts."""

    key: str
    text: str
    source: str
    """Path under shared/reference (``online-boutique/src-v0.10.6/frontend/handlers.go``),
    or ``ext:<repository>:<path>`` for software that is not in the reference folder."""
    line: int
    """The line of ``source`` that holds the text (1-based); 0 for ``ext:`` sources."""
    pattern: str | None = field(default=None)
    """A regular expression the rendered text matches, for shapes that are not one string
    (the Locust stats rows); by default it is derived from ``text``."""
    wrap: bool = False
    """Rendered as ``<text>: <err>``: a Go ``errors.Wrap`` (github.com/pkg/errors joins the
    message and the cause with ``": "``), so the cited line holds only the message."""

    @cached_property
    def fmt(self) -> str:
        """A ``%`` format of the text: each hole becomes ``%s``, literal ``%`` doubled."""
        return self.text.replace("%", "%%").replace("{err}", "%s").replace("{}", "%s")

    def __call__(self, *values: object) -> str:
        """The text with its holes filled, in order (a wrap takes its cause last)."""
        if self.wrap:
            *own, cause = values
            return f"{self.fmt % tuple(own) if own else self.text}: {cause}"
        return self.fmt % values if values else self.text

    def fixed(self) -> list[str]:
        """The fixed fragments between holes (what must occur in the cited source)."""
        return [p for p in re.split(r"\{err\}|\{\}", self.text) if p.strip()]

    @property
    def external(self) -> bool:
        return self.source.startswith(EXT)


def _t(key: str, text: str, source: str, line: int = 0, pattern: str | None = None) -> Text:
    return Text(key, text, source, line, pattern)


def _w(key: str, text: str, source: str, line: int) -> Text:
    return Text(key, text, source, line, None, wrap=True)


_ALL: tuple[Text, ...] = (
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
    # --- grpc-go client errors and Go's net package ------------------------------------
    _t(
        "grpc.status",
        "rpc error: code = {} desc = {err}",
        EXT + "grpc/grpc-go:internal/status/status.go",
    ),
    _t(
        "grpc.conn_error",
        'connection error: desc = "transport: Error while dialing: {err}"',
        EXT + "grpc/grpc-go:internal/transport/transport.go",
    ),
    _t(
        "grpc.no_addresses",
        "name resolver error: produced zero addresses",
        EXT + "grpc/grpc-go:clientconn.go",
    ),
    _t("go.refused", "dial tcp {}: connect: connection refused", EXT + "golang/go:src/net/net.go"),
    _t("go.io_timeout", "dial tcp {}: i/o timeout", EXT + "golang/go:src/net/net.go"),
    _t("go.canceled", "context canceled", EXT + "golang/go:src/context/context.go"),
    _t("go.deadline", "context deadline exceeded", EXT + "golang/go:src/context/context.go"),
    # --- redis (redis:alpine, default config) -----------------------------------------
    _t(
        "rd.banner",
        "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
        EXT + "redis/redis:src/server.c",
    ),
    _t(
        "rd.no_config",
        "Warning: no config file specified, using the default config. In order to specify a "
        "config file use redis-server /path/to/redis.conf",
        EXT + "redis/redis:src/server.c",
    ),
    _t("rd.mode", "Running mode=standalone, port=6379.", EXT + "redis/redis:src/server.c"),
    _t("rd.init", "Server initialized", EXT + "redis/redis:src/server.c"),
    _t("rd.ready", "Ready to accept connections tcp", EXT + "redis/redis:src/server.c"),
    _t("rd.clock", "monotonic clock: POSIX clock_gettime", EXT + "redis/redis:src/server.c"),
    _t("rd.save", "{} changes in {} seconds. Saving...", EXT + "redis/redis:src/server.c"),
    _t("rd.bgsave", "Background saving started by pid {}", EXT + "redis/redis:src/rdb.c"),
    _t("rd.saved", "DB saved on disk", EXT + "redis/redis:src/rdb.c"),
    _t(
        "rd.cow",
        "Fork CoW for RDB: current {} MB, peak {} MB, average {} MB",
        EXT + "redis/redis:src/server.c",
    ),
    _t("rd.bgsave_ok", "Background saving terminated with success", EXT + "redis/redis:src/rdb.c"),
    # --- Locust 2.43.0 (loadgenerator) ------------------------------------------------
    _t("lo.starting", "Starting Locust {}", LC + "locust/main.py", 180),
    _t("lo.no_limit", "No run time limit set, use CTRL+C to interrupt", LC + "locust/main.py", 573),
    _t("lo.sigterm", "Got SIGTERM signal", LC + "locust/main.py", 654),
    _t("lo.shutting_down", "Shutting down (exit code {})", LC + "locust/main.py", 632),
    _t(
        "lo.header",
        "Type{}Name{}# reqs{}# fails{}Avg{}Min{}Max{}Med{}req/s{}failures/s",
        LC + "locust/stats.py",
        835,
        pattern=re.escape(LOCUST_HEADER),
    ),
    _t(
        "lo.row",
        "{} |{} | {}",
        LC + "locust/stats.py",
        567,
        pattern=r"(?:GET      |POST     |         )[ A-Za-z0-9/_.-]{76} [ 0-9]{7} [ 0-9().%]{12} \|"
        r"[ 0-9]{7} [ 0-9]{7} [ 0-9]{7}[ 0-9]{7} \| [ 0-9.]{7} [ 0-9.]{11}",
    ),
    _t(
        "lo.separator",
        "{}|{}",
        LC + "locust/stats.py",
        837,
        pattern=r"-{8}\|-{76}\|-{7}\|-{13}\|-{7}\|-{7}\|-{7}\|-{7}\|-{8}\|-{11}",
    ),
    _t("lo.aggregated", "Aggregated", LC + "locust/stats.py", 259),
    _t("lo.error_report", "Error report", LC + "locust/stats.py", 885),
    _t("lo.error_header", "# occurrences", LC + "locust/stats.py", 886),
    _t(
        "lo.error_row",
        "{} {} {}: {}",
        LC + "locust/stats.py",
        890,
        pattern=r"[0-9]+ +(?:GET|POST) \S+: LocustBadStatusCode\(code=[0-9]+\) *",
    ),
    _t(
        "lo.error_separator",
        "{}|{}",
        LC + "locust/stats.py",
        887,
        pattern=r"-{18}\|-{141}",
    ),
    _t("lo.bad_status", "LocustBadStatusCode({})", LC + "locust/contrib/fasthttp.py", 693),
    # --- kubelet and controllers (kubernetes v1.32, not in the reference folder) -------
    _t(
        "k8s.scheduled",
        "Successfully assigned {}/{} to {}",
        EXT + "kubernetes/kubernetes:pkg/scheduler/schedule_one.go",
    ),
    _t(
        "k8s.pulled",
        'Container image "{}" already present on machine',
        EXT + "kubernetes/kubernetes:pkg/kubelet/images/image_manager.go",
    ),
    _t(
        "k8s.created",
        "Created container: {}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go",
    ),
    _t(
        "k8s.started",
        "Started container {}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go",
    ),
    _t(
        "k8s.stopping",
        "Stopping container {}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go",
    ),
    _t(
        "k8s.definition_changed",
        "Container {} definition changed, will be restarted",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go",
    ),
    _t(
        "k8s.liveness_restart",
        "Container {} failed liveness probe, will be restarted",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go",
    ),
    _t(
        "k8s.backoff",
        "Back-off restarting failed container {} in pod {}_{}({})",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go",
    ),
    _t(
        "k8s.probe_failed",
        "{} probe failed: {err}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/prober/prober.go",
    ),
    _t(
        "k8s.grpc_connect",
        'timeout: failed to connect service "{}" within 1s: {err}',
        EXT + "kubernetes/kubernetes:pkg/probe/grpc/grpc.go",
    ),
    _t(
        "k8s.grpc_rpc",
        "timeout: health rpc did not complete within 1s",
        EXT + "kubernetes/kubernetes:pkg/probe/grpc/grpc.go",
    ),
    _t(
        "k8s.http_get",
        'Get "http://{}/_healthz": {err}',
        EXT + "golang/go:src/net/http/client.go",
    ),
    _t(
        "k8s.http_timeout",
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        EXT + "golang/go:src/net/http/client.go",
    ),
    _t(
        "k8s.tcp_refused",
        "dial tcp {}: connect: connection refused",
        EXT + "kubernetes/kubernetes:pkg/probe/tcp/tcp.go",
    ),
    _t(
        "k8s.scaled",
        "Scaled {} replica set {} from {} to {}",
        EXT + "kubernetes/kubernetes:pkg/controller/deployment/sync.go",
    ),
    _t(
        "k8s.rs_create",
        "Created pod: {}",
        EXT + "kubernetes/kubernetes:pkg/controller/controller_utils.go",
    ),
    _t(
        "k8s.rs_delete",
        "Deleted pod: {}",
        EXT + "kubernetes/kubernetes:pkg/controller/controller_utils.go",
    ),
    # --- Chaos Mesh controller-manager events -----------------------------------------
    _t(
        "cm.finalizer",
        "Finalizer has been inited",
        CM + "controllers/utils/recorder/finalizer.go",
        30,
    ),
    _t(
        "cm.started",
        "Experiment has started",
        CM + "controllers/utils/recorder/desiredphase.go",
        75,
    ),
    _t(
        "cm.finalizer_removed",
        "Finalizer has been removed",
        CM + "controllers/utils/recorder/finalizer.go",
        45,
    ),
    _t(
        "cm.deleted",
        "Experiment has been deleted",
        CM + "controllers/utils/recorder/desiredphase.go",
        30,
    ),
    _t(
        "cm.timeup",
        "Time up according to the duration",
        CM + "controllers/utils/recorder/desiredphase.go",
        45,
    ),
    _t(
        "cm.applied",
        "Successfully apply chaos for {}",
        CM + "controllers/utils/recorder/common.go",
        35,
    ),
    _t(
        "cm.recovered",
        "Successfully recover chaos for {}",
        CM + "controllers/utils/recorder/common.go",
        51,
    ),
    _t(
        "cm.updated",
        "Successfully update {} of resource",
        CM + "controllers/utils/recorder/controller.go",
        35,
    ),
    _t("cm.failed", "Failed to {}: {err}", CM + "controllers/utils/recorder/error.go", 37),
    # chaos-daemon's failing DNSChaos apply (h11-mech: lifecycle / chaos.apply_error)
    _t(
        "cm.daemon_error",
        "error code: {}, msg: {err}",
        EXT + "chaos-mesh/chaos-mesh:pkg/chaosdaemon/util/util.go",
    ),
    _t(
        "go.exec_not_found",
        'exec: "{}": executable file not found in $PATH',
        EXT + "golang/go:src/os/exec/lp_unix.go",
    ),
    _t(
        "busybox.cp_create",
        "cp: can't create '{}': Read-only file system",
        EXT + "mirror/busybox:libbb/copy_file.c",
    ),
    _t(
        "cm.no_target",
        "no target has been selected",
        CM + "controllers/common/records/controller.go",
        98,
    ),
)

TEXTS: dict[str, Text] = {t.key: t for t in _ALL}
"""Every template by key."""
if len(TEXTS) != len(_ALL):  # pragma: no cover - a duplicate key is a programming error
    raise RuntimeError("duplicate text keys in r2act.cluster.sim.texts")


def T(key: str) -> Text:  # noqa: N802 - reads as a constant lookup at call sites
    """The template ``key`` (a KeyError names a text that has no source)."""
    return TEXTS[key]
