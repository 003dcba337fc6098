"""Backend, start-up and load-generator lines (the frontend's are in ``podlogs``).

Messages are ``texts`` templates: what each Online Boutique v0.10.6 service prints per
call, and what its server library prints when a handler fails (grpcio's ``Exception
calling application`` traceback, grpc-dotnet's Information-level ``Error status code ...
raised.``). Checkout logs nothing when a step fails (it returns the error; only a failed
confirmation e-mail is logged), and neither do the Node and Go leaf services.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from r2act.cluster.sim.errtexts import cart_storage_detail, go_client_error, python_inactive
from r2act.cluster.sim.identity import CONTAINER_PORTS
from r2act.cluster.sim.logformats import (
    CATEGORIES,
    CURRENCIES,
    PRODUCTS,
    fake_email,
    fake_visa,
    go_line,
    iso_millis,
    java_line,
    locust_time,
    pino_line,
    python_line,
    redis_time,
    rfc3339nano,
    uuid_text,
)
from r2act.cluster.sim.podlog_types import PodIdentity, Render
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.texts import LOCUST_HEADER, T
from r2act.schema import LogLine

new = tuple.__new__


def _static(logger: PodIdentity, lines: list[tuple[str, str]]) -> Render:
    """A renderer for a fixed sequence of templates: (format, timestamp style)."""

    pod, container, app = logger.pod, logger.container, logger.app
    fills = [(_FILLERS[style], template) for template, style in lines]
    if len(fills) == 1:
        fill, template = fills[0]

        def single(ts: float, r: random.Random, out: list[LogLine]) -> None:
            out.append(new(LogLine, (ts, pod, container, app, fill(template, ts))))

        return single
    if len(fills) == 2:  # the common case (currency, shipping): no loop
        (fill0, template0), (fill1, template1) = fills

        def pair(ts: float, r: random.Random, out: list[LogLine]) -> None:
            t = ts + 0.0007
            out += (
                new(LogLine, (ts, pod, container, app, fill0(template0, ts))),
                new(LogLine, (t, pod, container, app, fill1(template1, t))),
            )

        return pair

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        for i, (fill, template) in enumerate(fills):
            t = ts + i * 0.0007
            out.append(new(LogLine, (t, pod, container, app, fill(template, t))))

    return render


def _java(template: str, t: float) -> str:
    sec = int(t)
    return template % (sec, int((t - sec) * 1e9), iso_millis(t))


_FILLERS: dict[str, Callable[[str, float], str]] = {
    "go": lambda template, t: template % rfc3339nano(t),
    "pino": lambda template, t: template % int(t * 1000),
    "python": lambda template, t: template % (t,),
    "java": _java,
    "plain": lambda template, t: template,
}
"""Timestamp fillers by format: each template leaves the time slot(s) of its format open."""


def served_renderer(logger: PodIdentity, op: str) -> tuple[int, Render] | None:
    """(lines, renderer) for one successful call a service handled; None when it logs nothing."""
    app, pod = logger.app, logger.pod
    if app == "currencyservice":
        name = "currencyservice-server"
        key = "cu.converted" if op == "Convert" else "cu.supported"
        return 1, _static(logger, [(pino_line("info", pod, name, T(key)()), "pino")])
    if app == "paymentservice":
        return 2, _payment(logger, "paymentservice-server")
    if app == "emailservice":
        return 1, _email(logger)
    if app == "recommendationservice":
        return 1, _recommend(logger)
    if app == "shippingservice":
        keys = (
            ("sh.ship_in", "sh.ship_out") if op == "ShipOrder" else ("sh.quote_in", "sh.quote_out")
        )
        return 2, _static(logger, [(go_line("info", T(k)()), "go") for k in keys])
    if app == "checkoutservice":
        return 3, _checkout(logger)
    if app == "adservice":
        return 1, _ads(logger)
    if app == "cartservice":
        return 1, _cart(logger, op)
    return None


def _payment(logger: PodIdentity, name: str) -> Render:
    invoked = pino_line("info", logger.pod, name, T("pa.invoked")("\x00")).replace("\\u0000", "%s")
    done = pino_line("info", logger.pod, name, T("pa.processed")(*["\x00"] * 5)).replace(
        "\\u0000", "%s"
    )
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        rand = r.random
        currency = CURRENCIES[int(rand() * len(CURRENCIES))]
        units, nanos = 10 + int(rand() * 390), int(rand() * 100) * 10_000_000
        card = fake_visa(r)
        cvv, year, month = 100 + int(rand() * 900), 2027 + int(rand() * 70), 1 + int(rand() * 12)
        request = (
            f'{{\\"amount\\":{{\\"currency_code\\":\\"{currency}\\",\\"units\\":\\"{units}\\",'
            f'\\"nanos\\":{nanos}}},\\"credit_card\\":{{\\"credit_card_number\\":'
            f'\\"{card}\\",\\"credit_card_cvv\\":{cvv},\\"credit_card_expiration_year\\":{year},'
            f'\\"credit_card_expiration_month\\":{month}}}}}'
        )
        out.append(new(LogLine, (ts, pod, container, app, invoked % (int(ts * 1000), request))))
        t = ts + 0.001
        line = done % (int(t * 1000), "visa", card[-4:], currency, units, nanos)
        out.append(new(LogLine, (t, pod, container, app, line)))

    return render


def _email(logger: PodIdentity) -> Render:
    template = python_line("INFO", "emailservice-server", T("em.received")("\x00")).replace(
        "\\u0000", "%s"
    )
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        out.append(new(LogLine, (ts, pod, container, app, template % (ts, fake_email(r)))))

    return render


def _recommend(logger: PodIdentity) -> Render:
    template = python_line("INFO", "recommendationservice-server", T("re.list")("\x00")).replace(
        "\\u0000", "%s"
    )
    pod, container, app = logger.pod, logger.container, logger.app
    draws = random.Random(f"{logger.seed}|{logger.pod}|recommend")
    pool = ["[" + ", ".join(f"'{p}'" for p in draws.sample(PRODUCTS, 5)) + "]" for _ in range(64)]

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        ids = pool[int(r.random() * 64)]
        out.append(new(LogLine, (ts, pod, container, app, template % (ts, ids))))

    return render


def _checkout(logger: PodIdentity) -> Render:
    def hole(key: str, n: int) -> str:
        return go_line("info", T(key)(*["\x00"] * n)).replace("\\u0000", "%s")

    place, paid, sent = (
        hole("co.place_order", 2),
        hole("co.payment_ok", 1),
        hole("co.email_sent", 1),
    )
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        user = logger.sessions[int(r.random() * len(logger.sessions))]
        currency = CURRENCIES[int(r.random() * len(CURRENCIES))]
        line = place % (f'\\"{user}\\"', f'\\"{currency}\\"', rfc3339nano(ts))
        out.append(new(LogLine, (ts, pod, container, app, line)))
        t = ts + 0.02
        out.append(new(LogLine, (t, pod, container, app, paid % (uuid_text(r), rfc3339nano(t)))))
        t += 0.01
        email = f'\\"{fake_email(r)}\\"'
        out.append(new(LogLine, (t, pod, container, app, sent % (email, rfc3339nano(t)))))

    return render


def _ads(logger: PodIdentity) -> Render:
    template = java_line("INFO", T("ad.request")("\x00")).replace("\\u0000", "%s")
    pod, container, app = logger.pod, logger.container, logger.app
    words = ("[]", *CATEGORIES)

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        sec = int(ts)
        word = words[int(r.random() * len(words))]
        line = template % (sec, int((ts - sec) * 1e9), word, iso_millis(ts))
        out.append(new(LogLine, (ts, pod, container, app, line)))

    return render


def _cart(logger: PodIdentity, op: str) -> Render:
    pod, container, app = logger.pod, logger.container, logger.app
    sessions = logger.sessions
    n_sessions = len(sessions)
    if op == "AddItem":
        add = T("ca.add")

        def render_add(ts: float, r: random.Random, out: list[LogLine]) -> None:
            user = sessions[int(r.random() * n_sessions)]
            product = PRODUCTS[int(r.random() * len(PRODUCTS))]
            text = add(user, product, 1 + int(r.random() * 10))
            out.append(new(LogLine, (ts, pod, container, app, text)))

        return render_add
    called = T("ca.empty") if op == "EmptyCart" else T("ca.get")

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        user = sessions[int(r.random() * n_sessions)]
        out.append(new(LogLine, (ts, pod, container, app, called(user))))

    return render


def error_renderer(logger: PodIdentity, callee: str, kind: str) -> tuple[int, Render] | None:
    """(lines, renderer) for a failed call ``logger``'s service made to ``callee``.

    Only three services log a failed call: checkout when the confirmation e-mail fails (a
    warning, L274), recommendationservice through grpcio (its handler has no try/except,
    so the server logs the exception with its traceback), and cartservice through
    grpc-dotnet (the RpcException it throws on a Redis failure is logged at Information).
    """
    if logger.app == "checkoutservice" and callee == "emailservice":
        text = go_client_error(kind, callee)
        user = f'"{fake_email(random.Random(logger.pod))}"'
        line = go_line("warning", T("co.email_failed")(user, text))
        return 1, _static(logger, [(line, "go")])
    if logger.app == "recommendationservice":
        lines = _traceback(kind, callee)
        return len(lines), _static(logger, [(line, "plain") for line in lines])
    if logger.app == "cartservice":
        detail = cart_storage_detail(kind)
        body = "      " + T("dotnet.rpc_error")("FailedPrecondition", detail)
        return 3, _cart_error(logger, body)
    return None


def _cart_error(logger: PodIdentity, body: str) -> Render:
    pod, container, app = logger.pod, logger.container, logger.app
    sessions = logger.sessions
    category = T("dotnet.category")()

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        user = sessions[int(r.random() * len(sessions))]
        t = ts + 0.004
        out += (
            new(LogLine, (ts, pod, container, app, T("ca.get")(user))),
            new(LogLine, (t, pod, container, app, category)),
            new(LogLine, (t, pod, container, app, body)),
        )

    return render


_PY = "/usr/local/lib/python3.14/site-packages/grpc/"
"""grpcio's location in recommendationservice's image (python:3.14-alpine, Dockerfile)."""


def _traceback(kind: str, callee: str) -> list[str]:
    """What grpcio's server prints (through ``logging.exception`` with no handler set up,
    so Python's last-resort handler: the bare message, then the traceback) when
    ``ListRecommendations`` raises because its catalog call failed."""
    error = python_inactive(kind, callee)
    frame = T("py.frame")
    text = "\n".join(
        (
            T("grpcio.exception")(error),
            T("py.traceback")(),
            frame(_PY + "_server.py", 610, "_call_behavior"),
            T("grpcio.frame_behavior")(),
            frame("/recommendationservice/recommendation_server.py", 73, "ListRecommendations"),
            T("re.frame_call")(),
            frame(_PY + "_interceptor.py", 277, "__call__"),
            T("grpcio.frame_interceptor")(),
            frame(_PY + "_channel.py", 1181, "__call__"),
            T("grpcio.frame_call")(),
            frame(_PY + "_channel.py", 1006, "_end_unary_response_blocking"),
            T("grpcio.frame_raise")(),
            T("grpcio.raised")(error),
        )
    )
    return text.split("\n")


def startup_lines(logger: PodIdentity, ts: float, out: list[LogLine]) -> None:
    """What the container prints when it starts (its v0.10.6 banner, in order)."""
    app, pod, port = logger.app, logger.pod, CONTAINER_PORTS.get(logger.app, 0)
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
            line = java_line("INFO", text, thread=thread, thread_id=thread_id) % (
                sec,
                int((t - sec) * 1e9),
                iso_millis(t),
            )
        elif style.startswith("redis"):
            role, level = style[-2], style[-1]
            line = f"1:{role} {redis_time(t)} {level} {text}"
        elif style == "locust":
            line = f"[{locust_time(t)}] {pod}/INFO/locust.main: {text}"
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
    if app == "redis-cart":
        return [
            ("redis-C*", T("rd.banner")()),
            ("redis-C#", T("rd.no_config")()),
            ("redis-M*", T("rd.clock")()),
            ("redis-M*", T("rd.mode")()),
            ("redis-M*", T("rd.init")()),
            ("redis-M*", T("rd.ready")()),
        ]
    if app == logger.topology.load_generator:
        return [("locust", T("lo.starting")("2.43.0")), ("locust", T("lo.no_limit")())]
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


_NAME_W = 76
"""Locust's name column without a TTY: STATS_NAME_WIDTH 80 - 8 + 4 (stats.py L39, L566)."""
_HEADER = LOCUST_HEADER
_SEP = "|".join("-" * w for w in (8, _NAME_W, 7, 13, 7, 7, 7, 7, 8, 11))


def locust_table(
    logger: PodIdentity, scene: Scene, ticks: list[float], started: float, out: list[LogLine]
) -> None:
    """Locust's periodic console stats table at ``ticks`` (``stats_printer``: every 2 s in
    headless mode, stats.py L893-901). The error report is printed only at shutdown
    (main.py L646-648), so it never appears here.

    Counters are cumulative since the load generator started; failures are counted from
    the start of the disturbance now acting (the simulator keeps no request history)."""
    rows: list[tuple[str, str, float, float, float]] = []
    for route in logger.topology.routes:
        view = scene.routes.get(route.scope)
        if view is None:
            continue
        latency = logger.route_ms.get(route.scope, 20.0) + view.extra_ms
        if route.path.endswith("*"):
            for product in PRODUCTS:
                name = route.path[:-1] + product
                rows.append((route.method, name, view.rate / len(PRODUCTS), view.fail, latency))
        else:
            rows.append((route.method, route.path, view.rate, view.fail, latency))
    rows.sort(key=lambda row: (row[1], row[0]))  # stats.entries sorted by (name, method)
    pod, container, app = logger.pod, logger.container, logger.app
    rate_all = sum(r[2] for r in rows)
    # The Aggregated row's current rates are the totals' (StatsEntry of the total, fed every
    # request), so its failures/s is the sum of the routes' now, not a cumulative ratio.
    fail_now = sum(r[2] * r[3] for r in rows) / rate_all if rate_all else 0.0
    # Per route, only the counters change from tick to tick: the row's ends are made once.
    fixed = [
        (rate, rate * fail, latency, *_row_ends(method, name, latency, rate, fail))
        for method, name, rate, fail, latency in rows
    ]
    for ts in ticks:
        elapsed = max(1.0, ts - started)
        since = scene.disturbed_since
        failing_for = 0.0 if since is None else max(0.0, ts - since)
        text = [_HEADER, _SEP]
        total_reqs = total_fails = 0
        weighted = 0.0
        for rate, rate_fail, latency, prefix, suffix in fixed:
            reqs = int(rate * elapsed)
            fails = min(reqs, int(rate_fail * failing_for))
            total_reqs += reqs
            total_fails += fails
            weighted += latency * reqs
            text.append(f"{prefix}{reqs:>7d} {_fails(fails, reqs)}{suffix}")
        text.append(_SEP)
        avg = weighted / total_reqs if total_reqs else 0.0
        prefix, suffix = _row_ends("", "Aggregated", avg, rate_all, fail_now)
        text.append(f"{prefix}{total_reqs:>7d} {_fails(total_fails, total_reqs)}{suffix}")
        text.append("")
        out += [new(LogLine, (ts, pod, container, app, line)) for line in text]


def _fails(fails: int, reqs: int) -> str:
    """Locust's ``# fails`` cell: ``"%d(%.2f%%)"`` right-aligned in 12 (stats.py L572)."""
    pct = 100.0 * fails / reqs if reqs else 0.0
    return f"{f'{fails}({pct:.2f}%)':>12}"


_PREFIX: dict[tuple[str, str], str] = {}
_SUFFIX: dict[tuple[int, float, float], str] = {}


def _row_ends(method: str, name: str, latency: float, rate: float, fail: float) -> tuple[str, str]:
    """The parts of a stats row around its counters: name columns, latency and rate columns
    (``StatsEntry.to_string``, stats.py L562-579)."""
    prefix = _PREFIX.get((method, name))
    if prefix is None:
        kind = f"{method} " if method else ""
        prefix = _PREFIX[(method, name)] = f"{kind:<8} {name:<{_NAME_W}} "
    lat = int(latency)
    key = (lat, round(rate, 2), round(rate * fail, 2))
    suffix = _SUFFIX.get(key)
    if suffix is None:
        if len(_SUFFIX) > 4096:
            _SUFFIX.clear()
        low = max(1, lat // 3)
        suffix = _SUFFIX[key] = (
            f" |{lat:>7d} {low:>7d} {lat * 4:>7d}{lat:>7d} | {key[1]:>7.2f} {key[2]:>11.2f}"
        )
    return prefix, suffix
