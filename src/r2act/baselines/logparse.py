"""What error lines say about *whom* they blame, and what the entry point served.

Client libraries name the peer they failed to reach in a handful of well-known shapes: a
DNS lookup names the host, a gRPC client names the callee or at least the port it dialled,
a handler's wrap names the step that failed (the system says which service each step
calls, ``System.error_steps``). :func:`blame` turns each error line into (symptom, service)
votes from those shapes; explicit names outweigh ports, and a relay ("X failed: ...")
counts little because X only passed the error on. :func:`entry_requests` reads the entry
point's access lines (route, status, latency) so rules can see HTTP-level symptoms;
:func:`user_routes` reads the load generator's stats table (what users saw, per route),
the only place where a request that never reached the entry point, or whose answer a
proxy replaced, shows.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass

import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from r2act.baselines.signals import app_of, contains
from r2act.schema import Topology
from r2act.systems import system_of
from r2act.systems.locust import STATS_ROW
from r2act.systems.steps import ErrorStep

_HOST = r"([a-z0-9][a-z0-9.-]*?)"
NAMED: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("dns_error", re.compile(rf"lookup {_HOST} on \S+ no such host", re.I)),
    ("dns_error", re.compile(rf"lookup {_HOST} on ", re.I)),
    ("dns_error", re.compile(rf"DNS resolution failed for {_HOST}:\d+", re.I)),
    ("dns_error", re.compile(rf"Failed to resolve \\?'{_HOST}\\?'", re.I)),
    ("dns_error", re.compile(rf"UnableToResolvePhysicalConnection on {_HOST}:\d+", re.I)),
    ("connect_timeout", re.compile(rf"Connection to {_HOST} timed out", re.I)),
)
"""Shapes that name a host together with what went wrong reaching it."""

_CALLEE = re.compile(r"failed (?:calling|to call) ([a-z0-9-]+)", re.I)
_RELAY = re.compile(r"desc = ([a-z0-9-]+) failed:", re.I)
_PORT = re.compile(r"(?:dial tcp |ipv4:)(\d+\.\d+\.\d+\.\d+):(\d+)")
_SYMPTOMS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "dns_error",
        re.compile(
            r"no such host|DNS resolution failed|Failed to resolve|produced zero addresses"
            r"|server misbehaving",
            re.I,
        ),
    ),
    ("connect_timeout", re.compile(r"i/o timeout|Socket closed|connect timeout", re.I)),
    ("deadline", re.compile(r"DeadlineExceeded|DEADLINE_EXCEEDED|deadline exceeded", re.I)),
    ("refused", re.compile(r"refused|Unavailable|UNAVAILABLE|UnableToConnect", re.I)),
)
"""What went wrong, most specific first; the first that matches a line wins."""


def symptom(line: str) -> str | None:
    """The kind of failure a line reports, if any."""
    for name, pattern in _SYMPTOMS:
        if pattern.search(line):
            return name
    return None


def _ports(topology: Topology) -> dict[str, list[str]]:
    """Service port -> deployments behind it (clients dial Service ports, not pod ports)."""
    out: dict[str, list[str]] = {}
    for d in topology.deployments:
        if d.service_port is not None:
            out.setdefault(str(d.service_port), []).append(d.name)
    return out


def blame(lines: pd.Series, topology: Topology) -> dict[tuple[str, str], float]:
    """(symptom, service) -> weight, over the given error lines."""
    ports = _ports(topology)
    steps = system_of(topology).error_steps
    votes: dict[tuple[str, str], float] = defaultdict(float)
    for text in lines.astype(str):
        kind = symptom(text)
        named = [(k, m.group(1)) for k, p in NAMED if (m := p.search(text))]
        if named:
            k, host = named[0]
            app = app_of(host, topology)
            if app is not None:
                votes[(k, app)] += 1.0
                continue
        if kind is None:
            continue
        callee = _CALLEE.search(text)
        if callee and (app := app_of(callee.group(1), topology)):
            votes[(kind, app)] += 1.0
            continue
        step = _innermost_step(text, steps)
        if step is not None and (app := app_of(step, topology)):
            votes[(kind, app)] += 1.0
            continue
        port = _PORT.search(text)
        if port and port.group(2) in ports:
            owners = ports[port.group(2)]
            for app in owners:
                votes[(kind, app)] += 0.5 / len(owners)
            continue
        relay = _RELAY.search(text)
        if relay and (app := app_of(relay.group(1), topology)):
            votes[(kind, app)] += 0.1
    return dict(votes)


def _innermost_step(text: str, steps: tuple[ErrorStep, ...]) -> str | None:
    """The service of the last (innermost) handler step named in ``text``, among the
    system's error steps (``System.error_steps``)."""
    best, where = None, -1
    for step in steps:
        for match in step.pattern.finditer(text):
            if match.start() > where:
                best, where = step.service, match.start()
    return best


@dataclass(frozen=True)
class EntryRequests:
    """The entry point's requests of one phase, per route scope ('METHOD /path')."""

    served: Counter[str]
    """Completed requests."""
    status_5xx: Counter[str]
    """Completed with a 5xx status."""
    handler_errors: Counter[str]
    """Handler logged an error (a downstream call failed) before answering."""
    canceled: Counter[str]
    """Requests whose context was canceled (the client or a proxy cut them)."""
    took_ms: dict[str, float]
    """Mean latency of completed requests."""


_FIELDS = {
    "method": r'"http\.req\.method":\s*"(?P<method>[A-Z]+)"',
    "path": r'"http\.req\.path":\s*"(?P<path>[^"?]+)',
    "status": r'"http\.resp\.status":\s*(?P<status>\d+)',
    "took": r'"http\.resp\.took_ms":\s*(?P<took>\d+)',
}


def route_scope(method: str, path: str, topology: Topology) -> str | None:
    """The topology route a request path belongs to ('/product/X' -> 'GET /product/*')."""
    for route in topology.routes:
        if route.method != method:
            continue
        if route.path == path or (route.path.endswith("*") and path.startswith(route.path[:-1])):
            return route.scope
    return None


def _field(array: pa.Array, name: str) -> pd.Series:
    found = pc.extract_regex(array, _FIELDS[name])
    return pd.Series(pc.struct_field(found, [0]).to_pylist(), dtype=object)


def entry_requests(logs: pd.DataFrame, phase: str, topology: Topology) -> EntryRequests:
    """Read the entry point's access and error lines of one phase (vectorised in Arrow)."""
    rows = logs[(logs["phase"] == phase) & (logs["service"] == topology.entrypoint)]
    lines = rows["line"][~contains(rows["line"], "request started")]
    out = EntryRequests(Counter(), Counter(), Counter(), Counter(), {})
    if lines.empty:
        return out
    array = pa.array(lines.astype(str).tolist(), type=pa.string())
    frame = pd.DataFrame({name: _field(array, name) for name in _FIELDS})
    frame["canceled"] = contains(lines, "canceled")
    frame["error"] = contains(lines, '"error"')
    frame = frame.dropna(subset=["method", "path"])
    scopes = {
        (m, p): route_scope(m, p, topology)
        for m, p in set(zip(frame["method"], frame["path"], strict=True))
    }
    frame["scope"] = [scopes[k] for k in zip(frame["method"], frame["path"], strict=True)]
    frame = frame.dropna(subset=["scope"])
    done = frame.dropna(subset=["status"])
    out.served.update(done["scope"].astype(str))
    out.status_5xx.update(done.loc[done["status"].str.startswith("5"), "scope"].astype(str))
    pending = frame[frame["status"].isna()]
    out.canceled.update(pending.loc[pending["canceled"], "scope"].astype(str))
    errors = pending[~pending["canceled"] & pending["error"]]
    out.handler_errors.update(errors["scope"].astype(str))
    took = done.dropna(subset=["took"])
    means = took.assign(ms=took["took"].astype(float)).groupby("scope")["ms"].mean()
    out.took_ms.update({str(k): float(v) for k, v in means.items()})
    return out


def route_service(scopes: list[str], topology: Topology) -> str:
    """The service a set of failing routes points at: the one whose routes they are.

    All routes failing points at the entry point. Otherwise the most specific service
    reached by every failing route wins (fewest routes of its own; ties in topology
    order): a rule on the one route that reaches a service is most likely about that service,
    not about one that every route reaches."""
    routes = {r.scope: r for r in topology.routes}
    if set(scopes) >= set(routes):
        return topology.entrypoint
    common: set[str] | None = None
    for scope in scopes:
        reached = set(routes[scope].services) if scope in routes else set()
        common = reached if common is None else common & reached
    candidates = [n for n in topology.names if n in (common or set())]
    if not candidates:
        return topology.entrypoint
    return min(candidates, key=lambda n: (len(topology.routes_of(n)), topology.names.index(n)))


@dataclass(frozen=True)
class UserRoute:
    """What users saw of one route in one phase: mean current requests and failures/s."""

    requests_per_s: float
    failures_per_s: float


def user_routes(logs: pd.DataFrame, phase: str, topology: Topology) -> dict[str, UserRoute]:
    """Per route scope, the load generator's current req/s and failures/s (Locust's stats
    rows, ``systems.locust``), summed over a print's rows of the route (one per product
    page) and averaged over the phase's prints. Empty when no load generator logged, and
    when the system's load generator prints no stats table (``System.load_stats`` None:
    the Astronomy Shop's Locust runs its web UI): users' rates are then not read from the
    logs at all, rather than from lines that are not a table."""
    if system_of(topology).load_stats is None:
        return {}
    generator = topology.load_generator
    rows = logs[(logs["phase"] == phase) & (logs["service"] == generator)]
    if rows.empty:
        return {}
    array = pa.array(rows["line"].astype(str).tolist(), type=pa.string())
    found = pc.extract_regex(array, STATS_ROW)
    frame = pd.DataFrame(
        {
            "ts": rows["ts"].to_numpy(),
            **{
                name: pc.struct_field(found, [found.type.get_field_index(name)]).to_pylist()
                for name in ("method", "name", "rps", "fps")
            },
        }
    ).dropna(subset=["name"])
    frame = frame[frame["method"].fillna("") != ""]  # the Aggregated row has no method
    if frame.empty:
        return {}
    pairs = set(zip(frame["method"], frame["name"], strict=True))
    scopes = {pair: route_scope(*pair, topology) for pair in pairs}
    frame["scope"] = [scopes[p] for p in zip(frame["method"], frame["name"], strict=True)]
    frame = frame.dropna(subset=["scope"]).astype({"rps": float, "fps": float})
    per_print = frame.groupby(["scope", "ts"])[["rps", "fps"]].sum()
    means = per_print.groupby(level="scope").mean()
    return {
        str(scope): UserRoute(float(row["rps"]), float(row["fps"]))
        for scope, row in means.iterrows()
    }
