"""The stdout formats of the Astronomy Shop's runtimes, as its services configure them.

- **.NET console logger** (cart, accounting): the SimpleConsoleFormatter's two lines,
  ``info: <category>[<event id>]`` and the message indented by six spaces (the default of
  ``AddConsole()``, ``cart/src/Program.cs`` L40; ``Host.CreateDefaultBuilder``).
- **log4j2 PatternLayout** (ad, fraud-detection): ``log4j2.xml`` L10, with the Java agent's
  ``trace_id``/``span_id``/``trace_flags`` context data (empty outside a span).
- **Python logging** (recommendation, product-reviews): the root handler that
  opentelemetry-instrument's logging instrumentation installs with its default format
  (``as.py.log_correlation``), ``asctime`` as ``2026-01-01 00:00:00,123``.
- **Envoy's access-log body** (frontend-proxy): ``envoy.tmpl.yaml`` L90, field by field.

Pod addresses and UIDs are pure functions of the pod's name, the same as the engine's
(``cluster/sim/identity``; a system may not import the engine, and
``tests/unit/systems/test_astronomyshop_texts.py`` checks they agree).
"""

from __future__ import annotations

import hashlib
import random
from datetime import UTC, datetime
from functools import lru_cache

from r2act.systems.astronomyshop.texts import T
from r2act.systems.logformats import iso_millis, locust_time

NAMESPACE = "astronomy"
"""The namespace deploy/astronomyshop installs into (``deploy/versions.env``): the
collector's ``k8s.namespace.name`` and the services' DNS names."""
DOTNET_LEVEL = {"Information": "info", "Warning": "warn", "Error": "fail", "Debug": "dbug"}
"""The SimpleConsoleFormatter's level names."""
DOTNET_INDENT = "      "
"""The SimpleConsoleFormatter's message padding (six spaces)."""


def dotnet_console(level: str, category: str, event_id: int, message: str) -> list[str]:
    """The console logger's lines for one entry: the header, then each message line padded."""
    return [
        f"{DOTNET_LEVEL[level]}: {category}[{event_id}]",
        *(DOTNET_INDENT + part for part in message.split("\n")),
    ]


def log4j_line(ts: float, logger: str, message: str, trace: tuple[str, str, str]) -> str:
    """``%d{yyyy-MM-dd HH:mm:ss} - %logger{36} - %msg trace_id=.. span_id=.. trace_flags=..``."""
    stamp = locust_time(ts)[:19]
    return T("as.log4j.pattern")(stamp, logger, message, *trace)


def python_root_line(
    ts: float,
    record: tuple[str, str, str, int],
    trace: tuple[str, str, bool],
    service: str,
    message: str,
) -> str:
    """One line of the root handler opentelemetry-instrument's logging instrumentation sets
    up (``OTEL_PYTHON_LOG_CORRELATION=true``), from its default format; ``record`` is
    (level name, logger name, file name, line number)."""
    level, name, filename, lineno = record
    trace_id, span_id, sampled = trace
    return T("as.py.log_correlation").text % {
        "asctime": locust_time(ts),
        "levelname": level,
        "name": name,
        "filename": filename,
        "lineno": lineno,
        "otelTraceID": trace_id,
        "otelSpanID": span_id,
        "otelServiceName": service,
        "otelTraceSampled": sampled,
        "message": message,
    }


def rack_time(ts: float) -> str:
    """Rack's CommonLogger time, ``%d/%b/%Y:%H:%M:%S %z`` (the container runs in UTC)."""
    return datetime.fromtimestamp(int(ts), UTC).strftime("%d/%b/%Y:%H:%M:%S +0000")


def trace_ids(r: random.Random) -> tuple[str, str]:
    """A W3C trace id (32 hex) and span id (16 hex) drawn from ``r``."""
    return f"{r.getrandbits(128):032x}", f"{r.getrandbits(64):016x}"


@lru_cache(maxsize=4096)
def pod_ip(pod: str) -> str:
    """status.podIP of ``pod``: the engine's rule (10.244.0.0/24 on kind's one node)."""
    d = hashlib.sha256(f"ip|{pod}".encode()).digest()
    return f"10.244.0.{2 + d[0] % 250}"


@lru_cache(maxsize=4096)
def pod_uid(pod: str) -> str:
    """metadata.uid of ``pod``: the engine's rule (a version-4 UUID drawn from its name)."""
    h = hashlib.sha256(f"uid|{pod}".encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-{'89ab'[int(h[16], 16) % 4]}{h[17:20]}-{h[20:32]}"


def envoy_access_body(
    request: tuple[float, str, str, int],
    flags: tuple[str, str, str],
    sizes: tuple[int, int, int, str],
    ids: tuple[str, str],
    hosts: tuple[str, str, str, str, str],
) -> str:
    """The access-log body ``envoy.tmpl.yaml`` L90 defines, with its fields in order.

    ``request``: start time, method, path, status. ``flags``: RESPONSE_FLAGS,
    RESPONSE_CODE_DETAILS, UPSTREAM_TRANSPORT_FAILURE_REASON. ``sizes``: bytes received,
    bytes sent, duration ms, upstream service time. ``ids``: user agent, request id.
    ``hosts``: upstream host, cluster, upstream local, downstream local, downstream remote.
    Unset fields print ``-``: X-Forwarded-For (Locust talks to Envoy directly), the
    connection termination details, the SNI and the route name (no route has a name)."""
    ts, method, path, status = request
    response_flags, details, failure = flags
    received, sent, duration, upstream_ms = sizes
    agent, request_id = ids
    upstream, cluster, upstream_local, local, remote = hosts
    return (
        f'[{iso_millis(ts)}] "{method} {path} HTTP/1.1" {status} {response_flags} {details} - '
        f'"{failure}" {received} {sent} {duration} {upstream_ms} "-" "{agent}" '
        f'"{request_id}" "frontend-proxy:8080" "{upstream}" {cluster} {upstream_local} '
        f"{local} {remote} - -"
    )
