"""The load generator's lines (Locust 2.43, headless), for whichever deployment sends load.

Locust is the engine's load generator whatever the system, so its lines are rendered here,
for the topology's ``load_generator``: its start-up lines and the console stats table it
prints every 2 s, one row per request entry (a route's ``*`` expanded over the system's
``path_ids``, as the users' requests spread over them) and the ``Aggregated`` row.

Locust's counters are cumulative since the test started (``StatsEntry.log`` and
``log_error`` only ever add, stats.py L347-L356, L396-L397), so a row's failures are the
integral of the users' failed requests since the load generator started, over every
stretch of the history in which any failed, not only the disturbance acting now. The
history that made them is pruned after an hour (``state.RETENTION_S``), so what failed is
settled into the state (``settle``: per stretch, the failed requests per second of each
route, ``state.FailedLoad``) whenever the cluster changes; a table reads the settled past
and integrates the scenes since (``FailedSince``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from itertools import pairwise
from math import trunc  # int() of a float, cheaper per call (``logformats``)
from typing import NamedTuple

from r2act.cluster.sim.background import ResetColumn
from r2act.cluster.sim.scene import RouteView, Scene
from r2act.cluster.sim.state import FailedLoad, SimState
from r2act.cluster.sim.texts import LOCUST_HEADER, T
from r2act.schema import LogLine, NoiseLevel
from r2act.systems import system_of
from r2act.systems.logformats import locust_time
from r2act.systems.render import PodIdentity

new = tuple.__new__
"""``tuple.__new__``: builds a ``LogLine`` without the NamedTuple constructor's extra frame."""
VERSION = "2.43.0"
"""The Locust release the load generator runs (its ``Starting Locust`` line)."""


CONSOLE = "stdout"
"""``System.load_stats`` of a load generator whose console is its pod log (headless)."""


def on_console(logger: PodIdentity) -> bool:
    """The load generator's console (log lines, stats table) is its own pod log."""
    return system_of(logger.topology).load_stats == CONSOLE


def startup_lines(logger: PodIdentity, ts: float, out: list[LogLine]) -> None:
    """Locust's first lines: its version, then that no run time limit is set (none where
    the system's load generator has no console on its pod, ``System.load_stats``)."""
    if not on_console(logger):
        return
    pod = logger.pod
    for i, text in enumerate((T("lo.starting")(VERSION), T("lo.no_limit")())):
        t = ts + 0.01 * i
        line = f"[{locust_time(t)}] {pod}/INFO/locust.main: {text}"
        out.append(LogLine(t, pod, logger.container, logger.app, line))


SceneAt = Callable[[float], Scene]
"""The system's scene at an instant (``SimulatedCluster.scene_at``)."""


def failure_rates(scene: Scene) -> dict[str, float]:
    """Failed user requests per second per route scope in ``scene`` (the routes that fail)."""
    rates = {scope: view.rate * view.fail for scope, view in scene.routes.items()}
    return {scope: rate for scope, rate in rates.items() if rate > 0}


def _stretches(lo: float, hi: float, cuts: list[float]) -> list[tuple[float, float]]:
    """[lo, hi) split at the history's change points inside it (one scene each)."""
    inside = [c for c in cuts if lo < c < hi]
    bounds = [lo, *inside, hi]
    return [(a, b) for a, b in pairwise(bounds) if b > a]


def settle(
    state: SimState, until: float, scene_at: SceneAt, cuts: list[float], fold_before: float
) -> None:
    """Record the users' failed requests from ``state.load_settled`` to ``until`` (the
    history before ``until`` no longer changes: every change happens at the clock's now),
    and fold the stretches that ended before ``fold_before`` (no log older than that is
    read any more) into one total per route."""
    since = state.load_settled
    if since is None or until <= since:
        state.load_settled = until if since is None else since
        return
    kept = state.failed_load
    for a, b in _stretches(since, until, cuts):
        rates = failure_rates(scene_at((a + b) / 2))
        if not rates:
            continue
        if kept and kept[-1].end == a and kept[-1].failed == rates:
            kept[-1].end = b
        else:
            kept.append(FailedLoad(start=a, end=b, failed=rates))
    state.load_settled = until
    old = [x for x in kept if x.end < fold_before]
    if old:
        before = state.failed_load_before
        for x in old:
            for scope, rate in x.failed.items():
                before[scope] = before.get(scope, 0.0) + rate * (x.end - x.start)
        state.failed_load = [x for x in kept if x.end >= fold_before]


class FailedSince:
    """The users' failed requests per route from a start (the load generator's) to any
    instant: the settled past (``state.failed_load``) plus the scenes since it."""

    def __init__(self, state: SimState, scene_at: SceneAt, cuts: list[float]) -> None:
        self.state, self.scene_at, self.cuts = state, scene_at, cuts

    def __call__(self, started: float, t: float) -> dict[str, float]:
        """Failed requests per route scope in [started, t)."""
        state = self.state
        total: dict[str, float] = {}
        first = state.failed_load[0].start if state.failed_load else state.load_settled
        # Folded stretches are older than any log still read; the load generator that
        # counts them started before them (it runs for the whole campaign).
        if first is not None and started < first:
            total.update(state.failed_load_before)
        for x in state.failed_load:
            width = min(x.end, t) - max(x.start, started)
            if width > 0:
                _add(total, x.failed, width)
        settled = state.load_settled
        if settled is not None and t > settled:
            for a, b in _stretches(max(settled, started), t, self.cuts):
                _add(total, failure_rates(self.scene_at((a + b) / 2)), b - a)
        return total


def _add(total: dict[str, float], rates: Mapping[str, float], seconds: float) -> None:
    for scope, rate in rates.items():
        total[scope] = total.get(scope, 0.0) + rate * seconds


_NAME_W = 76
"""Locust's name column without a TTY: STATS_NAME_WIDTH 80 - 8 + 4 (stats.py L39, L566)."""
_HEADER = LOCUST_HEADER
_SEP = "|".join("-" * w for w in (8, _NAME_W, 7, 13, 7, 7, 7, 7, 8, 11))


class _Entry(NamedTuple):
    """One request entry's row of a stats table, all but its counters."""

    rate: float
    """Requests per second the users send it."""
    rate_fail: float
    """Of those, failed per second now."""
    scope: str
    """The route it belongs to (``failed`` counts per route)."""
    share: int
    """How many entries the route's ``*`` expands to (each counts its share)."""
    resets: ResetColumn
    """Its connection resets (keyed by ``METHOD name``)."""
    latency: float
    prefix: str
    suffix: str


class _Entries(NamedTuple):
    """A stats table's entries in a scene, sorted as Locust prints them, and the
    Aggregated row's current rates."""

    rows: list[_Entry]
    rate_all: float
    fail_now: float
    noise: NoiseLevel
    """The scene's noise level the reset columns were made for."""


_LAST: dict[str, tuple[PodIdentity, dict[str, RouteView], _Entries]] = {}
"""Per pod of the load generator, its last table's entries, with the logger and the scene's routes
they were made from.
Consecutive bucket pieces of one stretch share the stretch's scene (``scene_at`` copies it
per instant, routes included by reference) and so print the same entries: only their
counters differ. The objects are kept, not their ids, so an identity match cannot be a
reused address; nothing mutates a scene's routes after ``build_scene``."""


def _entries(logger: PodIdentity, scene: Scene) -> _Entries:
    """The table's entries in ``scene`` (memoised on the last logger and routes)."""
    last = _LAST.get(logger.pod)
    if (
        last is not None
        and last[0] is logger
        and last[1] is scene.routes
        and last[2].noise == scene.noise
    ):
        return last[2]
    rows: list[tuple[str, str, float, float, float, str, int]] = []
    ids = system_of(logger.topology).path_ids
    for route in logger.topology.routes:
        view = scene.routes.get(route.scope)
        if view is None:
            continue
        latency = logger.route_ms.get(route.scope, 20.0) + view.extra_ms
        if route.path.endswith("*") and ids:
            for value in ids:
                name = route.path[:-1] + value
                row = (route.method, name, view.rate / len(ids), view.fail, latency)
                rows.append((*row, route.scope, len(ids)))
        else:
            rows.append((route.method, route.path, view.rate, view.fail, latency, route.scope, 1))
    rows.sort(key=lambda row: (row[1], row[0]))  # stats.entries sorted by (name, method)
    rate_all = sum(r[2] for r in rows)
    # The Aggregated row's current rates are the totals' (StatsEntry of the total, fed every
    # request), so its failures/s is the sum of the routes' now, not a cumulative ratio.
    fail_now = sum(r[2] * r[3] for r in rows) / rate_all if rate_all else 0.0
    # Fresh connections per request reset now and then (``background.connection_resets``);
    # with kept-alive connections there is no churn to reset.
    churn = scene.noise if not logger.topology.load_connection_reuse else NoiseLevel.NONE
    pod = logger.pod
    entries = [
        _Entry(
            rate,
            rate * fail,
            scope,
            share,
            ResetColumn(logger.seed, pod, f"{method} {name}", rate, churn),
            latency,
            *_row_ends(method, name, latency, rate, fail),
        )
        for method, name, rate, fail, latency, scope, share in rows
    ]
    found = _Entries(entries, rate_all, fail_now, scene.noise)
    if len(_LAST) > 64:
        _LAST.clear()
    _LAST[logger.pod] = (logger, scene.routes, found)
    return found


def locust_table(
    logger: PodIdentity,
    scene: Scene,
    ticks: list[float],
    started: float,
    out: list[LogLine],
    *,
    failed: Callable[[float, float], Mapping[str, float]],
) -> None:
    """Locust's periodic console stats table at ``ticks`` (``stats_printer``: every 2 s in
    headless mode, stats.py L893-901; none where the system's load generator has no
    console on its pod, ``System.load_stats``). The error report is printed only at shutdown
    (main.py L646-648), so it never appears here.

    Counters are cumulative since the load generator started at ``started``: requests at
    the routes' rates, failures as ``failed`` (a ``FailedSince``: the users' failed
    requests per route since a start) says, plus the background's connection resets.
    ``ticks`` lie in one stretch of the history, whose scene is ``scene``."""
    if not on_console(logger):
        return
    table = _entries(logger, scene)
    pod, container, app = logger.pod, logger.container, logger.app
    first = ticks[0] if ticks else started
    before = failed(started, first)
    # Per entry, what is the same at every tick (the failures before the first, the resets
    # column) is computed once for the table.
    columns = [
        (
            e.rate,
            e.rate_fail,
            e.latency,
            e.prefix,
            e.suffix,
            before.get(e.scope, 0.0) / e.share,
            e.resets.at(started, ticks),
        )
        for e in table.rows
    ]
    for i, ts in enumerate(ticks):
        elapsed = max(1.0, ts - started)
        since = max(0.0, ts - max(first, started))
        text = [_HEADER, _SEP]
        total_reqs = total_fails = 0
        weighted = 0.0
        for rate, rate_fail, latency, prefix, suffix, settled, resets in columns:
            reqs = trunc(rate * elapsed)
            fails = trunc(settled + rate_fail * since) + resets[i]
            if fails > reqs:  # noqa: PLR1730 (min without its call: once per row per tick)
                fails = reqs
            total_reqs += reqs
            total_fails += fails
            weighted += latency * reqs
            # '%7d' pads as ':>7d' does, with less to parse per call
            text.append(f"{prefix}{'%7d' % reqs} {fails_cell(fails, reqs)}{suffix}")  # noqa: UP031
        text.append(_SEP)
        avg = weighted / total_reqs if total_reqs else 0.0
        prefix, suffix = _row_ends("", "Aggregated", avg, table.rate_all, table.fail_now)
        text.append(f"{prefix}{total_reqs:>7d} {_fails(total_fails, total_reqs)}{suffix}")
        text.append("")
        out += [new(LogLine, (ts, pod, container, app, line)) for line in text]


def _fails(fails: int, reqs: int) -> str:
    """Locust's ``# fails`` cell: ``"%d(%.2f%%)"`` right-aligned in 12 (stats.py L572)."""
    pct = 100.0 * fails / reqs if reqs else 0.0
    return f"{f'{fails}({pct:.2f}%)':>12}"


_EXACT_REQS = 100_000_000
"""Below this many requests, a percentage's two decimals are those of the exact ratio.

``%.2f`` rounds the double ``100.0 * fails / reqs`` (correctly, ties to even), which is
within ``10000 * 2**-53`` hundredths of the exact ``10000 * fails / reqs`` (``fails <=
reqs``); unless that ratio is a tie (``2 * rem == reqs``), it is at least ``1 / (2 * reqs)``
hundredths from the nearest rounding boundary, so both round alike while ``reqs`` stays
far below ``2**53 / 20000``. A tie is left to the float itself."""
_CELLS: dict[int, str] = {}
"""``# fails`` cells by ``fails * 10001 + hundredths`` (``fails_cell``): formatting the
percentage cost more than half of a stats row, and a cell recurs over the ticks (the
percentage of a cumulative count moves slowly) and over the rows."""
_CELLS_MAX = 65536


def fails_cell(fails: int, reqs: int) -> str:
    """``_fails(fails, reqs)``, from ``_CELLS`` where the integers decide the cell
    (``_EXACT_REQS``)."""
    if fails >= 0 and 0 < reqs < _EXACT_REQS:
        hundredths, rem = divmod(10000 * fails, reqs)
        if rem + rem != reqs:
            key = fails * 10001 + hundredths + (rem + rem > reqs)
            cell = _CELLS.get(key)
            if cell is None:
                if len(_CELLS) > _CELLS_MAX:
                    _CELLS.clear()
                cell = _CELLS[key] = _fails(fails, reqs)
            return cell
    return _fails(fails, reqs)


_PREFIX: dict[tuple[str, str], str] = {}
_SUFFIX: dict[tuple[int, float, float], str] = {}


def _row_ends(method: str, name: str, latency: float, rate: float, fail: float) -> tuple[str, str]:
    """The parts of a stats row around its counters: name columns, latency and rate columns
    (``StatsEntry.to_string``, stats.py L562-579)."""
    prefix = _PREFIX.get((method, name))
    if prefix is None:
        kind = f"{method} " if method else ""
        prefix = _PREFIX[(method, name)] = f"{kind:<8} {name:<{_NAME_W}} "
    lat = trunc(latency)
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
