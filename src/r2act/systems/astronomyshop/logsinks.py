"""Where each Astronomy Shop service's log lines go on r2act's deployment, from its set-up.

Two places: the pod's own stdout/stderr, which r2act reads through the Kubernetes API
(``pods/log``), and OTLP log records sent to the node's collector, whose logs pipeline
ends in the ``debug`` exporter at ``verbosity: detailed`` (``deploy/astronomyshop/values.yaml``),
so the records are printed on the **collector pod's** stdout (``render_collector``). A
service may write to both (a console logger beside an OTLP exporter). Each row names the
lines of its set-up that decide it (paths under ``shared/reference``);
``tests/unit/systems/test_astronomyshop_texts.py`` checks every cited line holds its
fragment and that every deployment of the topology has a row.
"""

from __future__ import annotations

from dataclasses import dataclass

STDOUT = "stdout"
"""The container's own stream (stdout or stderr: the kubelet keeps both in the pod log)."""
COLLECTOR = "collector"
"""OTLP log records to the collector, printed by its debug exporter on the collector pod."""

_D = "opentelemetry-demo-2.2.0/src/"
_RENDERED = (
    "opentelemetry-demo-chart-0.40.10/examples/bring-your-own-observability/rendered/component.yaml"
)
_VALUES = "opentelemetry-demo-chart-0.40.10/values.yaml"
_AGENT = (
    "opentelemetry-demo-chart-0.40.10/examples/bring-your-own-observability/rendered/"
    "opentelemetry-collector/daemonset.yaml"
)


@dataclass(frozen=True)
class Evidence:
    """One line of a service's logging set-up: the file, the line, what it holds."""

    path: str
    line: int
    fragment: str


@dataclass(frozen=True)
class LogSink:
    """Where one service's lines go, and why."""

    sinks: frozenset[str]
    evidence: tuple[Evidence, ...]
    why: str


def _row(sinks: tuple[str, ...], why: str, *evidence: tuple[str, int, str]) -> LogSink:
    return LogSink(frozenset(sinks), tuple(Evidence(*e) for e in evidence), why)


BOTH = (STDOUT, COLLECTOR)

SINKS: dict[str, LogSink] = {
    "accounting": _row(
        BOTH,
        "Host.CreateDefaultBuilder adds the console logger; the .NET auto-instrumentation "
        "(instrument.sh) adds an OTLP log exporter; the start-up line is a Console.WriteLine",
        (_D + "accounting/Program.cs", 14, "Host.CreateDefaultBuilder(args)"),
        (_D + "accounting/Dockerfile", 36, "./instrument.sh"),
        (_D + "accounting/Program.cs", 8, "Console.WriteLine"),
    ),
    "ad": _row(
        BOTH,
        "log4j2's Console appender on SYSTEM_OUT; the OpenTelemetry Java agent captures the "
        "same events and exports them (OTEL_LOGS_EXPORTER=otlp)",
        (_D + "ad/src/main/resources/log4j2.xml", 9, 'target="SYSTEM_OUT"'),
        (_D + "ad/Dockerfile", 32, "JAVA_TOOL_OPTIONS=-javaagent"),
        (_VALUES, 210, "OTEL_LOGS_EXPORTER"),
    ),
    "cart": _row(
        BOTH,
        "builder.Logging adds the OpenTelemetry (OTLP) provider and the console provider",
        (_D + "cart/src/Program.cs", 39, "AddOpenTelemetry(options => options.AddOtlpExporter())"),
        (_D + "cart/src/Program.cs", 40, ".AddConsole()"),
    ),
    "checkout": _row(
        (COLLECTOR,),
        "the default slog logger is the otelslog bridge, whose only handler is the OTLP "
        "batch exporter: nothing reaches stdout",
        (_D + "checkout/main.go", 181, 'otelslog.NewLogger("checkout")'),
        (_D + "checkout/main.go", 182, "slog.SetDefault(logger)"),
        (_D + "checkout/main.go", 128, "sdklog.NewBatchProcessor(logExporter)"),
    ),
    "currency": _row(
        (COLLECTOR,),
        "the OpenTelemetry C++ logs SDK with a simple processor on the OTLP gRPC exporter; "
        "stdout holds only the usage message",
        (_D + "currency/src/logger_common.h", 22, "OtlpGrpcLogRecordExporterFactory::Create"),
        (_D + "currency/src/server.cpp", 278, "initLogger();"),
    ),
    "email": _row(
        BOTH,
        "one OTLP record per e-mail from the logs SDK, and a puts of the same fact",
        (_D + "email/email_server.rb", 88, "$logger.on_emit("),
        (_D + "email/email_server.rb", 95, "puts"),
    ),
    "flagd": _row(
        (STDOUT,),
        "off-the-shelf flagd (its image, not the demo's): its zap logger writes to the "
        "container's stream; the chart gives it no OTLP log exporter",
        (_RENDERED, 1037, "ghcr.io/open-feature/flagd:v0.12.9"),
    ),
    "fraud-detection": _row(
        BOTH,
        "log4j2's Console appender on SYSTEM_OUT, and the Java agent's OTLP copy",
        (_D + "fraud-detection/src/main/resources/log4j2.xml", 9, 'target="SYSTEM_OUT"'),
        (_D + "fraud-detection/Dockerfile", 22, "JAVA_TOOL_OPTIONS=-javaagent"),
    ),
    "frontend": _row(
        (STDOUT,),
        "the Node SDK is set up with trace and metric exporters only and the app logs "
        "through no logging library; what it prints is Next.js' console.error of a failed "
        "API handler",
        (_D + "frontend/Dockerfile", 60, "--require=./Instrumentation.js"),
        (_D + "frontend/utils/telemetry/Instrumentation.js", 16, "traceExporter"),
    ),
    "frontend-proxy": _row(
        BOTH,
        "the access log's only logger is envoy.access_loggers.open_telemetry (to the "
        "collector); Envoy's own start-up log is on its stderr",
        (_D + "frontend-proxy/envoy.tmpl.yaml", 79, "envoy.access_loggers.open_telemetry"),
        (_D + "frontend-proxy/envoy.tmpl.yaml", 86, "cluster_name: opentelemetry_collector_grpc"),
    ),
    "image-provider": _row(
        (STDOUT,),
        "nginx's access_log on; the start command cats the rendered config to stdout",
        (_D + "image-provider/nginx.conf.template", 36, "access_log  on;"),
        (_D + "image-provider/Dockerfile", 16, "cat  /etc/nginx/nginx.conf"),
    ),
    "kafka": _row(
        BOTH,
        "apache/kafka's log4j console output, and the Java agent (KAFKA_OPTS) capturing it",
        (_D + "kafka/Dockerfile", 5, "FROM apache/kafka:3.9.1"),
        (_D + "kafka/Dockerfile", 25, "-javaagent:/tmp/opentelemetry-javaagent.jar"),
    ),
    "llm": _row(
        (STDOUT,),
        "Flask's app.logger (its default stderr handler); the image runs plain python, "
        "not opentelemetry-instrument",
        (_D + "llm/app.py", 18, "app.logger.setLevel(logging.INFO)"),
        (_D + "llm/Dockerfile", 26, '"/venv/bin/python", "app.py"'),
    ),
    "load-generator": _row(
        (COLLECTOR,),
        "Locust runs with --skip-log-setup and the locustfile puts an OTLP LoggingHandler "
        "on the root logger: Locust's own log records and the locustfile's go to the "
        "collector (render_loadgen), and no stats printer runs (traffic.LOAD_STATS)",
        (_D + "load-generator/Dockerfile", 22, "--skip-log-setup"),
        (_D + "load-generator/locustfile.py", 59, "root_logger.addHandler(handler)"),
    ),
    "otel-collector-agent": _row(
        (STDOUT,),
        "the collector itself: its own logger and the debug exporter r2act's values end the "
        "logs pipeline in (deploy/astronomyshop/values.yaml, debug/logs) write to the "
        "container's stream; it is where the COLLECTOR rows' records are printed",
        (_AGENT, 42, "- name: opentelemetry-collector"),
        (_AGENT, 47, 'image: "otel/opentelemetry-collector-contrib:0.151.0"'),
    ),
    "payment": _row(
        BOTH,
        "pino through pino-opentelemetry-transport with two processors: a batch OTLP gRPC "
        "exporter and a simple console exporter (the SDK's ConsoleLogRecordExporter)",
        (_D + "payment/logger.js", 13, "protocol: 'grpc'"),
        (_D + "payment/logger.js", 18, "protocol: 'console'"),
    ),
    "postgresql": _row(
        (STDOUT,),
        "off-the-shelf postgres: its server log on stderr",
        (_RENDERED, 1838, "postgres:17.6"),
    ),
    "product-catalog": _row(
        (COLLECTOR,),
        "the package logger is the otelslog bridge on the global (OTLP batch) provider",
        (_D + "product-catalog/main.go", 69, 'otelslog.NewLogger("product-catalog")'),
        (_D + "product-catalog/main.go", 131, "sdklog.NewBatchProcessor(logExporter)"),
    ),
    "product-reviews": _row(
        BOTH,
        "an OTLP LoggingHandler on the 'main' logger, which also propagates to the root "
        "handler that opentelemetry-instrument's logging instrumentation installs when "
        "OTEL_PYTHON_LOG_CORRELATION is true (stderr)",
        (_D + "product-reviews/product_reviews_server.py", 358, "logger.addHandler(handler)"),
        (_D + "product-reviews/Dockerfile", 31, "opentelemetry-instrument"),
        (_RENDERED, 2018, "OTEL_PYTHON_LOG_CORRELATION"),
    ),
    "quote": _row(
        (COLLECTOR,),
        "Monolog's only handler is the OpenTelemetry handler on the global logger provider",
        (_D + "quote/app/dependencies.php", 23, "new Handler("),
        (_D + "quote/app/dependencies.php", 27, "new Logger($loggerSettings['name'], [$handler])"),
    ),
    "recommendation": _row(
        BOTH,
        "an OTLP LoggingHandler on the 'main' logger, which also propagates to the root "
        "handler of opentelemetry-instrument's logging instrumentation "
        "(OTEL_PYTHON_LOG_CORRELATION=true: logging.basicConfig on stderr)",
        (_D + "recommendation/recommendation_server.py", 154, "logger.addHandler(handler)"),
        (_D + "recommendation/Dockerfile", 30, "opentelemetry-instrument"),
        (_RENDERED, 2160, "OTEL_PYTHON_LOG_CORRELATION"),
    ),
    "shipping": _row(
        (COLLECTOR,),
        "the tracing subscriber's only layer is the OpenTelemetry bridge (OTLP batch)",
        (_D + "shipping/src/telemetry_conf.rs", 66, "OpenTelemetryTracingBridge::new"),
        (_D + "shipping/src/telemetry_conf.rs", 70, "registry().with(otel_layer).init()"),
    ),
    "valkey-cart": _row(
        (STDOUT,),
        "off-the-shelf valkey: its server log on stdout",
        (_RENDERED, 2285, "valkey/valkey:9.0.1-alpine3.23"),
    ),
}
"""Every deployment of the chart, by name: where its lines go and the set-up that says so."""


def to_stdout(service: str) -> bool:
    """The service's own pod log holds (some of) its lines."""
    row = SINKS.get(service)
    return row is not None and STDOUT in row.sinks


def to_collector(service: str) -> bool:
    """The service sends OTLP log records that the collector's debug exporter prints."""
    row = SINKS.get(service)
    return row is not None and COLLECTOR in row.sinks
