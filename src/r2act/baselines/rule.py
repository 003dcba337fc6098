"""Hand rules over logs, events, metrics and state, as an operator would read them.

Each rule looks for one fault's signature in the during window (compared with pre) and
names the service it sits on. Rules are tried in a fixed order, most specific first, and
the first that fires answers; when none fires the keyword reading is the fallback. The
order encodes an operator's reasoning: a kernel OOM kill is unambiguous; a pause image
means the pod was replaced; a CPU pegged at its limit explains the timeouts its callers
see, so it must be ruled out before blaming the network; users failing on one route while
the entry point logs nothing wrong there is a rule in front of the entry point; a caller
naming the host it cannot resolve beats counting error lines; latency alone is the weakest
clue. Rules that need a modality the view lacks simply do not fire (the paper's modality
ablation).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

from r2act.baselines.base import Baseline, RunContext, mapped
from r2act.baselines.keyword import fault_by_keywords, loudest_service
from r2act.baselines.logparse import (
    EntryRequests,
    UserRoute,
    blame,
    entry_requests,
    route_service,
    user_routes,
)
from r2act.baselines.reader import Case
from r2act.baselines.signals import app_of, error_lines, metric_ratio, span_s, window
from r2act.schema import ContainerState, FaultType, Prediction


@dataclass(frozen=True)
class Finding:
    """A rule's answer and the clue it rests on."""

    fault: FaultType
    service: str
    rule: str
    clue: str


class Look:
    """One incident as the rules read it; each reading is computed once, when first asked."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.topology = case.topology

    @cached_property
    def entry(self) -> tuple[EntryRequests, EntryRequests]:
        """The entry point's requests before and during the fault."""
        logs = self.case.logs
        return entry_requests(logs, "pre", self.topology), entry_requests(
            logs, "during", self.topology
        )

    @cached_property
    def users(self) -> tuple[dict[str, UserRoute], dict[str, UserRoute]]:
        """What the load generator saw per route before and during the fault."""
        logs = self.case.logs
        return user_routes(logs, "pre", self.topology), user_routes(logs, "during", self.topology)

    @cached_property
    def blamed(self) -> dict[tuple[str, str], float]:
        """(symptom, service) votes of callers that rose during the fault."""
        during = blame(error_lines(self.case.logs, "during")["line"], self.topology)
        before = blame(error_lines(self.case.logs, "pre")["line"], self.topology)
        return {k: v - before.get(k, 0.0) for k, v in during.items() if v > 2 * before.get(k, 0.0)}

    def events(self, match: Callable[[str, str], bool]) -> Counter[str]:
        """Per app, how often a during-window event matching (reason, message) happened."""
        rows = window(self.case.events, "during")
        out: Counter[str] = Counter()
        if rows.empty:
            return out
        for reason, message, name, count in zip(
            rows["reason"], rows["message"], rows["object_name"], rows["count"], strict=True
        ):
            if match(str(reason), str(message)) and (app := app_of(str(name), self.topology)):
                out[app] += int(count)
        return out

    def new_in_state(self, match: Callable[[ContainerState], bool]) -> Counter[str]:
        """Per app, containers that match in the during state but did not before.

        A cluster remembers: a pod OOM-killed by an earlier incident still shows
        ``last_terminated_reason: OOMKilled``, so only what changed counts."""
        pre, during = self.case.states.get("pre"), self.case.states.get("during")
        out: Counter[str] = Counter()
        if during is None:
            return out
        before = {
            (p.name, c.name): c for p in (pre.pods if pre is not None else []) for c in p.containers
        }
        for pod in during.pods:
            for container in pod.containers:
                if not match(container):
                    continue
                old = before.get((pod.name, container.name))
                if old is None or container.restart_count > old.restart_count or not match(old):
                    out[pod.app] += 1
        return out


def _top(counts: Mapping[str, float]) -> str:
    return min(counts, key=lambda k: (-counts[k], k))


def oom(look: Look) -> Finding | None:
    """OOM kills (events, or a new OOMKilled last state) -> memory pressure."""
    hits = look.events(lambda r, m: "OOM" in r or "out of memory" in m.lower())
    hits.update(look.new_in_state(lambda c: c.last_terminated_reason == "OOMKilled"))
    if not hits:
        return None
    app = _top(hits)
    return Finding(FaultType.MEMORY_PRESSURE, app, "oom", f"{hits[app]} OOM signals")


def pause_image(look: Look) -> Finding | None:
    """The container image swapped for 'pause' (events or state) -> pod failure."""
    hits = look.events(lambda r, m: r == "Pulled" and "pause" in m)
    hits.update(look.new_in_state(lambda c: "pause" in c.image))
    if not hits:
        return None
    app = _top(hits)
    return Finding(FaultType.POD_FAILURE, app, "pause_image", f"{hits[app]} pause-image signals")


def cpu_pegged(look: Look) -> Finding | None:
    """CPU throttling up tenfold, or usage up fourfold, on a pod -> CPU saturation."""
    metrics, topology = look.case.metrics, look.topology
    throttled = metric_ratio(metrics, "cpu_throttled", topology, floor=0.05)
    usage = metric_ratio(metrics, "cpu_usage", topology, floor=0.01)
    hot = {a: r for a, r in throttled.items() if r >= 10.0}
    hot.update({a: r for a, r in usage.items() if r >= 4.0 and a not in hot})
    if not hot:
        return None
    app = _top(hot)
    return Finding(FaultType.CPU_SATURATION, app, "cpu_pegged", f"x{hot[app]:.1f} vs pre")


def memory_growth(look: Look) -> Finding | None:
    """Working set up by a fifth or more -> memory pressure (below the limit)."""
    growth = metric_ratio(look.case.metrics, "memory_working_set", look.topology, floor=1e6)
    grown = {a: r for a, r in growth.items() if r >= 1.2}
    if not grown:
        return None
    app = _top(grown)
    return Finding(FaultType.MEMORY_PRESSURE, app, "memory_growth", f"x{grown[app]:.2f} vs pre")


def probe_timeouts(look: Look) -> Finding | None:
    """Probes timing out: with liveness kills -> network delay; without -> CPU."""
    timeouts = look.events(lambda r, m: r == "Unhealthy" and ("timeout" in m or "deadline" in m))
    if not timeouts:
        return None
    app = _top(timeouts)
    kills = look.events(lambda r, m: r == "Killing" and "liveness" in m)
    fault = FaultType.NETWORK_DELAY if kills.get(app) else FaultType.CPU_SATURATION
    return Finding(fault, app, "probe_timeouts", f"{timeouts[app]} probe timeouts")


USER_FAILURES_FLOOR = 0.02
"""Failures per second on a route users must see beyond twice the baseline to count."""


def route_failures(look: Look) -> Finding | None:
    """Users failing on a few routes (Locust's stats) while the entry point logs no error for
    them -> a rule in front of the entry point on those routes (an HTTP route fault is the
    entry point's). If the entry point served clearly fewer of them than before, the
    requests never reached it (abort); otherwise a proxy replaced the answers it gave."""
    (users_before, users_during), (before, during) = look.users, look.entry
    failing = [
        scope
        for scope, now in users_during.items()
        if now.failures_per_s
        > 2 * users_before.get(scope, UserRoute(0.0, 0.0)).failures_per_s + USER_FAILURES_FLOOR
    ]
    if not failing or 2 * len(failing) > len(look.topology.routes):
        return None  # nothing failing, or most routes: the entry point itself is down
    for scope in failing:
        logged = during.status_5xx.get(scope, 0) + during.handler_errors.get(scope, 0)
        if logged > 2 * (before.status_5xx.get(scope, 0) + before.handler_errors.get(scope, 0)):
            return None  # the handler saw a backend fail: not a rule in front of it
    pre_s, during_s = span_s(look.case.logs, "pre"), span_s(look.case.logs, "during")
    served_before = sum(before.served.get(s, 0) for s in failing) / pre_s
    served_during = sum(during.served.get(s, 0) for s in failing) / during_s
    fault = FaultType.HTTP_ABORT if served_during < 0.5 * served_before else FaultType.HTTP_ERROR
    entry = look.topology.entrypoint
    return Finding(fault, entry, "route_failures", ", ".join(sorted(failing)))


def http_at_entry(look: Look) -> Finding | None:
    """Entry-point 5xx or canceled requests on routes whose handlers saw no error -> an HTTP
    rule on the entry point (a route rule sits in front of it, whatever the route reaches)."""
    before, during = look.entry
    aborted = [s for s, n in during.canceled.items() if n > 2 * before.canceled.get(s, 0)]
    replaced = [
        s
        for s, n in during.status_5xx.items()
        if n > 2 * before.status_5xx.get(s, 0) and n > 2 * during.handler_errors.get(s, 0)
    ]
    if not aborted and not replaced:
        return None
    fault = FaultType.HTTP_ABORT if len(aborted) >= len(replaced) else FaultType.HTTP_ERROR
    scopes = aborted if fault == FaultType.HTTP_ABORT else replaced
    entry = look.topology.entrypoint
    return Finding(fault, entry, "http_at_entry", ", ".join(sorted(scopes)))


_BLAMED = {
    "dns_error": FaultType.DNS_FAULT,
    "connect_timeout": FaultType.DNS_RANDOM,
    "deadline": FaultType.NETWORK_DELAY,
    "refused": FaultType.POD_FAILURE,
}


def named_by_callers(look: Look) -> Finding | None:
    """Callers naming the peer they cannot resolve / reach in time / connect to."""
    rise = look.blamed
    for kind in ("dns_error", "connect_timeout", "deadline", "refused"):
        votes = {app: v for (k, app), v in rise.items() if k == kind and v >= 1.0}
        if votes:
            app = _top(votes)
            return Finding(_BLAMED[kind], app, f"callers_{kind}", f"{votes[app]:.1f} votes")
    return None


def slow_routes(look: Look) -> Finding | None:
    """Entry-point latency up on some routes and nothing failing -> network delay there."""
    before, during = look.entry
    slow = [
        s
        for s, ms in during.took_ms.items()
        if ms > 1.5 * before.took_ms.get(s, ms) and ms - before.took_ms.get(s, ms) > 50
    ]
    if not slow:
        return None
    service = route_service(slow, look.topology)
    return Finding(FaultType.NETWORK_DELAY, service, "slow_routes", ", ".join(sorted(slow)))


RULES: tuple[Callable[[Look], Finding | None], ...] = (
    oom,
    pause_image,
    cpu_pegged,
    memory_growth,
    route_failures,
    http_at_entry,
    named_by_callers,
    probe_timeouts,
    slow_routes,
)
"""The rules in the order they are tried."""


def diagnose(case: Case) -> Finding:
    """The first rule that fires, else the keyword reading."""
    look = Look(case)
    for rule in RULES:
        found = rule(look)
        if found is not None:
            return found
    fault, _ = fault_by_keywords(case.logs)
    service = loudest_service(case.logs, case.action_space.targets, case.topology.entrypoint)
    return Finding(fault, service, "keyword_fallback", "no rule fired")


def _rule(ctx: RunContext) -> Iterator[Prediction]:
    for case in ctx.reader.cases():
        found = diagnose(case)
        yield mapped(
            case.case_id,
            case.action_space,
            case.topology,
            found.service,
            found.fault,
            method=ctx.method,
            evidence={"rule": found.rule, "clue": found.clue},
        )


RULE = Baseline("rule", "Hand rules over logs, events, metrics and state.", _rule)
