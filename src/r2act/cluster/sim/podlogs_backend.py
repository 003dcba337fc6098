"""Backend, start-up and load-generator lines (the frontend's are in ``podlogs``).

Messages follow what each Online Boutique service prints per call (currency's pino
"conversion request successful", checkout's "[PlaceOrder] ...", cartservice's
"GetCartAsync called with ...", ...) and what its client libraries print when a call
fails (Go gRPC status text, grpcio's ``_InactiveRpcError``, StackExchange.Redis exceptions
through ASP.NET's console logger).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import TYPE_CHECKING

from r2act.cluster.sim.logformats import (
    CONTEXT_WORDS,
    CURRENCIES,
    PRODUCTS,
    STARTUP,
    V,
    cart_exception,
    go_line,
    grpc_error,
    holes,
    iso_millis,
    java_line,
    locust_time,
    pino_line,
    python_grpc_error,
    python_line,
    q,
    redis_time,
    rfc3339nano,
    uuid_text,
)
from r2act.cluster.sim.scene import Scene
from r2act.schema import LogLine

if TYPE_CHECKING:
    from r2act.cluster.sim.podlogs import PodLogger, Render

new = tuple.__new__


def _static(logger: PodLogger, lines: list[tuple[str, str]]) -> Render:
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
    "python": lambda template, t: template % t,
    "java": _java,
    "plain": lambda template, t: template,
}
"""Timestamp fillers by format: each template leaves the time slot(s) of its format open."""


def served_renderer(logger: PodLogger, op: str) -> tuple[int, Render] | None:
    """(lines, renderer) for one successful call a service handled; None when it logs nothing."""
    app, pod = logger.app, logger.pod
    if app == "currencyservice":
        name = "currencyservice-server"
        if op == "Convert":
            lines = [
                (pino_line("info", pod, name, "received conversion request"), "pino"),
                (pino_line("info", pod, name, "conversion request successful"), "pino"),
            ]
        else:
            lines = [(pino_line("info", pod, name, "Getting supported currencies..."), "pino")]
        return len(lines), _static(logger, lines)
    if app == "paymentservice":
        name = "paymentservice-server"
        return 2, _payment(logger, name)
    if app == "emailservice":
        msg = "A request to send order confirmation email to someone@example.com has been received."
        return 1, _static(logger, [(python_line("INFO", "emailservice-server", msg), "python")])
    if app == "recommendationservice":
        return 1, _recommend(logger)
    if app == "shippingservice":
        return 2, _static(
            logger,
            [
                (go_line("info", f"[{op}] received request"), "go"),
                (go_line("info", f"[{op}] completed request"), "go"),
            ],
        )
    if app == "checkoutservice":
        return 3, _checkout(logger)
    if app == "adservice":
        return 1, _ads(logger)
    if app == "cartservice":
        return 1, _cart(logger, op)
    return None


def _payment(logger: PodLogger, name: str) -> Render:
    invoked = holes(
        pino_line("info", logger.pod, name, f"PaymentService#Charge invoked with request {V}")
    )
    done = holes(
        pino_line("info", logger.pod, name, f"Transaction processed: visa ending 0454 Amount: {V}")
    )
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        units, cents = 10 + int(r.random() * 390), int(r.random() * 100)
        request = (
            f'{{\\"amount\\":{{\\"currency_code\\":\\"USD\\",\\"units\\":\\"{units}\\",'
            f'\\"nanos\\":{cents}0000000}},\\"credit_card\\":{{\\"credit_card_number\\":'
            '\\"4432-8015-6152-0454\\",\\"credit_card_cvv\\":672}}'
        )
        out.append(new(LogLine, (ts, pod, container, app, invoked % (int(ts * 1000), request))))
        t = ts + 0.001
        amount = f"USD{units}.{cents:02d}"
        out.append(new(LogLine, (t, pod, container, app, done % (int(t * 1000), amount))))

    return render


_RECOMMENDED = tuple(
    "[" + ", ".join(f"'{PRODUCTS[(i + 2 * k) % len(PRODUCTS)]}'" for k in range(5)) + "]"
    for i in range(len(PRODUCTS))
)
"""Five recommended product ids per starting product (precomputed: one index per line)."""


def _recommend(logger: PodLogger) -> Render:
    template = holes(
        python_line(
            "INFO", "recommendationservice-server", f"[Recv ListRecommendations] product_ids={V}"
        )
    )
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        first = int(r.random() * len(PRODUCTS))
        ids = _RECOMMENDED[first]
        out.append(new(LogLine, (ts, pod, container, app, template % (ts, ids))))

    return render


def _checkout(logger: PodLogger) -> Render:
    place = holes(go_line("info", f'[PlaceOrder] user_id="{V}" user_currency="{V}"'))
    paid = holes(go_line("info", f"payment went through (transaction_id: {V})"))
    sent = go_line("info", 'order confirmation email sent to "someone@example.com"')
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        user = logger.sessions[int(r.random() * len(logger.sessions))]
        currency = CURRENCIES[int(r.random() * len(CURRENCIES))]
        out.append(
            new(LogLine, (ts, pod, container, app, place % (user, currency, rfc3339nano(ts))))
        )
        t = ts + 0.02
        out.append(new(LogLine, (t, pod, container, app, paid % (uuid_text(r), rfc3339nano(t)))))
        t += 0.01
        out.append(new(LogLine, (t, pod, container, app, sent % rfc3339nano(t))))

    return render


def _ads(logger: PodLogger) -> Render:
    template = holes(java_line("INFO", f"received ad request (context_words=[{V}])"))
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        sec = int(ts)
        word = CONTEXT_WORDS[int(r.random() * len(CONTEXT_WORDS))]
        line = template % (sec, int((ts - sec) * 1e9), word, iso_millis(ts))
        out.append(new(LogLine, (ts, pod, container, app, line)))

    return render


def _cart(logger: PodLogger, op: str) -> Render:
    pod, container, app = logger.pod, logger.container, logger.app
    sessions = logger.sessions
    n_sessions = len(sessions)
    if op == "AddItem":

        def add(ts: float, r: random.Random, out: list[LogLine]) -> None:
            user = sessions[int(r.random() * n_sessions)]
            product = PRODUCTS[int(r.random() * len(PRODUCTS))]
            quantity = 1 + int(r.random() * 5)
            text = (
                f"AddItemAsync called with userId={user}, productId={product}, quantity={quantity}"
            )
            out.append(new(LogLine, (ts, pod, container, app, text)))

        return add
    method = "EmptyCartAsync" if op == "EmptyCart" else "GetCartAsync"

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        user = sessions[int(r.random() * n_sessions)]
        out.append(new(LogLine, (ts, pod, container, app, f"{method} called with userId={user}")))

    return render


def error_renderer(logger: PodLogger, callee: str, kind: str) -> tuple[int, Render] | None:
    """(lines, renderer) for a failed call ``logger``'s service made to ``callee``."""
    port = logger.ports.get(callee, 0)
    if logger.language == "csharp":
        lines = cart_exception(kind, "GetCart")
        return len(lines), _static(logger, [(line, "plain") for line in lines])
    if logger.language == "python":
        message = f"[Recv ListRecommendations] failed to call {callee}: " + python_grpc_error(
            kind, callee, port
        )
        return 1, _static(
            logger, [(python_line("ERROR", f"{logger.app}-server", message), "python")]
        )
    if logger.language == "go":
        text = grpc_error(kind, callee, port, len(callee) * 11)
        if callee == "emailservice":
            line = go_line(
                "warning", f'failed to send order confirmation to "someone@example.com": {text}'
            )
        else:
            line = go_line(
                "error", f"[PlaceOrder] failed calling {callee}", {"error": f'"{q(text)}"'}
            )
        return 1, _static(logger, [(line, "go")])
    return None


def startup_lines(logger: PodLogger, ts: float, out: list[LogLine]) -> None:
    """What the container prints when it starts."""
    for i, text in enumerate(STARTUP.get(logger.language, ())):
        t = ts + 0.01 * i
        filled = text.format(
            port=logger.port, pod=logger.pod, rtime=redis_time(t), ltime=locust_time(t)
        )
        if logger.language == "go":
            line = go_line("info", filled) % rfc3339nano(t)
        elif logger.language == "node":
            line = pino_line("info", logger.pod, f"{logger.app}-server", filled) % int(t * 1000)
        elif logger.language == "python":
            line = python_line("INFO", f"{logger.app}-server", filled) % t
        elif logger.language == "java":
            sec = int(t)
            line = java_line("INFO", filled, thread="main") % (
                sec,
                int((t - sec) * 1e9),
                iso_millis(t),
            )
        else:
            line = filled
        out.append(LogLine(t, logger.pod, logger.container, logger.app, line))


_HEADER = (
    f"{'Type':<8} {'Name':<76} {'# reqs':>7} {'# fails':>12} | {'Avg':>6} {'Min':>7} "
    f"{'Max':>7} {'Med':>6} | {'req/s':>7} {'failures/s':>11}"
)
_SEP = (
    "--------|"
    + "-" * 76
    + "|-------|-------------|-------|-------|-------|-------|--------|-----------"
)
_ERR_SEP = "------------------|" + "-" * 101


def locust_table(
    logger: PodLogger, scene: Scene, ticks: list[float], started: float, out: list[LogLine]
) -> None:
    """Locust's periodic console stats (and an error report while requests fail) at ``ticks``.

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
    failing = [
        (m, n, rate, fail, _user_error(scene, _scope(m, n), n))
        for m, n, rate, fail, _ in rows
        if fail > 0.005
    ]
    pod, container, app = logger.pod, logger.container, logger.app
    rate_all = sum(r[2] for r in rows)
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
            fails = int(rate_fail * failing_for)
            total_reqs += reqs
            total_fails += fails
            weighted += latency * reqs
            pct = 100.0 * fails / reqs if reqs else 0.0
            text.append(f"{prefix}{reqs:>7d} {fails:>5d}({pct:.2f}%){suffix}")
        text.append(_SEP)
        avg = weighted / total_reqs if total_reqs else 0.0
        fail_all = total_fails / total_reqs if total_reqs else 0.0
        text.append(
            _row(
                "",
                "Aggregated",
                reqs=total_reqs,
                fails=total_fails,
                latency=avg,
                rate=rate_all,
                fail=fail_all,
            )
        )
        text.append("")
        if failing:
            text += ["Error report", f"{'# occurrences':<18} {'Error':<101}", _ERR_SEP]
            for method, name, rate, fail, message in failing:
                count = max(1, int(rate * fail * max(1.0, failing_for)))
                text.append(f"{count:>18d}  {method} {name}: {message}")
            text += [_ERR_SEP, ""]
        out += [new(LogLine, (ts, pod, container, app, line)) for line in text]


def _scope(method: str, name: str) -> str:
    return f"{method} {'/product/*' if name.startswith('/product/') else name}"


_PREFIX: dict[tuple[str, str], str] = {}
_SUFFIX: dict[tuple[int, float, float], str] = {}


def _row(
    method: str, name: str, *, reqs: int, fails: int, latency: float, rate: float, fail: float
) -> str:
    prefix, suffix = _row_ends(method, name, latency, rate, fail)
    pct = 100.0 * fails / reqs if reqs else 0.0
    return f"{prefix}{reqs:>7d} {fails:>5d}({pct:.2f}%){suffix}"


def _row_ends(method: str, name: str, latency: float, rate: float, fail: float) -> tuple[str, str]:
    """The parts of a stats row around its counters: name columns, latency and rate columns."""
    prefix = _PREFIX.get((method, name))
    if prefix is None:
        prefix = _PREFIX[(method, name)] = f"{method:<8} {name:<76} "
    lat = int(latency)
    key = (lat, round(rate, 2), round(rate * fail, 2))
    suffix = _SUFFIX.get(key)
    if suffix is None:
        if len(_SUFFIX) > 4096:
            _SUFFIX.clear()
        low = max(1, lat // 3)
        suffix = _SUFFIX[key] = (
            f" | {lat:>6d} {low:>7d} {lat * 4:>7d} {lat:>6d} | {key[1]:>7.2f} {key[2]:>11.2f}"
        )
    return prefix, suffix


def _user_error(scene: Scene, scope: str, path: str) -> str:
    view = scene.routes.get(scope)
    if view is None:
        return "HTTPError('500 Server Error: Internal Server Error')"
    dns_share, dns_kind = view.user_dns
    if dns_share > 0:
        if dns_kind == "dns_random":
            return (
                "ConnectTimeoutError(<urllib3.connection.HTTPConnection object>, 'Connection to "
                "frontend timed out. (connect timeout=None)')"
            )
        return (
            "ConnectionError(MaxRetryError(\"HTTPConnectionPool(host='frontend', port=80): Max "
            f'retries exceeded with url: {path} (Caused by NameResolutionError(\\"Failed to '
            "resolve 'frontend' ([Errno -2] Name or service not known)\\\"))\"))"
        )
    if view.frontend_down > 0.5:
        return "ConnectionRefusedError(111, 'Connection refused')"
    if view.abort_share > 0:
        return "RemoteDisconnected('Remote end closed connection without response')"
    code = view.http_code if view.http_share > 0 and view.http_code else 500
    reason = {503: "Service Unavailable", 502: "Bad Gateway"}.get(code, "Internal Server Error")
    return f"HTTPError('{code} Server Error: {reason} for url: {path}')"
