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

from r2act.cluster.sim.logformats import (
    CURRENCIES,
    PRODUCTS,
    go_line,
    grpc_error,
    q,
    redis_time,
    rfc3339nano,
    uuid_text,
)
from r2act.cluster.sim.scene import Scene
from r2act.cluster.sim.traffic import SERVICE_MS, Call, route_calls
from r2act.schema import LogLine, Topology

new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""
Render = Callable[[float, random.Random, list[LogLine]], None]
Kind = tuple[float, int, Render]
"""(events per second, lines per event, renderer)."""

N_PRODUCTS = len(PRODUCTS)
ABANDONED = 0.002
"""Share of requests whose user gives up mid-request: background 'context canceled' noise."""


def _route_ms(topology: Topology, scope: str) -> float:
    """Healthy latency of a route: the frontend's own time plus its calls, sequentially."""

    def cost(calls: tuple[Call, ...]) -> float:
        return sum(c.count * (SERVICE_MS.get(c.callee, 3.0) + cost(c.children)) for c in calls)

    return SERVICE_MS.get(topology.entrypoint, 8.0) + cost(route_calls(topology, scope))


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
        self._renderers: dict[tuple[object, ...], Render] = {}
        self._sized: dict[tuple[str | None, str], tuple[int, Render] | None] = {}
        self._aborts: dict[tuple[str, str], Render] = {}
        self._warnings: dict[str, Render] = {}

    def _request_memo(
        self, method: str, path: str, status: int, extra_ms: float, error: tuple[str, str] | None
    ) -> Render:
        """Request renderers are built once per pod and key (templates are the costly part)."""
        key = (method, path, status, extra_ms, error)
        found = self._renderers.get(key)
        if found is None:
            if len(self._renderers) > 2048:
                self._renderers.clear()
            found = self._renderers[key] = self._request(method, path, status, extra_ms, error)
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
            kinds.append((1 / 60, 5, self._redis_save))
        return kinds

    # --- frontend ----------------------------------------------------------------------

    def _frontend(self, scene: Scene, share: float, scale: float) -> list[Kind]:
        kinds: list[Kind] = [(0.2, 2, self._probe)]
        for route in self.topology.routes:
            view = scene.routes.get(route.scope)
            if view is None:
                continue
            reach = view.rate * (1 - view.user_dns[0]) * (1 - view.frontend_down) * share * scale
            if reach <= 0:
                continue
            method, path = route.method, route.path
            a, h = view.abort_share, view.http_share
            sum_p = sum(p for p, _, _ in view.causes)
            total_p = min(1.0, sum_p)
            norm = total_p / sum_p if sum_p > 0 else 0.0
            ok = reach * (1 - a) * (1 - total_p)
            slow = float(round(view.extra_ms))
            kinds.append((ok * (1 - h), 3, self._request_memo(method, path, 200, slow, None)))
            canceled = self._request_memo(method, path, 500, slow, ("canceled", ""))
            kinds.append((ok * ABANDONED, 3, canceled))
            if h > 0 and view.http_code is not None:
                code = view.http_code
                kinds.append((ok * h, 3, self._request_memo(method, path, code, slow, None)))
            for share_p, kind, svc in view.causes:
                err = self._request_memo(method, path, 500, slow, (kind, svc))
                kinds.append((reach * (1 - a) * share_p * norm, 3, err))
            if a > 0:
                abort = self._aborts.get((method, path))
                if abort is None:
                    abort = self._aborts[(method, path)] = self._abort(method, path)
                kinds.append((reach * a, 2, abort))
        for (callee, kind), rate in scene.call_errors.get(self.app, {}).items():
            if callee == "adservice" and rate > 0:
                warn = self._warnings.get(kind)
                if warn is None:
                    warn = self._warnings[kind] = self._ads_warning(kind)
                kinds.append((rate * share * scale, 1, warn))
        return kinds

    def _path(self, path: str, r: random.Random) -> str:
        if path.endswith("*"):
            return path[:-1] + PRODUCTS[int(r.random() * N_PRODUCTS)]
        return path

    def _request(
        self,
        method: str,
        route_path: str,
        status: int,
        extra_ms: float,
        error: tuple[str, str] | None = None,
    ) -> Render:
        base = self.route_ms[f"{method} {route_path}"]
        started = go_line(
            "debug",
            "request started",
            {
                "http.req.id": '"%s"',
                "http.req.method": f'"{method}"',
                "http.req.path": '"%s"',
                "session": '"%s"',
            },
        )
        complete = go_line(
            "debug",
            "request complete",
            {
                "http.req.id": '"%s"',
                "http.req.method": f'"{method}"',
                "http.req.path": '"%s"',
                "http.resp.bytes": "%d",
                "http.resp.status": str(status),
                "http.resp.took_ms": "%d",
                "session": '"%s"',
            },
        )
        middle = self._handler_line(method, route_path, error)
        sessions = self.sessions

        pod, container, app = self.pod, self.container, self.app
        n_sessions = len(sessions)
        mean = base + extra_ms
        product_page = route_path[:-1] if route_path.endswith("*") else None
        failed = status >= 400

        def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
            rand = r.random
            rid = uuid_text(r)
            path = route_path
            if product_page is not None:  # same draw as _path, without the call
                path = product_page + PRODUCTS[int(rand() * N_PRODUCTS)]
            session = sessions[int(rand() * n_sessions)]
            # lognormal(0, 0.35) via an Irwin-Hall normal: three uniforms are cheaper
            took = mean * exp(0.7 * (rand() + rand() + rand() - 1.5))
            end = ts + took / 1000.0
            mid = ts + took / 2000.0
            size = 0 if failed else 7000 + int(rand() * 6000)
            out += (
                new(
                    LogLine,
                    (ts, pod, container, app, started % (rid, path, session, rfc3339nano(ts))),
                ),
                new(
                    LogLine,
                    (mid, pod, container, app, middle % (rid, path, session, rfc3339nano(mid))),
                ),
                new(
                    LogLine,
                    (
                        end,
                        pod,
                        container,
                        app,
                        complete % (rid, path, size, int(took), session, rfc3339nano(end)),
                    ),
                ),
            )

        return render

    def _handler_line(self, method: str, path: str, error: tuple[str, str] | None) -> str:
        fields = {"http.req.id": '"%s"', "http.req.method": f'"{method}"', "http.req.path": '"%s"'}
        fields["session"] = '"%s"'
        if error is not None:
            kind, svc = error
            text = grpc_error(kind, svc, self.ports.get(svc, 0), len(svc) * 7)
            fields["error"] = f'"{q(_wrap(path, text))}"'
            return go_line("error", "request error", fields)
        message = {
            "/": "home",
            "/setCurrency": "setting currency",
            "/product/*": "serving product page",
            "/cart": "view user cart" if method == "GET" else "adding to cart",
            "/cart/checkout": "placing order",
        }.get(path, "serving page")
        fields["currency"] = f'"{CURRENCIES[0]}"'
        return go_line("debug" if path != "/" else "info", message, fields)

    def _abort(self, method: str, route_path: str) -> Render:
        started = go_line(
            "debug",
            "request started",
            {
                "http.req.id": '"%s"',
                "http.req.method": f'"{method}"',
                "http.req.path": '"%s"',
                "session": '"%s"',
            },
        )
        error = go_line(
            "error",
            "request error",
            {
                "error": f'"{q("could not complete request: context canceled")}"',
                "http.req.id": '"%s"',
                "http.req.method": f'"{method}"',
                "http.req.path": '"%s"',
                "session": '"%s"',
            },
        )
        sessions = self.sessions

        def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
            rid, path = uuid_text(r), self._path(route_path, r)
            session = sessions[int(r.random() * len(sessions))]
            self._emit(out, ts, started % (rid, path, session, rfc3339nano(ts)))
            end = ts + 0.002
            self._emit(out, end, error % (rid, path, session, rfc3339nano(end)))

        return render

    def _probe(self, ts: float, r: random.Random, out: list[LogLine]) -> None:
        session = "x-readiness-probe" if r.random() < 0.5 else "x-liveness-probe"
        rid = uuid_text(r)
        started = go_line(
            "debug",
            "request started",
            {
                "http.req.id": f'"{rid}"',
                "http.req.method": '"GET"',
                "http.req.path": '"/_healthz"',
                "session": f'"{session}"',
            },
        )
        self._emit(out, ts, started % rfc3339nano(ts))
        end = ts + 0.0004
        complete = go_line(
            "debug",
            "request complete",
            {
                "http.req.id": f'"{rid}"',
                "http.req.method": '"GET"',
                "http.req.path": '"/_healthz"',
                "http.resp.bytes": "2",
                "http.resp.status": "200",
                "http.resp.took_ms": "0",
                "session": f'"{session}"',
            },
        )
        self._emit(out, end, complete % rfc3339nano(end))

    def _ads_warning(self, kind: str) -> Render:
        text = grpc_error(kind, "adservice", self.ports.get("adservice", 9555), 61)
        line = go_line("warning", "failed to retrieve ads", {"error": f'"{q(text)}"'})

        def render(ts: float, r: random.Random, out: list[LogLine]) -> None:
            self._emit(out, ts, line % rfc3339nano(ts))

        return render

    # --- backends ----------------------------------------------------------------------

    def _served(self, op: str) -> tuple[int, Render] | None:
        from r2act.cluster.sim.podlogs_backend import served_renderer

        return served_renderer(self, op)

    def _error(self, callee: str, kind: str) -> tuple[int, Render] | None:
        from r2act.cluster.sim.podlogs_backend import error_renderer

        return error_renderer(self, callee, kind)

    def _redis_save(self, ts: float, r: random.Random, out: list[LogLine]) -> None:
        pid = 20 + int(r.random() * 5000)
        for i, text in enumerate(
            (
                "* 1 changes in 60 seconds. Saving...",
                f"* Background saving started by pid {pid}",
                "* DB saved on disk",
                "* Fork CoW for RDB: current 0 MB, peak 0 MB, average 0 MB",
                "* Background saving terminated with success",
            )
        ):
            t = ts + i * 0.05
            who = "C" if i in (2, 3) else "M"
            label = pid if who == "C" else 1
            self._emit(out, t, f"{label}:{who} {redis_time(t)} {text}")


def _wrap(path: str, text: str) -> str:
    what = {
        "/": "could not retrieve products",
        "/cart": "could not retrieve cart",
        "/cart/checkout": "failed to complete the order",
        "/setCurrency": "could not retrieve currencies",
    }.get(path, "could not retrieve product")
    return f"{what}: {text}"
