"""What each Online Boutique container prints when it starts: its v0.10.6 banner, in order.

Each banner follows the service's ``main()`` (tracing and profiling disabled by the
release manifest's env, then the listening address) in the service's own log format;
Redis' and the load generator's are the engine's (off-the-shelf software).
"""

from __future__ import annotations

import random

from r2act.schema import LogLine
from r2act.systems.logformats import (
    go_line,
    iso_millis,
    java_line,
    pino_line,
    python_line,
    rfc3339nano,
)
from r2act.systems.onlineboutique.render_backend import AD_LOGGER
from r2act.systems.onlineboutique.texts import T
from r2act.systems.render import PodIdentity


def startup_lines(logger: PodIdentity, ts: float, out: list[LogLine]) -> None:
    """What the container prints when it starts (its v0.10.6 banner, in order)."""
    app, pod = logger.app, logger.pod
    port = logger.topology.deployment(app).main.port or 0
    texts = _banner(logger, port)
    for i, (style, text) in enumerate(texts):
        t = ts + 0.01 * i
        if style == "go":
            line = go_line("info", text) % rfc3339nano(t)
        elif style == "node":
            line = pino_line("info", pod, f"{app}-server", text) % int(t * 1000)
        elif style == "python":
            line = python_line("INFO", f"{app}-server", text) % (t,)
        elif style.startswith("java"):
            sec = int(t)
            thread, thread_id = ("main", 1) if style == "java" else ("Thread-0", 20)
            line = java_line("INFO", text, AD_LOGGER, thread=thread, thread_id=thread_id) % (
                sec,
                int((t - sec) * 1e9),
                iso_millis(t),
            )
        else:
            line = text
        out.extend(LogLine(t, pod, logger.container, app, part) for part in line.split("\n"))


def _banner(logger: PodIdentity, port: int) -> list[tuple[str, str]]:
    """(style, text) of a service's start-up lines, per its main() and the manifest's env."""
    app = logger.app
    if app == "frontend":
        keys: tuple[str, ...] = ("fe.tracing_disabled", "fe.profiling_disabled")
        return [*(("go", T(k)()) for k in keys), ("go", T("fe.starting")("", port))]
    if app == "checkoutservice":
        return [
            ("go", T("co.tracing_disabled")()),
            ("go", T("co.profiling_disabled")()),
            ("go", T("co.service_config")(_service_config(logger))),
            ("go", T("co.listening")(f'"[::]:{port}"')),
        ]
    if app == "shippingservice":
        keys = ("sh.tracing", "sh.tracing_see", "sh.profiling_disabled", "sh.stats")
        return [*(("go", T(k)()) for k in keys), ("go", T("sh.listening")(f":{port}"))]
    if app == "productcatalogservice":
        return [
            ("go", T("pc.tracing_disabled")()),
            ("go", T("pc.profiling_disabled")()),
            ("go", T("pc.starting")(port)),
            ("go", T("pc.loading")()),
            ("go", T("pc.parsed")()),
        ]
    if app == "currencyservice":
        return [
            ("node", T("cu.profiler_disabled")()),
            ("node", T("cu.tracing_disabled")()),
            ("node", T("cu.starting")(port)),
            ("node", T("cu.started")(port)),
        ]
    if app == "paymentservice":
        return [
            ("node", T("pa.profiler_disabled")()),
            ("node", T("pa.tracing_disabled")()),
            ("node", T("pa.started")(port)),
        ]
    if app == "emailservice":
        keys = ("em.dummy", "em.profiler_disabled", "em.tracing_disabled")
        return [*(("python", T(k)()) for k in keys), ("python", T("em.listening")(port))]
    if app == "recommendationservice":
        return [
            ("python", T("re.init")()),
            ("python", T("re.profiler_disabled")()),
            ("python", T("re.tracing_disabled")()),
            ("python", T("re.catalog_addr")("productcatalogservice:3550")),
            ("python", T("re.listening")(port)),
        ]
    if app == "adservice":
        return [
            ("java", T("ad.starting")()),
            ("java-thread", T("ad.stats")()),
            ("java-thread", T("ad.tracing")()),
            ("java-thread", T("ad.tracing_see")()),
            ("java-thread", T("ad.tracing_init")()),
            ("java", T("ad.started")(port)),
        ]
    if app == "cartservice":
        return [
            ("plain", T("aspnet.listening")(port)),
            ("plain", T("aspnet.started")()),
            ("plain", T("aspnet.env")("Production")),
            ("plain", T("aspnet.root")("/app")),
        ]
    return []


def _service_config(logger: PodIdentity) -> str:
    """checkout's ``%+v`` of its service struct: addresses and connection pointers."""
    r = random.Random(f"{logger.seed}|{logger.pod}|conns")
    parts = ["UnimplementedCheckoutServiceServer:{}"]
    for field, svc, port in (
        ("productCatalogSvc", "productcatalogservice", 3550),
        ("cartSvc", "cartservice", 7070),
        ("currencySvc", "currencyservice", 7000),
        ("shippingSvc", "shippingservice", 50051),
        ("emailSvc", "emailservice", 5000),
        ("paymentSvc", "paymentservice", 50051),
    ):
        pointer = 0xC000100000 + r.getrandbits(20) * 16
        parts.append(f"{field}Addr:{svc}:{port} {field}Conn:{pointer:#x}")
    return "&{" + " ".join(parts) + "}"
