"""What each Astronomy Shop service logs per occurrence, before any format: its ``Said`` lines.

A service's code writes one message per log call; the same call may reach two places (its
stdout and the collector, ``logsinks``), each framing it its own way (``render_backend``,
``render_otlp``). So what is said is decided once, here: per (service, operation) a
``Speech`` draws the occurrence's values and returns its log calls in order, each with
its level, its message as printed, the body an OTLP exporter sends (the message template,
for .NET) and its structured attributes. Both framings draw the values from the same
generator (``render_draw.occurrence``), so a call's stdout line and its collector copy
agree.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from r2act.systems.astronomyshop.errors import (
    GRPC_CODES,
    caught_flag,
    flag_of,
    go_http_error,
    openai_status_error,
)
from r2act.systems.astronomyshop.logsinks import COLLECTOR, STDOUT
from r2act.systems.astronomyshop.render_collector import d, i, s
from r2act.systems.astronomyshop.render_data import (
    AD_KEYS,
    CHECKOUT_NODE,
    LOCUST_NODE,
    PEOPLE,
    PRODUCTS,
)
from r2act.systems.astronomyshop.render_draw import Sample
from r2act.systems.astronomyshop.render_formats import pod_ip
from r2act.systems.astronomyshop.texts import T
from r2act.systems.logformats import uuid1_text, uuid_text


@dataclass(frozen=True)
class Said:
    """One log call of one occurrence."""

    level: str
    """``INFO``, ``WARN`` or ``ERROR``."""
    message: str
    """The message as a formatter prints it."""
    attributes: tuple[tuple[str, str], ...] = field(default=())
    """Structured fields as pdata prints them (``Str(x)``, ``Int(1)`` ...)."""
    template: str | None = None
    """The body an OTLP exporter sends when it is not the message (.NET's template)."""
    where: tuple[str, int] = ("", 0)
    """The file and line of the log call, for formats that print them (Python's
    ``%(filename)s:%(lineno)d``)."""
    only: str | None = None
    """``logsinks.STDOUT`` or ``COLLECTOR`` for a call that reaches one of a service's
    sinks only (email's ``puts`` beside its OTLP record); None: every sink it has."""


Speech = Callable[[random.Random], list[Said]]
"""Draws one occurrence's values and returns its log calls, in order."""


def _user(r: random.Random, sessions: Sequence[str]) -> str:
    """A load-generator user's session id: the frontend sends it as the user id."""
    return sessions[int(r.random() * len(sessions))] if sessions else uuid_text(r)


def _person(r: random.Random) -> tuple[str, ...]:
    return PEOPLE[int(r.random() * len(PEOPLE))]


def _email(r: random.Random) -> str:
    return _person(r)[0]


def _checkout(r: random.Random) -> list[Said]:
    email, currency = _person(r)[:2]
    when = 1.7e9 + r.random() * 1e8  # a v1 UUID's time: only its digits are shown
    user, order = uuid1_text(r, when, LOCUST_NODE), uuid1_text(r, when, CHECKOUT_NODE)
    tracking = uuid_text(r)
    items = 1 + int(r.random() * 3)
    shipping = round(8.99 * items, 2)
    total = round(shipping + items * (10 + r.random() * 300), 2)
    offset, duration = int(r.random() * 10_000), f"{1 + r.random() * 4:.6f}ms"
    return [
        Said(
            "INFO", T("as.co.place_order")(), (("user_id", s(user)), ("user_currency", s(currency)))
        ),
        Said("INFO", T("as.co.payment_ok")(), (("transaction_id", s(uuid_text(r))),)),
        Said(
            "INFO",
            T("as.co.order_placed")(),
            (
                ("app.order.id", s(order)),
                ("app.shipping.amount", d(shipping)),
                ("app.order.amount", d(total)),
                ("app.order.items.count", i(items)),
                ("app.shipping.tracking.id", s(tracking)),
            ),
        ),
        Said("INFO", T("as.co.email_sent")(f'"{email}"')),
        Said("INFO", T("as.co.post_processor")()),
        Said("INFO", T("as.co.kafka_written")(offset, duration)),
    ]


def _product(r: random.Random) -> list[Said]:
    pid, name = PRODUCTS[int(r.random() * len(PRODUCTS))]
    attrs = (("app.product.name", s(name)), ("app.product.id", s(pid)))
    return [Said("INFO", T("as.pc.found")(), attrs)]


def _products(r: random.Random) -> list[Said]:
    n = len(PRODUCTS)
    return [Said("INFO", T("as.pc.loaded")(n), (("products", i(n)),))]


def _cart(op: str, sessions: Sequence[str]) -> Speech:
    def speech(r: random.Random) -> list[Said]:
        user = _user(r, sessions)
        if op == "AddItem":
            pid = PRODUCTS[int(r.random() * len(PRODUCTS))][0]
            quantity = 1 + int(r.random() * 10)
            message = T("as.ca.add")(user, pid, quantity)
            attrs = (("userId", s(user)), ("productId", s(pid)), ("quantity", i(quantity)))
            return [Said("INFO", message, attrs, T("as.ca.add_format")())]
        key = "as.ca.empty" if op == "EmptyCart" else "as.ca.get"
        return [Said("INFO", T(key)(user), (("userId", s(user)),), T(key + "_format")())]

    return speech


def _currency(op: str) -> Speech:
    said = [Said("INFO", T("as.cu.converted")(op) if op == "Convert" else T("as.cu.supported")(op))]
    return lambda r: said


def _payment(r: random.Random) -> list[Said]:
    currency, last4 = _person(r)[1:3]
    units, nanos = 10 + int(r.random() * 390), int(r.random() * 100) * 10_000_000
    amount = f'{{"units":{units},"nanos":{nanos},"currencyCode":"{currency}"}}'
    return [
        Said("INFO", T("as.pa.received")(), (("request", 'Map({"amount":' + amount + "})"),)),
        Said(
            "INFO",
            T("as.pa.complete")(),
            (
                ("transactionId", s(uuid_text(r))),
                ("cardType", s("visa")),
                ("lastFourDigits", s(last4)),
                ("amount", f"Map({amount})"),
                ("loyalty_level", s(("platinum", "gold", "silver", "bronze")[int(r.random() * 4)])),
            ),
        ),
    ]


def _email_sent(r: random.Random) -> list[Said]:
    to = _email(r)
    return [
        Said("INFO", T("as.em.sent")(), (("app.email.recipient", s(to)),), only=COLLECTOR),
        Said("INFO", T("as.em.sent_to")(to), only=STDOUT),
        Said("INFO", _access(r), only=STDOUT),
    ]


def _access(r: random.Random) -> str:
    """Sinatra's CommonLogger line for the request (classic Sinatra logs by default, on
    ``rack.errors``: Puma's stderr), after the handler returned: no body (``send_email``
    returns the ``puts``' nil), so the length prints ``-``. The time is the request's
    end, drawn as the handler's duration; the client is checkout's pod (its address is
    the engine's rule for a pod named after its deployment: an approximation)."""
    took = f"{0.002 + r.random() * 0.01:.4f}"
    return T("as.rack.access")(
        pod_ip("checkout"),
        "-",
        "%(time)s",
        "POST",
        "/send_order_confirmation",
        "",
        "",
        "HTTP/1.1",
        200,
        "-",
        took,
    )


def _quote(r: random.Random) -> list[Said]:
    items = 1 + int(r.random() * 3)
    dollars, cents = divmod(round(899 * items), 100)
    return [
        Said(
            "INFO",
            T("as.sh.requesting")(),
            (
                ("name", s("RequestingQuote")),
                ("quote_service_addr", s("http://quote:8080/getquote")),
            ),
        ),
        Said(
            "INFO",
            T("as.sh.quote")(),
            (
                ("name", s("SendingQuoteValue")),
                ("quote.dollars", i(dollars)),
                ("quote.cents", i(cents)),
            ),
        ),
    ]


def _ship(r: random.Random) -> list[Said]:
    attrs = (("name", s("CreatingTrackingId")), ("tracking_id", s(uuid_text(r))))
    return [Said("INFO", T("as.sh.tracking")(), attrs)]


def _calculated(r: random.Random) -> list[Said]:
    total = round(8.99 * (1 + int(r.random() * 3)), 2)
    return [Said("INFO", T("as.qu.calculated")(), (("context", f'Map({{"total":{total}}})'),))]


def _recommend(r: random.Random) -> list[Said]:
    ids = [p for p, _ in PRODUCTS]
    r.shuffle(ids)
    listed = "[" + ", ".join(f"'{p}'" for p in ids[:5]) + "]"
    return [Said("INFO", T("as.re.list")(listed), where=("recommendation_server.py", 47))]


def _ads(r: random.Random) -> list[Said]:
    pick = int(r.random() * (len(AD_KEYS) + 1))
    if pick == len(AD_KEYS):
        return [Said("INFO", T("as.ad.random")())]
    return [Said("INFO", T("as.ad.targeted")(f"[{AD_KEYS[pick]}]"))]


def _money(currency: str, amount: float) -> str:
    units, cents = divmod(round(amount * 100), 100)
    return f'{{ "currencyCode": "{currency}", "units": "{units}", "nanos": {cents * 10_000_000} }}'


def _order_result(r: random.Random) -> str:
    """An ``OrderResult`` as protobuf's C# ``ToString()`` prints it (its JSON formatter's
    diagnostic form: int64 as strings, a space inside each brace)."""
    person = _person(r)
    currency = person[1]
    street, city, state, country, zip_code = person[3:]
    items = ", ".join(
        f'{{ "item": {{ "productId": "{PRODUCTS[int(r.random() * len(PRODUCTS))][0]}", '
        f'"quantity": {1 + int(r.random() * 10)} }}, '
        f'"cost": {_money(currency, 10 + r.random() * 300)} }}'
        for _ in range(1 + int(r.random() * 3))
    )
    address = (
        f'{{ "streetAddress": "{street}", "city": "{city}", "state": "{state}", '
        f'"country": "{country}", "zipCode": "{zip_code}" }}'
    )
    return (
        f'{{ "orderId": "{uuid1_text(r, 1.7e9 + r.random() * 1e8, CHECKOUT_NODE)}", '
        f'"shippingTrackingId": "{uuid_text(r)}", "shippingCost": {_money(currency, 8.99)}, '
        f'"shippingAddress": {address}, "items": [ {items} ] }}'
    )


def _accounting(r: random.Random) -> list[Said]:
    order = _order_result(r)
    attrs = (("OrderResult", s(order)),)
    return [Said("INFO", T("as.ac.order")(order), attrs, T("as.ac.order_format")())]


def _fraud_detection() -> Speech:
    """fraud-detection counts the records it consumed since it started (``main.kt`` L53-L67):
    the count is this renderer's, one per occurrence, in the order they are rendered."""
    count = [0]

    def speech(r: random.Random) -> list[Said]:
        if not isinstance(r, Sample):
            count[0] += 1
        order = uuid1_text(r, 1.7e9 + r.random() * 1e8, CHECKOUT_NODE)
        return [Said("INFO", T("as.fd.consumed")(order, count[0]))]

    return speech


_PR = "product_reviews_server.py"
QUESTION = "Can you summarize the product reviews?"
"""The question the load generator asks the AI assistant (``locustfile.py`` L152)."""


def _reviews(op: str) -> Speech:
    """product-reviews' first line per call (``product_reviews_server.py`` L92, L104). The
    per-review lines it logs next (L127) print the reviews' own text from the database,
    which is not reproduced here."""

    def speech(r: random.Random) -> list[Said]:
        pid = PRODUCTS[int(r.random() * len(PRODUCTS))][0]
        if op == "AskProductAIAssistant":
            return [Said("INFO", T("as.pr.ask")(pid, QUESTION), where=(_PR, 104))]
        return [Said("INFO", T("as.pr.reviews")(pid), where=(_PR, 92))]

    return speech


def served_speech(app: str, op: str, sessions: Sequence[str] = ()) -> Speech | None:
    """What ``app`` logs for one call of ``op`` it served; None when it logs nothing."""
    fixed: dict[str, Speech] = {
        "checkout": _checkout,
        "payment": _payment,
        "email": _email_sent,
        "quote": _calculated,
        "recommendation": _recommend,
        "ad": _ads,
    }
    if app in fixed:
        return fixed[app]
    if app == "product-catalog":
        return _products if op == "ListProducts" else _product
    if app == "cart":
        return _cart(op, sessions)
    if app == "currency":
        return _currency(op)
    if app == "shipping":
        return _ship if "ship" in op.lower() else _quote
    if app == "product-reviews":
        return _reviews(op)
    if app == "accounting":
        return _accounting
    if app == "fraud-detection":
        return _fraud_detection()
    return None


def _flag_failed(app: str, kind: str) -> Speech | None:
    """What ``app``'s handler logs when its own code failed the call with a flag's error
    (the engine asks with ``callee == app``); None where the code path logs nothing
    (product-catalog's branch only sets the span's status, ``main.go`` L439-L443)."""
    flag = flag_of(kind)
    status = flag.status if flag is not None else None
    if status is None:
        return None
    if app == "ad":  # AdService.java L177/L185 before the throw, L222 in the catch
        name = GRPC_CODES[status.code][1]
        described = status.message or "null"
        warn = Said("WARN", T("as.ad.e.failed")(T("as.grpcjava.status")(name, described, "null")))
        return lambda r: [*_ads(r), warn]
    if app == "cart":  # CartService.cs L85 -> ValkeyCartStore.cs L190, L98
        empty = _cart("EmptyCart", ())
        failed = Said("ERROR", T("as.ca.e.not_connected")())
        return lambda r: [*empty(r), failed]
    if app == "recommendation":  # recommendation_server.py L83, before the failing L84
        said = [Said("INFO", T("as.re.cache_miss")(), where=("recommendation_server.py", 83))]
        return lambda r: said
    return None


def failed_speech(app: str, callee: str, kind: str) -> Speech | None:
    """What ``app`` logs itself when its call to ``callee`` failed with ``kind`` (the calls a
    handler tolerates or a server library reports); None when it logs nothing. A call its
    own code failed with a flag's error comes with ``callee == app``."""
    if callee == app:
        return _flag_failed(app, kind)
    if kind == "flag_caught":
        flag = caught_flag(app, callee)
        if flag is None or flag.status is None or app != "product-reviews":
            return None
        # product_reviews_server.py L194-L195: the OpenAI client's error, caught and logged.
        caught = Said(
            "ERROR",
            T("as.pr.e.caught")(openai_status_error(flag.status)),
            where=(_PR, 195),
        )
        return lambda r: [caught]
    if app == "checkout" and callee == "email":
        cause = T("as.co.e.post_email")(go_http_error(kind, callee))

        def warn(r: random.Random) -> list[Said]:
            return [Said("WARN", T("as.co.email_failed")(f'"{_email(r)}"', cause))]

        return warn
    return None
