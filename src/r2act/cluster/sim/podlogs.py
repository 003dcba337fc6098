"""What each pod logs, per kind of event, at what rate, given the scene.

A ``PodLogger`` is built once per pod: it fills the pod-specific parts of its service's
templates and exposes ``kinds(scene)`` — a list of (events per second, lines per event,
renderer). Rates come from the scene's traffic, so logs rise and fall with the request
rate and show the failures the scene says callers see. Strictly periodic output (Locust's
stats table) and start-up banners are in ``podlogs_backend``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from math import exp

from r2act.cluster.sim.errtexts import (
    TOLERATED,
    fatal_backends,
    frontend_error,
    go_client_error,
)
from r2act.cluster.sim.logformats import (
    CURRENCIES,
    PRODUCTS,
    go_line,
    q,
    redis_time,
    rfc3339nano,
    uuid1_text,
    uuid_text,
)
from r2act.cluster.sim.podlog_types import Render
from r2act.cluster.sim.podlogs_backend import error_renderer, served_renderer
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.texts import T
from r2act.cluster.sim.traffic import Call, route_calls, service_ms
from r2act.schema import LogLine, Topology

new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""
Kind = tuple[float, int, Render]
"""(events per second, lines per event, renderer)."""

N_PRODUCTS = len(PRODUCTS)
ABANDONED = 0.002
"""Share of requests whose user gives up mid-request: the next RPC of the handler fails
with ``context canceled`` and the handler logs it as a request error."""
PROBE_RATE = 0.2
"""Probe requests per second on each frontend pod: readiness and liveness every 10 s (the
release manifest sets no periodSeconds on the frontend's probes; the default is 10 s)."""
CART_PROBE_RATE = 0.2
"""cartservice health checks per second: readiness and liveness every 10 s (manifest)."""
REDIS_SAVE_S = 3600.0
"""redis:alpine runs with the default save points (3600 1, 300 100, 60 10000); at the
demo's write rate only the first fires: one RDB save an hour."""
STATUS = {"POST /cart": 302, "POST /setCurrency": 302, "POST /cart/empty": 302, "GET /logout": 302}
"""Routes that answer with a redirect (``frontend/handlers.go`` L236, L248, L427, L522)."""


def _route_ms(topology: Topology, scope: str) -> float:
    """Healthy latency of a route: the frontend's own time plus its calls, sequentially."""

    ms = service_ms(topology)

    def cost(calls: tuple[Call, ...]) -> float:
        return sum(c.count * (ms.get(c.callee, 3.0) + cost(c.children)) for c in calls)

    return ms.get(topology.entrypoint, 8.0) + cost(route_calls(topology, scope))


class PodLogger:
    """Renderers for one pod's log lines."""

    def __init__(
        self, topology: Topology, pod: str, app: str, container: str, *, seed: int, users: int
    ) -> None:
        self.topology, self.pod, self.app, self.container = topology, pod, app, container
        spec = topology.deployment(app)
        self.language = spec.language
        self.port = spec.main.port or 0
        self.ports = {d.name: d.service_port or 0 for d in topology.deployments}
        self.seed = seed
        rnd = random.Random(f"{seed}|sessions")
        self.sessions = [uuid_text(rnd) for _ in range(max(1, users))]
        """One session id per Locust user; cart and checkout see them as user ids."""
        self.route_ms = {r.scope: _route_ms(topology, r.scope) for r in topology.routes}
        self._renderers: dict[tuple[object, ...], tuple[int, Render]] = {}
        self._sized: dict[tuple[str | None, str], tuple[int, Render] | None] = {}
        self._warnings: dict[tuple[str, str], Render] = {}
        self.node = f"{random.Random(f'{seed}|{pod}|mac').getrandbits(48):012x}"
        """The pod's 'MAC address': the node part of the version-1 UUIDs it makes."""

    def _request_memo(
        self, method: str, path: str, extra_ms: float, error: tuple[str, str] | None
    ) -> tuple[int, Render]:
        """Request renderers are built once per pod and key (templates are the costly part)."""
        key = (method, path, extra_ms, error)
        found = self._renderers.get(key)
        if found is None:
            if len(self._renderers) > 2048:
                self._renderers.clear()
            found = self._renderers[key] = self._request(method, path, extra_ms, error)
        return found

    def _backend_memo(self, callee: str | None, what: str) -> tuple[int, Render] | None:
        """Served (callee None) or error renderers, built once per pod and key."""
        key = (callee, what)
        if key not in self._sized:
            if callee is None:
                self._sized[key] = self._served(what)
            else:
                self._sized[key] = self._error(callee, what)
        return self._sized[key]

    def _emit(self, out: list[LogLine], ts: float, line: str) -> None:
        out.append(new(LogLine, (ts, self.pod, self.container, self.app, line)))

    # --- rates -------------------------------------------------------------------------

    def kinds(self, scene: Scene, share: float, scale: float) -> list[Kind]:
        """Rates of every kind of line this pod writes in ``scene``."""
        if share <= 0:
            return []
        if self.app == self.topology.entrypoint:
            return self._frontend(scene, share, scale)
        kinds: list[Kind] = []
        for op, rate in scene.served.get(self.app, {}).items():
            made = self._backend_memo(None, op)
            if made is not None and rate > 0:
                kinds.append((rate * share * scale, made[0], made[1]))
        for (callee, kind), rate in scene.call_errors.get(self.app, {}).items():
            made = self._backend_memo(callee, kind)
            if made is not None and rate > 0:
                kinds.append((rate * share * scale, made[0], made[1]))
        if self.app == "redis-cart":
            kinds.append((1 / REDIS_SAVE_S, 5, self._redis_save))
        if self.app == "cartservice":
            kinds.append((CART_PROBE_RATE, 1, self._cart_health))
        return kinds

    # --- frontend ----------------------------------------------------------------------

    def _frontend(self, scene: Scene, share: float, scale: float) -> list[Kind]:
        """The frontend's lines: probes, requests as the app saw them, tolerated failures.

        HTTPChaos sits in front of the app: an aborted request never reaches it (no line),
        and a replaced status code is replaced after the app answered (the app logs its
        own status). So only requests that reached the app are rendered, each with the
        status the handler wrote."""
        kinds: list[Kind] = [(PROBE_RATE, 2, self._probe)]
        for route in self.topology.routes:
            view = scene.routes.get(route.scope)
            if view is None:
                continue
            reach = view.rate * (1 - view.user_dns[0]) * (1 - view.frontend_down) * share * scale
            reach *= 1 - view.abort_share
            if reach <= 0:
                continue
            method, path = route.method, route.path
            sum_p = sum(p for p, _, _ in view.causes)
            total_p = min(1.0, sum_p)
            norm = total_p / sum_p if sum_p > 0 else 0.0
            ok = reach * (1 - total_p)
            slow = float(round(view.extra_ms))
            lines, render = self._request_memo(method, path, slow, None)
            kinds.append((ok, lines, render))
            first = fatal_backends(route.scope)
            if first:
                lines, render = self._request_memo(method, path, slow, ("canceled", first[0]))
                kinds.append((ok * ABANDONED, lines, render))
            for share_p, kind, svc in view.causes:
                lines, render = self._request_memo(method, path, slow, (kind, svc))
                kinds.append((reach * share_p * norm, lines, render))
        for (callee, kind), rate in scene.call_errors.get(self.app, {}).items():
            if callee in TOLERATED and rate > 0:
                warn = self._warnings.get((callee, kind))
                if warn is None:
                    warn = self._warnings[(callee, kind)] = self._tolerated(callee, kind)
                kinds.append((rate * share * scale, 1, warn))
        return kinds

    def _request(
        self,
        method: str,
        route_path: str,
        extra_ms: float,
        error: tuple[str, str] | None = None,
    ) -> tuple[int, Render]:
        """(lines, renderer) of one request: started, the handler's lines, complete."""
        scope = f"{method} {route_path}"
        base = self.route_ms[scope]
        req = {
            "http.req.id": '"%(rid)s"',
            "http.req.method": f'"{method}"',
            "http.req.path": '"%(path)s"',
            "session": '"%(session)s"',
        }
        started = go_line("debug", T("fe.request_started")(), req, "%(ts)s")
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
        steps = self._handler_lines(scope, req, error)
        sessions = self.sessions
        pod, container, app = self.pod, self.container, self.app
        n_sessions = len(sessions)
        mean = base + extra_ms
        product_page = route_path[:-1] if route_path.endswith("*") else None
        redirect, failed = status == 302, error is not None
        node = self.node

        def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
            rand = r.random
            rid = uuid_text(r)
            path = route_path
            product = int(rand() * N_PRODUCTS)
            if product_page is not None:
                path = product_page + PRODUCTS[product]
            session = sessions[int(rand() * n_sessions)]
            # lognormal(0, 0.35) via an Irwin-Hall normal: three uniforms are cheaper
            took = mean * exp(0.7 * (rand() + rand() + rand() - 1.5))
            end = ts + took / 1000.0
            size = (
                0
                if redirect
                else (4000 + int(rand() * 1500) if failed else 7000 + int(rand() * 6000))
            )
            values: dict[str, object] = {
                "rid": rid,
                "path": path,
                "session": session,
                "ts": rfc3339nano(ts),
            }
            out.append(new(LogLine, (ts, pod, container, app, started % values)))
            n = len(steps)
            for i, (kind, template) in enumerate(steps):
                t = ts + took * (i + 1) / (n + 1) / 1000.0
                if kind == "plain":
                    line = template
                else:
                    values["ts"] = rfc3339nano(t)
                    if kind != "none":
                        values.update(_FILL[kind](r, rand, product, ts, node))
                    line = template % values
                out.append(new(LogLine, (t, pod, container, app, line)))
            values["ts"], values["size"], values["took"] = rfc3339nano(end), size, int(took)
            out.append(new(LogLine, (end, pod, container, app, complete % values)))

        return 2 + len(steps), render

    def _handler_lines(
        self, scope: str, req: dict[str, str], error: tuple[str, str] | None
    ) -> list[tuple[str, str]]:
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
            placed = go_line(
                "info", T("fe.order_placed")(), {"order": '"%(order)s"', **req}, "%(ts)s"
            )
            lines.append(("order", placed))
        return lines

    def _probe(self, ts: float, r: random.Random, out: list[LogLine]) -> None:
        """A kubelet probe of /_healthz: the manifest sends the session cookie
        ``x-readiness-probe`` / ``x-liveness-probe``, and the middleware logs it."""
        session = "x-readiness-probe" if r.random() < 0.5 else "x-liveness-probe"
        rid = uuid_text(r)
        req = {
            "http.req.id": f'"{rid}"',
            "http.req.method": '"GET"',
            "http.req.path": '"/_healthz"',
            "session": f'"{session}"',
        }
        self._emit(out, ts, go_line("debug", T("fe.request_started")(), req) % rfc3339nano(ts))
        end = ts + 0.0004
        complete = go_line(
            "debug",
            T("fe.request_complete")(),
            {**req, "http.resp.bytes": "2", "http.resp.status": "200", "http.resp.took_ms": "0"},
        )
        self._emit(out, end, complete % rfc3339nano(end))

    def _tolerated(self, callee: str, kind: str) -> Render:
        """The warning a page logs when recommendations or ads fail (and renders anyway)."""
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
        sessions = self.sessions

        def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
            page = pages[int(r.random() * 2)]
            path = (
                page + PRODUCTS[int(r.random() * N_PRODUCTS)]
                if page.endswith("/") and len(page) > 1
                else page
            )
            session = sessions[int(r.random() * len(sessions))]
            self._emit(out, ts, line % (uuid_text(r), path, session, rfc3339nano(ts)))

        return render

    # --- backends ----------------------------------------------------------------------

    def _served(self, op: str) -> tuple[int, Render] | None:
        return served_renderer(self, op)

    def _error(self, callee: str, kind: str) -> tuple[int, Render] | None:
        return error_renderer(self, callee, kind)

    def _redis_save(self, ts: float, r: random.Random, out: list[LogLine]) -> None:
        pid = 20 + int(r.random() * 5000)
        texts = (
            T("rd.save")(1, 3600),
            T("rd.bgsave")(pid),
            T("rd.saved")(),
            T("rd.cow")(0, 0, 0),
            T("rd.bgsave_ok")(),
        )
        for i, text in enumerate(texts):
            t = ts + i * 0.05
            who = "C" if i in (2, 3) else "M"
            label = pid if who == "C" else 1
            self._emit(out, t, f"{label}:{who} {redis_time(t)} * {text}")

    def _cart_health(self, ts: float, r: random.Random, out: list[LogLine]) -> None:
        self._emit(out, ts, T("ca.health")())


def _no_fill(
    r: random.Random, rand: Callable[[], float], product: int, ts: float, node: str
) -> dict[str, object]:
    return {}


def _currency(
    r: random.Random, rand: Callable[[], float], product: int, ts: float, node: str
) -> dict[str, object]:
    return {"currency": CURRENCIES[int(rand() * len(CURRENCIES))]}


def _product_currency(
    r: random.Random, rand: Callable[[], float], product: int, ts: float, node: str
) -> dict[str, object]:
    return {"currency": CURRENCIES[int(rand() * len(CURRENCIES))], "id": PRODUCTS[product]}


def _add(
    r: random.Random, rand: Callable[[], float], product: int, ts: float, node: str
) -> dict[str, object]:
    return {"product": PRODUCTS[product], "quantity": 1 + int(rand() * 10)}


def _set_currency(
    r: random.Random, rand: Callable[[], float], product: int, ts: float, node: str
) -> dict[str, object]:
    n = len(CURRENCIES)
    return {"new": CURRENCIES[int(rand() * n)], "old": CURRENCIES[int(rand() * n)]}


def _order(
    r: random.Random, rand: Callable[[], float], product: int, ts: float, node: str
) -> dict[str, object]:
    return {"order": uuid1_text(r, ts, node)}


_FILL: dict[str, Callable[..., dict[str, object]]] = {
    "none": _no_fill,
    "currency": _currency,
    "product": _product_currency,
    "add": _add,
    "set_currency": _set_currency,
    "order": _order,
}
"""Value drawers of the handlers' own fields, by the names their templates use."""

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
