"""Each Online Boutique service's own log format, as precomputed line templates.

A paper-scale campaign writes millions of lines, so lines are never built with
``json.dumps``: every format is a ``%``-template whose constant parts (pod name, logger
name, escaped message) are filled in once per pod, leaving only the timestamp and a few
variable fields per line. Formats follow the services' logging setups (see
``shared/facts``): Go logrus JSON (keys sorted, RFC 3339 nano timestamps), Node pino
(epoch-ms ``time``), Python json logger (epoch ``timestamp``), Java log4j2 JsonLayout,
cartservice plain text, redis and Locust plain text.
"""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from functools import lru_cache

from r2act.systems import ONLINE_BOUTIQUE

PRODUCTS = (
    "OLJCESPC7Z",
    "66VCHSJNUP",
    "1YMWWN1N4O",
    "L9ECAV7KIM",
    "2ZYFJ3GM2N",
    "0PUK6V6EV0",
    "LS4PSXUNUM",
    "9SIQT8TOJO",
    "6E92ZMYYFZ",
)
"""Product ids of Online Boutique's catalog."""
CURRENCIES = ("USD", "EUR", "JPY", "GBP", "TRY", "CAD")
CONTEXT_WORDS = ("clothing", "accessories", "footwear", "hair", "decor", "kitchen")


V = "@@V@@"
"""Placeholder for a variable part inside a message; ``holes`` turns it into ``%s``."""


def holes(template: str) -> str:
    """A template built from a message containing ``V`` placeholders, with ``%s`` in their place."""
    return template.replace(V, "%s")


def q(text: str) -> str:
    """``text`` as a JSON string body (escaped, without the quotes); safe inside templates."""
    return json.dumps(text)[1:-1].replace("%", "%%")


def uuid_text(r: random.Random) -> str:
    """A version-4 UUID string drawn from ``r`` (cheaper than the uuid module)."""
    h = f"{r.getrandbits(128):032x}"
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


@lru_cache(maxsize=8192)
def _second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%dT%H:%M:%S")


_SECONDS: dict[int, str] = {}


def rfc3339nano(ts: float) -> str:
    """Go's time.RFC3339Nano (trailing zeros of the fraction trimmed); hot, so hand-cached."""
    sec = int(ts)
    prefix = _SECONDS.get(sec)
    if prefix is None:
        if len(_SECONDS) > 8192:
            _SECONDS.clear()
        prefix = _SECONDS[sec] = _second(sec)
    # '%d' truncates a float as int() does, minus the int object: same digits, faster (a
    # format spec would refuse the float)
    frac = ("%09d" % ((ts - sec) * 1e9)).rstrip("0")  # noqa: UP031
    return f"{prefix}.{frac}Z" if frac else f"{prefix}Z"


def iso_millis(ts: float) -> str:
    """ISO 8601 with milliseconds, as log4j and most loggers print it."""
    sec = int(ts)
    return f"{_second(sec)}.{int((ts - sec) * 1000):03d}Z"


@lru_cache(maxsize=8192)
def _redis_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%d %b %Y %H:%M:%S")


def redis_time(ts: float) -> str:
    """redis's '01 Jan 2026 00:00:00.123'."""
    sec = int(ts)
    return f"{_redis_second(sec)}.{int((ts - sec) * 1000):03d}"


@lru_cache(maxsize=8192)
def _locust_second(sec: int) -> str:
    return datetime.fromtimestamp(sec, UTC).strftime("%Y-%m-%d %H:%M:%S")


def locust_time(ts: float) -> str:
    """Python logging's '2026-01-01 00:00:00,123'."""
    sec = int(ts)
    return f"{_locust_second(sec)},{int((ts - sec) * 1000):03d}"


def go_line(severity: str, message: str, fields: dict[str, str] | None = None) -> str:
    """A logrus JSON template with one ``%s`` left for the timestamp (keys sorted as logrus)."""
    items = dict(fields or {})
    items["message"] = f'"{q(message)}"'
    items["severity"] = f'"{severity}"'
    items["timestamp"] = '"%s"'
    return "{" + ",".join(f'"{k}":{items[k]}' for k in sorted(items)) + "}"


def pino_line(level: str, pod: str, logger: str, message: str) -> str:
    """A pino template with ``%d`` for the epoch-ms time.

    Online Boutique's pino setup maps the level to a ``severity`` label (no numeric
    ``level``) and uses ``message`` as the message key."""
    return (
        f'{{"severity":"{level}","time":%d,"pid":1,"hostname":"{pod}","name":"{logger}",'
        f'"message":"{q(message)}"}}'
    )


def python_line(severity: str, logger: str, message: str) -> str:
    """A python-json-logger template with ``%.6f`` for the epoch timestamp."""
    return (
        f'{{"timestamp": %.6f, "severity": "{severity}", "name": "{logger}", '
        f'"message": "{q(message)}"}}'
    )


def java_line(level: str, message: str, thread: str = "grpc-default-executor-0") -> str:
    """A log4j2 JsonLayout (compact) template: ``%d``/``%d`` epoch second/nanos, ``%s`` time."""
    return (
        '{"instant":{"epochSecond":%d,"nanoOfSecond":%d},'
        f'"thread":"{thread}","level":"{level}","loggerName":"hipstershop.AdService",'
        f'"message":"{q(message)}","endOfBatch":false,'
        '"loggerFqcn":"org.apache.logging.log4j.spi.AbstractLogger","threadId":21,'
        '"threadPriority":5,"logging.googleapis.com/trace":"00000000000000000000000000000000",'
        '"logging.googleapis.com/spanId":"0000000000000000",'
        '"logging.googleapis.com/traceSampled":"false","time":"%s"}'
    )


_PORTS = {d.name: d.service_port or 0 for d in ONLINE_BOUTIQUE.deployments}
_UPSTREAM = {
    "paymentservice": "failed to charge card: could not charge the card",
    "shippingservice": "shipping quote failure",
    "cartservice": "failed to get user cart during checkout",
    "productcatalogservice": "failed to prepare order",
    "currencyservice": "failed to convert price",
    "redis-cart": "Can't access cart storage",
}
"""How a handler wraps a failure of the service it called in turn (checkout's messages)."""


def grpc_error(kind: str, callee: str, port: int, seed_ip: int) -> str:
    """The gRPC error text a Go client prints for a failed call, by failure kind."""
    if kind == "unavailable":
        return (
            "rpc error: code = Unavailable desc = connection error: desc = "
            f'"transport: Error while dialing: dial tcp 10.96.{seed_ip % 200}.{seed_ip % 97 + 10}:'
            f'{port}: connect: connection refused"'
        )
    if kind == "canceled":
        return "rpc error: code = Canceled desc = context canceled"
    if kind == "deadline":
        return "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    if kind == "dns_error":
        return (
            "rpc error: code = Unavailable desc = connection error: desc = "
            f'"transport: Error while dialing: dial tcp: lookup {callee} on 10.96.0.10:53: '
            'no such host"'
        )
    if kind == "dns_random":
        return (
            "rpc error: code = Unavailable desc = connection error: desc = "
            f'"transport: Error while dialing: dial tcp 172.{16 + seed_ip % 16}.{seed_ip % 251}.'
            f'{seed_ip % 199 + 2}:{port}: i/o timeout"'
        )
    if kind.startswith("upstream"):
        parts = [*kind.split("|"), "", ""]
        root_kind, root = parts[1] or "unavailable", parts[2] or callee
        inner = grpc_error(root_kind, root, _PORTS.get(root, port), seed_ip)
        what = _UPSTREAM.get(root, f"{root} failed")
        return f"rpc error: code = Internal desc = {what}: {inner}"
    return f"rpc error: code = Unknown desc = {kind}"


def python_grpc_error(kind: str, callee: str, port: int) -> str:
    """The same failure as grpcio for Python renders it."""
    codes = {"deadline": "DEADLINE_EXCEEDED"}
    code = codes.get(kind, "UNAVAILABLE")
    detail = {
        "dns_error": f"DNS resolution failed for {callee}:{port}",
        "dns_random": f"failed to connect to all addresses; last error: UNAVAILABLE: "
        f"ipv4:172.18.4.7:{port}: Socket closed",
        "deadline": "Deadline Exceeded",
    }.get(
        kind,
        f"failed to connect to all addresses; last error: UNAVAILABLE: "
        f"ipv4:10.96.12.4:{port}: Connection refused",
    )
    return (
        f"<_InactiveRpcError of RPC that terminated with: status = StatusCode.{code} "
        f'details = "{detail}">'
    )


def cart_exception(kind: str, op: str) -> tuple[str, ...]:
    """cartservice's multi-line log when Redis cannot be reached (one tuple entry per line)."""
    reason = {
        "dns_error": "UnableToResolvePhysicalConnection on redis-cart:6379",
        "dns_random": "UnableToConnect on redis-cart:6379/Interactive, Initializing/NotStarted",
    }.get(kind, "UnableToConnect on redis-cart:6379/Interactive, Initializing/NotStarted")
    method = {"GetCart": "GetCartAsync", "AddItem": "AddItemAsync"}.get(op, "EmptyCartAsync")
    return (
        "fail: Grpc.AspNetCore.Server.ServerCallHandler[6]",
        f"      Error when executing service method '{op}'.",
        'Grpc.Core.RpcException: Status(StatusCode="FailedPrecondition", Detail="Can\'t access '
        "cart storage. StackExchange.Redis.RedisConnectionException: It was not possible to "
        f'connect to the redis server(s). {reason}")',
        f"   at cartservice.cartstore.RedisCartStore.{method}(String userId) in "
        "/app/cartstore/RedisCartStore.cs:line 96",
        f"   at cartservice.services.CartService.{op}({op}Request request, ServerCallContext "
        "context) in /app/services/CartService.cs:line 46",
        "   at Grpc.Shared.Server.UnaryServerMethodInvoker`3.ResolvedInterceptorInvoker"
        "(TRequest resolvedRequest, ServerCallContext resolvedContext)",
    )


STARTUP: dict[str, tuple[str, ...]] = {
    "go": ("starting server", "Tracing disabled.", "Profiling disabled.", "listening on :{port}"),
    "node": ("Profiler disabled.", "Tracing disabled.", "Starting gRPC server on port {port}..."),
    "python": ("Tracing disabled.", "Profiler disabled.", "listening on port: {port}"),
    "java": ("AdService starting.", "Ad Service started, listening on {port}"),
    "csharp": (
        "Reading cart service port from PORT environment variable",
        "info: Microsoft.Hosting.Lifetime[14]",
        "      Now listening on: http://[::]:{port}",
        "info: Microsoft.Hosting.Lifetime[0]",
        "      Application started. Press Ctrl+C to shut down.",
    ),
    "redis": (
        "1:C {rtime} # oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
        "1:M {rtime} * Running mode=standalone, port=6379.",
        "1:M {rtime} * Server initialized",
        "1:M {rtime} * Ready to accept connections tcp",
    ),
    "locust": (
        "[{ltime}] {pod}/INFO/locust.main: Starting Locust 2.32.3",
        "[{ltime}] {pod}/INFO/locust.main: Run time limit not set, running forever",
        "[{ltime}] {pod}/INFO/locust.runners: Ramping to 10 users at a rate of 1.00 per second",
    ),
}
"""Messages a container prints when it starts, by language ({port}, {pod}, times filled)."""
