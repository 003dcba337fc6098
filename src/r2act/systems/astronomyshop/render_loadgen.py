"""The load generator's own log records, as the collector's debug exporter prints them.

Paths below are under ``shared/reference/opentelemetry-demo-2.2.0/src/load-generator/``.
Locust runs with ``--skip-log-setup`` (``Dockerfile`` L22) and the locustfile puts an OTLP
``LoggingHandler`` at INFO on the root logger (``locustfile.py`` L55-L60), so every INFO
record of the process, the locustfile's and Locust's own, is exported to the collector and
none reaches the pod log (``logsinks``). What is rendered is what the code logs:

- at start-up: the locustfile's import-time line (L75, outside any span), Locust's
  ``Starting Locust`` (locust-2.43.0 ``locust/main.py`` L189), the web UI's address (L455:
  ``LOCUST_WEB_HOST`` 0.0.0.0, ``LOCUST_WEB_PORT`` 8089, plain http) and, as autostart runs
  the test, that no run time is set (L573); then, one user a second (``LOCUST_SPAWN_RATE``
  1), each user's ``on_start`` (L227-L234): its session line, then ``index``'s;
- per task a user runs, the task's own lines (L120-L216), at the task's rate: users /
  think time x weight / 32 (``traffic.TASKS``; ``flood_home`` logs nothing while its flag
  is off). Locust's runner lines (ramping, all users spawned) are in ``runners.py``, which
  the reference lacks, so they are not rendered.

Framing (``render_collector.OtlpRecord``): ``service.name`` is the pod's component label
(``OTEL_SERVICE_NAME``, the chart's env); the scope is the logger's name (``root`` for the
locustfile's ``logging.info``, ``locust.main`` for Locust's), INFO is SeverityNumber 9, the
body is the formatted message, and the code attributes name the file in the image
(``WORKDIR /usr/src/app/``, ``Dockerfile`` L16; Locust under the ``python:3.12`` base's
``/usr/local``, L5, L13, L17). A record logged inside a task's span
(``start_as_current_span``) carries that span's trace and span ids with the sampled flag:
the task's span (``tracing.TASK_SPANS``), or a checkout's nested ``add_to_cart`` span for
the lines of its cart rounds. The ids come from the pod's ``PodIdentity.traces``: when
traces are collected, a line of a kept request names a kept trace's task span (the
simulated traces hold one request each under its task span, so a checkout's own line and
its rounds' lines may name different traces); otherwise the occurrence's draw, the rounds
sharing the task's trace id. ``on_start``'s records name no stored trace (its requests
are not simulated): a draw the sampler keeps is moved out of the kept range.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from r2act.schema import LogLine
from r2act.systems.astronomyshop.render_collector import SEVERITY, OtlpRecord, debug_lines, i, s
from r2act.systems.astronomyshop.render_draw import occurrence, sample
from r2act.systems.astronomyshop.render_formats import trace_ids
from r2act.systems.astronomyshop.render_startup import collector_startup
from r2act.systems.astronomyshop.shop import CATEGORIES, PRODUCTS
from r2act.systems.astronomyshop.texts import T
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP
from r2act.systems.astronomyshop.tracing import NESTED_TASK, TASK_SPANS
from r2act.systems.astronomyshop.traffic import TASK_WEIGHT, TASKS, THINK_S
from r2act.systems.logformats import uuid1_text, uuid_text
from r2act.systems.render import Kind, PodIdentity, RelayIdentity, SpanAsk, TraceIds

LOAD_GENERATOR = ASTRONOMY_SHOP.load_generator or ""
LOCUSTFILE = "/usr/src/app/locustfile.py"
LOCUST_MAIN = "/usr/local/lib/python3.12/site-packages/locust/main.py"
LOCUST_VERSION = "2.43.0"
WEB_URL = "http://0.0.0.0:8089"
"""``main.py`` L451 with ``LOCUST_WEB_HOST`` 0.0.0.0 and ``LOCUST_WEB_PORT`` 8089."""
SPAWN_S = 1.0
"""Seconds between two users' starts (``LOCUST_SPAWN_RATE`` "1")."""
QUANTITIES = (1, 2, 3, 4, 5, 10)
"""``add_to_cart``'s quantity choices (L182)."""
ITEMS = (2, 3, 4)
"""``checkout_multi``'s add-to-cart rounds (L208)."""
QUESTION = "Can you summarize the product reviews?"
"""``ask_product_ai_assistant``'s question (L153)."""
STEP_S = 0.01
"""Seconds between two start-up lines (a parameter)."""

Line = tuple[str, str, int, str]
"""(scope, code.function, code.lineno, message) of one log call."""
Trace = tuple[str, str, int]


def _record(pod: str, ts_line: Line, trace: Trace) -> OtlpRecord:
    scope, function, lineno, message = ts_line
    path = LOCUST_MAIN if scope == "locust.main" else LOCUSTFILE
    return OtlpRecord(
        service=LOAD_GENERATOR,
        pod=pod,
        scope=(scope, ""),
        severity="INFO",
        level=SEVERITY["INFO"],
        body=message,
        attributes=(
            ("code.filepath", s(path)),
            ("code.function", s(function)),
            ("code.lineno", i(lineno)),
        ),
        trace=trace,
    )


ON_START: SpanAsk = ("task", "", None)
"""``on_start``'s spans: no simulated trace has one (its requests are left out)."""


def _span(
    r: random.Random, at: tuple[TraceIds, SpanAsk, float], trace_id: str | None = None
) -> Trace:
    """A sampled span's context (a new trace unless ``trace_id`` is the parent's): the
    one ``at`` (the pod's trace ids, the span asked for, the instant) gives for the draw."""
    return _placed_span(r, at, trace_id)[0]


def _placed_span(
    r: random.Random, at: tuple[TraceIds, SpanAsk, float], trace_id: str | None = None
) -> tuple[Trace, float]:
    """``_span`` and the time its line is written: inside the span, when it is a kept one."""
    drawn, span = trace_ids(r)
    traces, ask, ts = at
    found_trace, found_span, placed = traces.placed(ask, ts, (trace_id or drawn, span))
    return (found_trace, found_span, 1), placed


def _add_to_cart(r: random.Random, ts: float, node: str, user: str | None) -> Line:
    """``add_to_cart``'s line (L177-L184): a new version-1 user id unless one is given."""
    user = user or uuid1_text(r, ts, node)
    product = r.choice(PRODUCTS)
    return ("root", "add_to_cart", 184, T("as.lg.add")(user, r.choice(QUANTITIES), product))


def _task_lines(task: str, r: random.Random, ts: float, node: str) -> list[list[Line]]:
    """The lines one run of ``task`` logs, grouped by span (the task's, then nested ones:
    a checkout's ``add_to_cart`` rounds come first, its completion line last)."""
    one: dict[str, Callable[[], Line]] = {
        "index": lambda: ("root", "index", 123, T("as.lg.index")()),
        "browse_product": lambda: (
            "root",
            "browse_product",
            130,
            T("as.lg.browse")(r.choice(PRODUCTS)),
        ),
        "get_recommendations": lambda: (
            "root",
            "get_recommendations",
            137,
            T("as.lg.recommendations")(r.choice(PRODUCTS)),
        ),
        "get_product_reviews": lambda: (
            "root",
            "get_product_reviews",
            147,
            T("as.lg.reviews")(r.choice(PRODUCTS)),
        ),
        "ask_product_ai_assistant": lambda: (
            "root",
            "ask_product_ai_assistant",
            155,
            T("as.lg.ask")(r.choice(PRODUCTS), QUESTION),
        ),
        "get_ads": lambda: ("root", "get_ads", 165, T("as.lg.ads")(r.choice(CATEGORIES))),
        "view_cart": lambda: ("root", "view_cart", 174, T("as.lg.cart")()),
        "add_to_cart": lambda: _add_to_cart(r, ts, node, None),
    }
    if task in one:
        return [[one[task]()]]
    if task in ("checkout", "checkout_multi"):
        user = uuid1_text(r, ts, node)
        rounds = 1 if task == "checkout" else r.choice(ITEMS)
        adds = [[_add_to_cart(r, ts, node, user)] for _ in range(rounds)]
        key, line = ("as.lg.checkout", 203) if task == "checkout" else ("as.lg.checkout_multi", 216)
        return [[("root", task, line, T(key)(user))], *adds]
    return []  # flood_home: loadGeneratorFloodHomepage is 0 while off (L219-L221)


def _task_kind(source: PodIdentity, collector: RelayIdentity, task: str, rate: float) -> Kind:
    """(occurrences per second, lines per occurrence, renderer) of one task's records."""
    pod, traces = source.pod, source.traces
    outer: SpanAsk = ("task", TASK_SPANS.get(task, ""), None)
    inner: SpanAsk = ("task", f"{outer[1]}/{TASK_SPANS[NESTED_TASK]}", None)

    def records(ts: float, r: random.Random) -> list[tuple[float, OtlpRecord]]:
        groups = _task_lines(task, r, ts, source.node)
        drawn = trace_ids(r)
        own_trace, own_span, own_at = traces.placed(outer, ts, drawn)
        own = (own_trace, own_span, 1)
        out: list[tuple[float, OtlpRecord]] = []
        for k, group in enumerate(groups[1:]):
            nested, nested_at = _placed_span(r, (traces, inner, ts), drawn[0])
            out += [(nested_at + 0.001 * k, _record(pod, x, nested)) for x in group]
        if groups:
            # the task's own line: first for a one-line task, after the rounds for a checkout
            at = own_at + 0.001 * len(groups[1:]) + (0.05 if len(groups) > 1 else 0.0)
            out += [(at, _record(pod, x, own)) for x in groups[0]]
        return out

    lines = sum(len(debug_lines(t, x, collector)) for t, x in records(0.0, sample(pod)))

    def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
        for at, record in records(ts, occurrence(pod, ts)):
            out.extend(debug_lines(at, record, collector))

    return (rate, lines, render)


def loadgen_periodic(source: PodIdentity, collector: RelayIdentity) -> tuple[Kind, ...]:
    """The load generator's per-task records on the collector: each task at its rate (its
    users run them whatever the shop answers)."""
    if source.app != LOAD_GENERATOR:
        return ()
    tasks_per_s = len(source.sessions) / THINK_S
    return tuple(
        _task_kind(source, collector, task, tasks_per_s * weight / TASK_WEIGHT)
        for task, (weight, requests) in TASKS.items()
        if requests  # flood_home sends and logs nothing while its flag is off
    )


def loadgen_startup(
    source: PodIdentity, collector: RelayIdentity, ts: float, out: list[LogLine]
) -> None:
    """What a starting load generator exports: the import-time and Locust's start-up
    records, then each user's ``on_start`` as the spawn rate starts them (any other
    service's start-up records: ``render_startup.collector_startup``)."""
    if source.app != LOAD_GENERATOR:
        collector_startup(source, collector, ts, out)
        return
    pod = source.pod
    start: list[Line] = [
        ("root", "<module>", 75, T("as.lg.instrumented")()),
        ("locust.main", "main", 189, T("as.lg.starting")(LOCUST_VERSION)),
        ("locust.main", "main", 455, T("as.lg.web")(WEB_URL)),
        ("locust.main", "start_automatic_run", 573, T("as.lg.no_limit")()),
    ]
    for k, line in enumerate(start):
        out.extend(debug_lines(ts + STEP_S * k, _record(pod, line, ("", "", 0)), collector))
    r = occurrence(pod, ts)
    for user in range(len(source.sessions)):
        at = ts + STEP_S * len(start) + SPAWN_S * user
        session = ("root", "on_start", 230, T("as.lg.session")(uuid_text(r)))
        index = ("root", "index", 123, T("as.lg.index")())
        begun = (source.traces, ON_START, at)
        out.extend(debug_lines(at, _record(pod, session, _span(r, begun)), collector))
        out.extend(debug_lines(at + 0.001, _record(pod, index, _span(r, begun)), collector))
