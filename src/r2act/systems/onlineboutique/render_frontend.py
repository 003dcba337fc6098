"""The frontend's lines: each request as its middleware and handlers log it, and its probes.

The Go frontend logs through logrus (``frontend/main.go`` L95-103): the middleware's
``request started`` / ``request complete`` around every request (``middleware.go``
L71-76), each handler's own first line, a ``request error`` with the failed step's wrap
when a handler fails (``handlers.go`` L537), and a warning when recommendations or ads
fail and the page is rendered anyway (L180, L268, L530). The kubelet's HTTP probes of
``/_healthz`` go through the same middleware.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from math import exp, trunc  # trunc: int() of a float, cheaper (``logformats``)

from r2act.schema import LogLine
from r2act.systems.logformats import (
    go_line,
    q,
    rfc3339nano,
    split_slots,
    uuid1_text,
    uuid_text,
)
from r2act.systems.onlineboutique.errors import TOLERATED, frontend_error, go_client_error
from r2act.systems.onlineboutique.shop import CURRENCIES, PRODUCTS
from r2act.systems.onlineboutique.texts import T
from r2act.systems.render import Kind, PodIdentity, Render, RequestError, Sized

new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""

N_PRODUCTS = len(PRODUCTS)
N_CURRENCIES = len(CURRENCIES)
PROBE_RATE = 0.2
"""Probe requests per second on each frontend pod: readiness and liveness every 10 s (the
release manifest sets no periodSeconds on the frontend's probes; the default is 10 s)."""
STATUS = {"POST /cart": 302, "POST /setCurrency": 302, "POST /cart/empty": 302, "GET /logout": 302}
"""Routes that answer with a redirect (``frontend/handlers.go`` L236, L248, L427, L522)."""


def request_renderer(
    logger: PodIdentity,
    method: str,
    route_path: str,
    extra_ms: float,
    error: RequestError = None,
) -> Sized:
    """(lines, renderer) of one request: started, the handler's lines, complete."""
    scope = f"{method} {route_path}"
    base = logger.route_ms[scope]
    req = {
        "http.req.id": '"%(rid)s"',
        "http.req.method": f'"{method}"',
        "http.req.path": '"%(path)s"',
        "session": '"%(session)s"',
    }
    started = positional(
        go_line("debug", T("fe.request_started")(), req, "%(ts)s"), ("rid", "path", "session", "ts")
    )
    s0, s1, s2, s3, s4 = split_slots(started)
    status = 500 if error is not None else STATUS.get(scope, 200)
    complete = go_line(
        "debug",
        T("fe.request_complete")(),
        {
            **req,
            "http.resp.bytes": "%(size)d",
            "http.resp.status": str(status),
            "http.resp.took_ms": "%(took)d",
        },
        "%(ts)s",
    )
    complete = positional(complete, ("rid", "path", "size", "took", "session", "ts"))
    c0, c1, c2, c3, c4, c5, c6 = split_slots(complete)
    steps = _handler_lines(scope, req, error)
    # per step: its position k among the n + 1 gaps of the request (the line's time is
    # ts + took * k / (n + 1) / 1000, the same expression and operand order as a plain
    # loop), its line's writer (None: a constant line) and its constant text
    gaps = len(steps) + 1
    node = logger.node
    plan = [
        (k, None if kind == "plain" else _STEPS[kind](template, node), template)
        for k, (kind, template) in enumerate(steps, start=1)
    ]
    sessions = logger.sessions
    pod, container, app = logger.pod, logger.container, logger.app
    n_sessions = len(sessions)
    mean = base + extra_ms
    product_page = route_path[:-1] if route_path.endswith("*") else None
    redirect, failed = status == 302, error is not None

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        rand = r.random
        append = out.append
        rid = uuid_text(r)
        path = route_path
        product = trunc(rand() * N_PRODUCTS)
        if product_page is not None:
            path = product_page + PRODUCTS[product]
        session = sessions[trunc(rand() * n_sessions)]
        # lognormal(0, 0.35) via an Irwin-Hall normal: three uniforms are cheaper
        took = mean * exp(0.7 * (rand() + rand() + rand() - 1.5))
        end = ts + took / 1000.0
        size = (
            0
            if redirect
            else (4000 + trunc(rand() * 1500) if failed else 7000 + trunc(rand() * 6000))
        )
        # the two lines of every request join their templates' constant texts around the
        # values (``split_slots``): the same text as ``%``, without rescanning the template
        line = f"{s0}{rid}{s1}{path}{s2}{session}{s3}{rfc3339nano(ts)}{s4}"
        append(new(LogLine, (ts, pod, container, app, line)))
        req = (rid, path, session)
        for k, step, line in plan:
            t = ts + took * k / gaps / 1000.0
            if step is not None:
                line = step(r, product, ts, req, rfc3339nano(t))
            append(new(LogLine, (t, pod, container, app, line)))
        line = (
            f"{c0}{rid}{c1}{path}{c2}{size}{c3}{trunc(took)}{c4}{session}{c5}{rfc3339nano(end)}{c6}"
        )
        append(new(LogLine, (end, pod, container, app, line)))

    return 2 + len(steps), render


_SLOT = re.compile(r"(?<!%)%\((\w+)\)")
"""A named ``%(name)`` slot of a template (not an escaped ``%%(``)."""


def positional(template: str, names: tuple[str, ...]) -> str:
    """``template`` with its named slots made positional, once they are checked to come in
    the order ``names`` (logrus sorts the keys, so the order is the template's, not the
    caller's): a tuple fills a template faster than a mapping, for the two lines of every
    request."""
    found = tuple(_SLOT.findall(template))
    if found != names:
        raise ValueError(f"template slots {found} are not {names}")
    return _SLOT.sub("%", template)


def _handler_lines(scope: str, req: dict[str, str], error: RequestError) -> list[tuple[str, str]]:
    """(filler, template) of what the handler logs between started and complete.

    Templates take the filler's values first, then the request fields and the time."""
    own = _HANDLER.get(scope)
    lines: list[tuple[str, str]] = []
    if own is not None:
        key, level, fields, filler = own
        lines.append((filler, go_line(level, T(key)(), {**fields, **req}, "%(ts)s")))
    if error is not None:
        kind, svc = error
        text = frontend_error(scope, svc, kind, len(svc) % N_PRODUCTS)
        fields = {"error": f'"{q(text)}"'}
        line = go_line("error", T("fe.request_error")(), {**fields, **req}, "%(ts)s")
        lines.append(("none", line))
        return lines
    if scope == "GET /":
        lines.append(("plain", T("fe.env_invalid")()))
        env = go_line("debug", T("fe.env_platform")("local"), req, "%(ts)s")
        lines.append(("none", env))
    if scope == "POST /cart/checkout":
        placed = go_line("info", T("fe.order_placed")(), {"order": '"%(order)s"', **req}, "%(ts)s")
        lines.append(("order", placed))
    return lines


def probe_kinds(logger: PodIdentity) -> tuple[Kind, ...]:
    """The kubelet's probes of ``/_healthz``, as the frontend's middleware logs them."""
    pod, container, app = logger.pod, logger.container, logger.app
    req = {
        "http.req.id": '"%(rid)s"',
        "http.req.method": '"GET"',
        "http.req.path": '"/_healthz"',
        "session": '"%(session)s"',
    }
    slots = ("rid", "session", "ts")
    started = positional(go_line("debug", T("fe.request_started")(), req, "%(ts)s"), slots)
    done = {**req, "http.resp.bytes": "2", "http.resp.status": "200", "http.resp.took_ms": "0"}
    complete = positional(go_line("debug", T("fe.request_complete")(), done, "%(ts)s"), slots)

    def probe(ts: float, r: random.Random, out: list[LogLine]) -> None:
        # the manifest sends the session cookie x-readiness-probe / x-liveness-probe
        session = "x-readiness-probe" if r.random() < 0.5 else "x-liveness-probe"
        rid = uuid_text(r)
        line = started % (rid, session, rfc3339nano(ts))
        out.append(new(LogLine, (ts, pod, container, app, line)))
        end = ts + 0.0004
        line = complete % (rid, session, rfc3339nano(end))
        out.append(new(LogLine, (end, pod, container, app, line)))

    return ((PROBE_RATE, 2, probe),)


def tolerated_renderer(logger: PodIdentity, callee: str, kind: str) -> Render | None:
    """The warning a page logs when recommendations or ads fail (and renders anyway)."""
    if callee not in TOLERATED:
        return None
    inner = go_client_error(kind, callee)
    text = T("fe.w.ads")(inner) if callee == "adservice" else inner
    req = {
        "error": f'"{q(text)}"',
        "http.req.id": '"%s"',
        "http.req.method": '"GET"',
        "http.req.path": '"%s"',
        "session": '"%s"',
    }  # positional: sorted keys put id, path, session, then the time
    line = go_line("warning", T(TOLERATED[callee])(), req)
    pages = ("/", "/product/") if callee == "adservice" else ("/cart", "/product/")
    sessions = logger.sessions
    pod, container, app = logger.pod, logger.container, logger.app

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        page = pages[trunc(r.random() * 2)]
        path = (
            page + PRODUCTS[trunc(r.random() * N_PRODUCTS)]
            if page.endswith("/") and len(page) > 1
            else page
        )
        session = sessions[trunc(r.random() * len(sessions))]
        text = line % (uuid_text(r), path, session, rfc3339nano(ts))
        out.append(new(LogLine, (ts, pod, container, app, text)))

    return render


Request = tuple[str, str, str]
"""A request's own values in every line it logs: (request id, path, session)."""
Step = Callable[[random.Random, int, float, Request, str], str]
"""A handler line's writer (made for a template and the pod's node): (generator, product
index, request time, request, line time) -> the line, drawing its own fields (if any) from
the generator."""


def _slots_of(template: str, names: tuple[str, ...]) -> list[str]:
    """The template's constant texts around its slots, once they are checked to be
    ``names`` in this order (``positional``; logrus sorts the keys, so a field's slot is
    where its key sorts, not where the handler names it)."""
    return split_slots(positional(template, names))


def _request_only(template: str, node: str) -> Step:
    a, b, c, d, e = _slots_of(template, ("rid", "path", "session", "ts"))

    def line(r: random.Random, product: int, ts: float, req: Request, stamp: str) -> str:
        rid, path, session = req
        return f"{a}{rid}{b}{path}{c}{session}{d}{stamp}{e}"

    return line


def _currency(template: str, node: str) -> Step:
    a, b, c, d, e, f = _slots_of(template, ("currency", "rid", "path", "session", "ts"))

    def line(r: random.Random, product: int, ts: float, req: Request, stamp: str) -> str:
        rid, path, session = req
        currency = CURRENCIES[trunc(r.random() * N_CURRENCIES)]
        return f"{a}{currency}{b}{rid}{c}{path}{d}{session}{e}{stamp}{f}"

    return line


def _product_currency(template: str, node: str) -> Step:
    a, b, c, d, e, f, g = _slots_of(template, ("currency", "rid", "path", "id", "session", "ts"))

    def line(r: random.Random, product: int, ts: float, req: Request, stamp: str) -> str:
        rid, path, session = req
        currency = CURRENCIES[trunc(r.random() * N_CURRENCIES)]
        return f"{a}{currency}{b}{rid}{c}{path}{d}{PRODUCTS[product]}{e}{session}{f}{stamp}{g}"

    return line


def _add(template: str, node: str) -> Step:
    names = ("rid", "path", "product", "quantity", "session", "ts")
    a, b, c, d, e, f, g = _slots_of(template, names)

    def line(r: random.Random, product: int, ts: float, req: Request, stamp: str) -> str:
        rid, path, session = req
        quantity = 1 + trunc(r.random() * 10)
        return f"{a}{rid}{b}{path}{c}{PRODUCTS[product]}{d}{quantity}{e}{session}{f}{stamp}{g}"

    return line


def _set_currency(template: str, node: str) -> Step:
    a, b, c, d, e, f, g = _slots_of(template, ("new", "old", "rid", "path", "session", "ts"))

    def line(r: random.Random, product: int, ts: float, req: Request, stamp: str) -> str:
        rid, path, session = req
        to = CURRENCIES[trunc(r.random() * N_CURRENCIES)]  # drawn first, as before
        was = CURRENCIES[trunc(r.random() * N_CURRENCIES)]
        return f"{a}{to}{b}{was}{c}{rid}{d}{path}{e}{session}{f}{stamp}{g}"

    return line


def _order(template: str, node: str) -> Step:
    a, b, c, d, e, f = _slots_of(template, ("rid", "path", "order", "session", "ts"))

    def line(r: random.Random, product: int, ts: float, req: Request, stamp: str) -> str:
        rid, path, session = req
        order = uuid1_text(r, ts, node)
        return f"{a}{rid}{b}{path}{c}{order}{d}{session}{e}{stamp}{f}"

    return line


_STEPS: dict[str, Callable[[str, str], Step]] = {
    "none": _request_only,
    "currency": _currency,
    "product": _product_currency,
    "add": _add,
    "set_currency": _set_currency,
    "order": _order,
}
"""Writers of the handlers' lines, by the names of the fields their templates hold: each
joins its template's constant texts around the request's values and its own draws (no
mapping of values to build, no ``%`` rescanning a few hundred characters per line)."""

_HANDLER: dict[str, tuple[str, str, dict[str, str], str]] = {
    "GET /": ("fe.home", "info", {"currency": '"%(currency)s"'}, "currency"),
    "GET /product/*": (
        "fe.product",
        "debug",
        {"currency": '"%(currency)s"', "id": '"%(id)s"'},
        "product",
    ),
    "POST /cart": (
        "fe.add_to_cart",
        "debug",
        {"product": '"%(product)s"', "quantity": "%(quantity)d"},
        "add",
    ),
    "GET /cart": ("fe.view_cart", "debug", {}, "none"),
    "POST /cart/checkout": ("fe.placing_order", "debug", {}, "none"),
    "POST /setCurrency": (
        "fe.set_currency",
        "debug",
        {"curr.new": '"%(new)s"', "curr.old": '"%(old)s"'},
        "set_currency",
    ),
    "POST /cart/empty": ("fe.empty_cart", "debug", {}, "none"),
    "GET /logout": ("fe.logout", "debug", {}, "none"),
}
"""Each handler's first line: (text, level, own fields, value drawer) (``handlers.go``)."""
