"""The frontend's handler lines, written by joining, are what ``%`` makes of their templates.

A handler line's writer (``render_frontend._STEPS``) joins its template's constant texts
around the request's values and its own draws, in the slot order it was checked for; the
plain path fills the named template from a mapping. These tests hold every writer, and
whole requests of every route, to the plain path's text and draws.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from r2act.cluster.sim.podlogs import PodLogger
from r2act.schema import LogLine
from r2act.systems import ONLINE_BOUTIQUE
from r2act.systems.logformats import go_line, rfc3339nano, uuid1_text, uuid_text
from r2act.systems.onlineboutique import render_frontend as fe
from r2act.systems.onlineboutique.shop import CURRENCIES, PRODUCTS

TS = 1_767_225_608.140379
REQ = {
    "http.req.id": '"%(rid)s"',
    "http.req.method": '"GET"',
    "http.req.path": '"%(path)s"',
    "session": '"%(session)s"',
}
NODE = "0a1b2c3d4e5f"


def _pick(r: random.Random, items: tuple[str, ...] | list[str]) -> str:
    return items[int(r.random() * len(items))]


# the plain path's draws, per kind: the values its template takes besides the request's
PLAIN: dict[str, Callable[[random.Random, int], dict[str, object]]] = {
    "none": lambda r, product: {},
    "currency": lambda r, product: {"currency": _pick(r, CURRENCIES)},
    "product": lambda r, product: {"currency": _pick(r, CURRENCIES), "id": PRODUCTS[product]},
    "add": lambda r, product: {"product": PRODUCTS[product], "quantity": 1 + int(r.random() * 10)},
    "set_currency": lambda r, product: {"new": _pick(r, CURRENCIES), "old": _pick(r, CURRENCIES)},
    "order": lambda r, product: {"order": uuid1_text(r, TS, NODE)},
}
FIELDS = {
    "none": {},
    "currency": {"currency": '"%(currency)s"'},
    "product": {"currency": '"%(currency)s"', "id": '"%(id)s"'},
    "add": {"product": '"%(product)s"', "quantity": "%(quantity)d"},
    "set_currency": {"curr.new": '"%(new)s"', "curr.old": '"%(old)s"'},
    "order": {"order": '"%(order)s"'},
}


@pytest.mark.parametrize("kind", sorted(fe._STEPS))
@pytest.mark.parametrize("message", ["serving the page", "100% sure, 50%% off, %(x)s, %s"])
def test_every_writer_is_the_named_template_filled(kind: str, message: str) -> None:
    assert set(fe._STEPS) == set(PLAIN)
    template = go_line("debug", message, {**FIELDS[kind], **REQ}, "%(ts)s")
    write = fe._STEPS[kind](template, NODE)
    for seed in range(30):
        r, plain_r = random.Random(seed), random.Random(seed)
        product = seed % len(PRODUCTS)
        # values with a ``%`` in them stay as they are (neither path reads them as a format)
        req = (uuid_text(random.Random(-seed)), f"/p%s{seed}", f"s%(ts)s-{seed}")
        stamp = rfc3339nano(TS + seed / 7)
        values = {"rid": req[0], "path": req[1], "session": req[2], "ts": stamp}
        values |= PLAIN[kind](plain_r, product)
        assert write(r, product, TS, req, stamp) == template % values
        assert r.random() == plain_r.random()  # the same draws, no more, no fewer


def test_a_writer_refuses_a_template_of_another_slot_order() -> None:
    template = go_line("debug", "x", {**FIELDS["add"], **REQ}, "%(ts)s")
    with pytest.raises(ValueError, match="template slots"):
        fe._STEPS["currency"](template, NODE)


def _plain_handler_lines(
    logger: PodLogger, route: tuple[str, str], error: tuple[str, str] | None, ts: float, seed: int
) -> tuple[list[str], float]:
    """A request's handler lines as its named templates filled from a mapping make them,
    at the times the request's own lines say (``times``), and the draw that follows."""
    method, path = route
    scope = f"{method} {path}"
    steps = fe._handler_lines(scope, {**REQ, "http.req.method": f'"{method}"'}, error)
    r = random.Random(seed)
    rid = uuid_text(r)
    product = int(r.random() * len(PRODUCTS))
    page = path[:-1] + PRODUCTS[product] if path.endswith("*") else path
    session = logger.sessions[int(r.random() * len(logger.sessions))]
    uniforms = [r.random() for _ in range(3)]  # the time it took
    mean = logger.route_ms[scope] + 4.0
    took_ms = mean * fe.exp(0.7 * (uniforms[0] + uniforms[1] + uniforms[2] - 1.5))
    if scope not in fe.STATUS or error is not None:
        r.random()  # the response's size
    lines: list[str] = []
    for k, (kind, template) in enumerate(steps, start=1):
        if kind == "plain":
            lines.append(template)
            continue
        t = ts + took_ms * k / (len(steps) + 1) / 1000.0
        values: dict[str, object] = {"rid": rid, "path": page, "session": session}
        values["ts"] = rfc3339nano(t)
        if kind == "order":
            values["order"] = uuid1_text(r, ts, logger.node)
        else:
            values |= PLAIN[kind](r, product)
        lines.append(template % values)
    return lines, r.random()


@pytest.mark.parametrize(
    "error", [None, ("unavailable", "productcatalogservice"), ("unavailable", "cartservice")]
)
def test_whole_requests_of_every_route_are_the_plain_paths(error: tuple[str, str] | None) -> None:
    logger = PodLogger(
        ONLINE_BOUTIQUE, "frontend-7d9c-x2b4q", "frontend", "server", seed=11, users=8
    )
    for route in ONLINE_BOUTIQUE.routes:
        _, written = fe.request_renderer(logger, route.method, route.path, 4.0, error)
        for seed in range(20):
            fast: list[LogLine] = []
            r = random.Random(seed)
            written(TS + seed, r, fast)
            plain, after = _plain_handler_lines(
                logger, (route.method, route.path), error, TS + seed, seed
            )
            assert [x.line for x in fast[1:-1]] == plain, route.scope
            assert r.random() == after  # the same draws
