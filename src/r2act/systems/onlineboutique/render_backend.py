"""What each Online Boutique backend prints per call it serves and per call of its own that fails.

Messages are its texts: what each v0.10.6 service prints per call, and what its server
library prints when a handler fails (grpcio's ``Exception calling application``
traceback, grpc-dotnet's Information-level ``Error status code ... raised.``). Checkout
logs nothing when a step fails (it returns the error; only a failed confirmation e-mail is
logged), and neither do the Node and Go leaf services.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from math import trunc  # int() of a float, cheaper per call (``logformats``)

from r2act.schema import LogLine
from r2act.systems.logformats import (
    go_line,
    iso_millis,
    java_line,
    pino_line,
    python_line,
    rfc3339nano,
    split_slots,
    uuid_text,
)
from r2act.systems.onlineboutique.errors import (
    cart_storage_detail,
    go_client_error,
    python_inactive,
)
from r2act.systems.onlineboutique.shop import (
    CATEGORIES,
    CURRENCIES,
    PRODUCTS,
    fake_email,
    fake_visa,
)
from r2act.systems.onlineboutique.texts import T
from r2act.systems.render import PodIdentity, Render, Sized

new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""
AD_LOGGER = "hipstershop.AdService"
"""adservice's log4j logger (``LogManager.getLogger(AdService.class)``, ``AdService.java`` L43)."""


def _static(logger: PodIdentity, lines: list[tuple[str, str]]) -> Render:
    """A renderer for a fixed sequence of templates: (format, timestamp style)."""

    pod, container, app = logger.pod, logger.container, logger.app
    if len(lines) == 1 and lines[0][1] == "pino":
        return _pino_single(logger, lines[0][0])
    fills = [_FILLERS[style](template) for template, style in lines]
    if len(fills) == 1:
        fill = fills[0]

        def single(ts: float, r: random.Random, out: list[LogLine]) -> None:
            out.append(new(LogLine, (ts, pod, container, app, fill(ts))))

        return single
    if len(fills) == 2:  # the common case (currency, shipping): no loop
        fill0, fill1 = fills

        def pair(ts: float, r: random.Random, out: list[LogLine]) -> None:
            t = ts + 0.0007
            out += (
                new(LogLine, (ts, pod, container, app, fill0(ts))),
                new(LogLine, (t, pod, container, app, fill1(t))),
            )

        return pair

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        for i, fill in enumerate(fills):
            t = ts + i * 0.0007
            out.append(new(LogLine, (t, pod, container, app, fill(t))))

    return render


def _pino_single(logger: PodIdentity, template: str) -> Render:
    """A one-line pino renderer with its time filled in place: the most frequent backend
    line (currencyservice's, one per conversion), so it saves the filler's call."""
    pod, container, app = logger.pod, logger.container, logger.app
    head, tail = _parts(template, 1)

    def single(ts: float, r: random.Random, out: list[LogLine]) -> None:
        out.append(new(LogLine, (ts, pod, container, app, f"{head}{trunc(ts * 1000)}{tail}")))

    return single


def _parts(template: str, slots: int) -> list[str]:
    """The template's constant texts around its ``slots`` slots (``split_slots``)."""
    parts = split_slots(template)
    if len(parts) != slots + 1:
        raise ValueError(f"{template!r} has {len(parts) - 1} slots, not {slots}")
    return parts


def _go(template: str) -> Callable[[float], str]:
    head, tail = _parts(template, 1)
    return lambda t: f"{head}{rfc3339nano(t)}{tail}"


def _pino(template: str) -> Callable[[float], str]:
    head, tail = _parts(template, 1)
    return lambda t: f"{head}{trunc(t * 1000)}{tail}"


def _python(template: str) -> Callable[[float], str]:
    head, tail = _parts(template, 1)
    return lambda t: f"{head}{t!r}{tail}"


def _java(template: str) -> Callable[[float], str]:
    a, b, c, d = _parts(template, 3)

    def fill(t: float) -> str:
        sec = trunc(t)
        return f"{a}{sec}{b}{trunc((t - sec) * 1e9)}{c}{iso_millis(t)}{d}"

    return fill


def _plain(template: str) -> Callable[[float], str]:
    return lambda t: template


_FILLERS: dict[str, Callable[[str], Callable[[float], str]]] = {
    "go": _go,
    "pino": _pino,
    "python": _python,
    "java": _java,
    "plain": _plain,
}
"""Timestamp fillers by format: each template leaves the time slot(s) of its format open
(``%s``, ``%d``, ``%r``, as ``logformats`` builds them); a filler joins the template's
constant texts around the time instead of ``%``-formatting it (``split_slots``)."""


def served_renderer(logger: PodIdentity, op: str) -> Sized | None:
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
        currency = CURRENCIES[trunc(rand() * len(CURRENCIES))]
        units, nanos = 10 + trunc(rand() * 390), trunc(rand() * 100) * 10_000_000
        card = fake_visa(r)
        cvv, year, month = (
            100 + trunc(rand() * 900),
            2027 + trunc(rand() * 70),
            1 + trunc(rand() * 12),
        )
        request = (
            f'{{\\"amount\\":{{\\"currency_code\\":\\"{currency}\\",\\"units\\":\\"{units}\\",'
            f'\\"nanos\\":{nanos}}},\\"credit_card\\":{{\\"credit_card_number\\":'
            f'\\"{card}\\",\\"credit_card_cvv\\":{cvv},\\"credit_card_expiration_year\\":{year},'
            f'\\"credit_card_expiration_month\\":{month}}}}}'
        )
        out.append(new(LogLine, (ts, pod, container, app, invoked % (trunc(ts * 1000), request))))
        t = ts + 0.001
        line = done % (trunc(t * 1000), "visa", card[-4:], currency, units, nanos)
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
    head, middle, tail = _parts(template, 2)

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        ids = pool[trunc(r.random() * 64)]
        out.append(new(LogLine, (ts, pod, container, app, f"{head}{ts!r}{middle}{ids}{tail}")))

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
        user = logger.sessions[trunc(r.random() * len(logger.sessions))]
        currency = CURRENCIES[trunc(r.random() * len(CURRENCIES))]
        line = place % (f'\\"{user}\\"', f'\\"{currency}\\"', rfc3339nano(ts))
        out.append(new(LogLine, (ts, pod, container, app, line)))
        t = ts + 0.02
        out.append(new(LogLine, (t, pod, container, app, paid % (uuid_text(r), rfc3339nano(t)))))
        t += 0.01
        email = f'\\"{fake_email(r)}\\"'
        out.append(new(LogLine, (t, pod, container, app, sent % (email, rfc3339nano(t)))))

    return render


def _ads(logger: PodIdentity) -> Render:
    template = java_line("INFO", T("ad.request")("\x00"), AD_LOGGER).replace("\\u0000", "%s")
    pod, container, app = logger.pod, logger.container, logger.app
    words = ("[]", *CATEGORIES)
    a, b, c, d, e = _parts(template, 4)

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        sec = trunc(ts)
        word = words[trunc(r.random() * len(words))]
        line = f"{a}{sec}{b}{trunc((ts - sec) * 1e9)}{c}{word}{d}{iso_millis(ts)}{e}"
        out.append(new(LogLine, (ts, pod, container, app, line)))

    return render


def _cart(logger: PodIdentity, op: str) -> Render:
    pod, container, app = logger.pod, logger.container, logger.app
    sessions = logger.sessions
    n_sessions = len(sessions)
    if op == "AddItem":
        add = T("ca.add")

        def render_add(ts: float, r: random.Random, out: list[LogLine]) -> None:
            user = sessions[trunc(r.random() * n_sessions)]
            product = PRODUCTS[trunc(r.random() * len(PRODUCTS))]
            text = add(user, product, 1 + trunc(r.random() * 10))
            out.append(new(LogLine, (ts, pod, container, app, text)))

        return render_add
    called = T("ca.empty") if op == "EmptyCart" else T("ca.get")
    texts = [called(user) for user in sessions]  # written once: the user is all that varies

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        out.append(new(LogLine, (ts, pod, container, app, texts[trunc(r.random() * n_sessions)])))

    return render


def error_renderer(logger: PodIdentity, callee: str, kind: str) -> Sized | None:
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
        user = sessions[trunc(r.random() * len(sessions))]
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
