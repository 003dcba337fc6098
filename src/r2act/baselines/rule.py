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

A careful operator also knows that a healthy cluster is noisy: probes time out now and
then, tolerated calls warn, CPU is bursty and throttled, heaps saw. So no rule fires on
"any line more than before". A symptom read from logs or metrics must persist over
``PERSIST`` consecutive slices of the during window (``signals.slices``) and exceed the
pre window's own spread (mean + ``K_SD`` sd) as well as a ratio; an event counts only when
it is absent from the pre window or much rarer there (``RARER``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from functools import cached_property

import pandas as pd

from r2act.baselines.base import Baseline, RunContext, mapped, policy_of
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
from r2act.baselines.signals import (
    ERRORISH,
    app_of,
    beyond,
    bounds_of,
    contains,
    persistent_rise,
    persists,
    slices,
    span_s,
    window,
)
from r2act.schema import ContainerState, FaultType, Prediction

RARER = 3.0
"""How much more often (per second) an event must happen during the fault than before it
to count: a kind the cluster already shows at that rate is background."""
BLAME_RATIO = 2.0
"""How much a caller's complaints about one peer must rise, per slice, over the pre rate."""


@dataclass(frozen=True)
class Finding:
    """A rule's answer and the clue it rests on."""

    fault: FaultType
    service: str
    rule: str
    clue: str


Slices = list[pd.DataFrame]


class Look:
    """One incident as the rules read it; each reading is computed once, when first asked."""

    def __init__(self, case: Case) -> None:
        self.case = case
        self.topology = case.topology

    def bounds(self, phase: str) -> tuple[float, float] | None:
        """A phase's span as the logs show it (the load generator logs all along), else as
        the metrics do: the slices every table is cut into."""
        return bounds_of(self.case.logs, phase) or bounds_of(self.case.metrics, phase)

    def log_slices(self, phase: str) -> Slices:
        """The phase's log lines in ``SUBWINDOWS`` slices of its span."""
        return slices(self.case.logs, phase, bounds=self.bounds(phase))

    def slice_s(self, phase: str) -> float:
        """Seconds per slice of a phase."""
        span = self.bounds(phase)
        return max(1.0, (span[1] - span[0]) / len(self.log_slices(phase) or [0])) if span else 1.0

    @cached_property
    def entry(self) -> tuple[EntryRequests, EntryRequests]:
        """The entry point's requests before and during the fault."""
        logs = self.case.logs
        return entry_requests(logs, "pre", self.topology), entry_requests(
            logs, "during", self.topology
        )

    @cached_property
    def entry_slices(self) -> tuple[list[EntryRequests], list[EntryRequests]]:
        """The entry point's requests per slice of the pre and the during window."""
        return tuple(  # type: ignore[return-value]
            [entry_requests(part, phase, self.topology) for part in self.log_slices(phase)]
            for phase in ("pre", "during")
        )

    @cached_property
    def users(self) -> tuple[dict[str, UserRoute], dict[str, UserRoute]]:
        """What the load generator saw per route before and during the fault."""
        logs = self.case.logs
        return user_routes(logs, "pre", self.topology), user_routes(logs, "during", self.topology)

    @cached_property
    def user_slices(self) -> tuple[list[dict[str, UserRoute]], list[dict[str, UserRoute]]]:
        """What the load generator saw per route in each slice of pre and during."""
        return tuple(  # type: ignore[return-value]
            [user_routes(part, phase, self.topology) for part in self.log_slices(phase)]
            for phase in ("pre", "during")
        )

    @cached_property
    def blamed(self) -> dict[tuple[str, str], float]:
        """(symptom, service) votes per second of callers whose complaints about a peer rose
        persistently: beyond the pre slices' spread and ``BLAME_RATIO`` times their mean in
        ``PERSIST`` consecutive slices of the fault; the value is the rise over the window."""

        def votes(phase: str) -> list[dict[tuple[str, str], float]]:
            out = []
            for part in self.log_slices(phase):
                lines = part["line"] if not part.empty else part.get("line", pd.Series())
                errors = lines[contains(lines, ERRORISH)] if len(lines) else lines
                out.append(blame(errors, self.topology) if len(errors) else {})
            return out

        before, during = votes("pre"), votes("during")
        pre_s, during_s = self.slice_s("pre"), self.slice_s("during")
        keys = {k for part in during for k in part}
        out: dict[tuple[str, str], float] = {}
        for key in keys:
            baseline = [part.get(key, 0.0) / pre_s for part in before]
            rates = [part.get(key, 0.0) / during_s for part in during]
            flags = [beyond(baseline, r, BLAME_RATIO, 1.0 / during_s) for r in rates]
            if persists(flags):
                mean = sum(baseline) / len(baseline) if baseline else 0.0
                out[key] = sum(rates) * during_s - mean * during_s * len(rates)
        return out

    def events(self, match: Callable[[str, str], bool], least: int = 1) -> Counter[str]:
        """Per app, how many more during-window events matching (reason, message) happened
        than the pre window's rate predicts, for the apps where they are absent before or
        at least ``RARER`` times rarer there, and at least ``least`` more."""
        during_s, pre_s = span_s(self.case.logs, "during"), span_s(self.case.logs, "pre")
        during, before = self._event_counts(match, "during"), self._event_counts(match, "pre")
        out: Counter[str] = Counter()
        for app, n in during.items():
            expected = before.get(app, 0) * during_s / pre_s
            if n >= RARER * expected and n - expected >= least:
                out[app] = max(1, round(n - expected))
        return out

    def _event_counts(self, match: Callable[[str, str], bool], phase: str) -> Counter[str]:
        rows = window(self.case.events, phase)
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
    """CPU throttling up tenfold, or usage up fourfold, on a pod, and staying there (beyond
    the pre scrapes' spread in ``PERSIST`` slices) -> CPU saturation. Baseline throttling
    from bursty calls and GC is a fraction of a period per second; a pegged pod loses
    nearly every period."""
    metrics, topology, span = look.case.metrics, look.topology, look.bounds("during")
    throttled = persistent_rise(
        metrics, "cpu_throttled", topology, ratio=10.0, floor=0.05, bounds=span
    )
    usage = persistent_rise(metrics, "cpu_usage", topology, ratio=4.0, floor=0.01, bounds=span)
    hot = {a: r for a, r in throttled.items() if r >= 10.0}
    hot.update({a: r for a, r in usage.items() if r >= 4.0 and a not in hot})
    if not hot:
        return None
    app = _top(hot)
    return Finding(FaultType.CPU_SATURATION, app, "cpu_pegged", f"x{hot[app]:.1f} vs pre")


def memory_growth(look: Look) -> Finding | None:
    """Working set up by a fifth or more and staying up -> memory pressure (below the
    limit). A collector's sawtooth swings a few per cent and comes back down."""
    span = look.bounds("during")
    growth = persistent_rise(
        look.case.metrics, "memory_working_set", look.topology, ratio=1.2, floor=1e6, bounds=span
    )
    grown = {a: r for a, r in growth.items() if r >= 1.2}
    if not grown:
        return None
    app = _top(grown)
    return Finding(FaultType.MEMORY_PRESSURE, app, "memory_growth", f"x{grown[app]:.2f} vs pre")


PROBE_FAILURES = 3
"""Probe timeouts beyond the pre rate needed: the kubelet's default ``failureThreshold``,
the number of failures in a row it takes to act on a probe. One slow answer is the
latency tail."""


def probe_timeouts(look: Look) -> Finding | None:
    """Probes timing out, far more than before: with liveness kills -> network delay;
    without -> CPU."""
    timeouts = look.events(
        lambda r, m: r == "Unhealthy" and ("timeout" in m or "deadline" in m), PROBE_FAILURES
    )
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
    (_, users_during), (before, during) = look.users, look.entry
    pre_slices, during_slices = look.user_slices
    none = UserRoute(0.0, 0.0)

    def rising(scope: str) -> bool:
        baseline = [part.get(scope, none).failures_per_s for part in pre_slices]
        mean = sum(baseline) / len(baseline) if baseline else 0.0
        flags = [
            None
            if not part
            else beyond(baseline, part.get(scope, none).failures_per_s, 2.0, 0.0)
            and part.get(scope, none).failures_per_s > 2 * mean + USER_FAILURES_FLOOR
            for part in during_slices
        ]
        return persists(flags)

    failing = [scope for scope in users_during if rising(scope)]
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


def _entry_rise(look: Look, count: Callable[[EntryRequests, str], float]) -> list[str]:
    """Routes whose entry-point count per second rises beyond the pre slices' spread and
    doubles in ``PERSIST`` consecutive slices of the fault."""
    pre, during = look.entry_slices
    pre_s, during_s = look.slice_s("pre"), look.slice_s("during")
    scopes = {s for part in during for s in (*part.canceled, *part.status_5xx, *part.took_ms)}
    out = []
    for scope in sorted(scopes):
        baseline = [count(part, scope) / pre_s for part in pre]
        floor = 0.5 / during_s  # half an occurrence per slice: a single one is no rise
        flags = [beyond(baseline, count(part, scope) / during_s, 2.0, floor) for part in during]
        if persists(flags):
            out.append(scope)
    return out


def http_at_entry(look: Look) -> Finding | None:
    """Entry-point 5xx or canceled requests, persistently more than before, on routes whose
    handlers saw no error -> an HTTP rule on the entry point (a route rule sits in front of
    it, whatever the route reaches)."""
    _, during = look.entry
    aborted = _entry_rise(look, lambda part, s: part.canceled.get(s, 0))
    replaced = [
        s
        for s in _entry_rise(look, lambda part, s: part.status_5xx.get(s, 0))
        if during.status_5xx.get(s, 0) > 2 * during.handler_errors.get(s, 0)
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
    """Entry-point latency up on some routes, in ``PERSIST`` consecutive slices, beyond
    the pre slices' spread and by half and 50 ms -> network delay there."""
    before, during = look.entry
    pre_slices, during_slices = look.entry_slices

    def slow_on(scope: str) -> bool:
        usual = before.took_ms.get(scope)
        if usual is None:
            return False
        baseline = [p.took_ms[scope] for p in pre_slices if scope in p.took_ms]
        flags = [
            None
            if scope not in part.took_ms
            else beyond(baseline, part.took_ms[scope], 1.5, 1.0)
            and part.took_ms[scope] - usual > 50
            for part in during_slices
        ]
        return persists(flags)

    slow = [s for s in during.took_ms if slow_on(s)]
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
    for record in ctx.reader.records:
        case = ctx.reader.case(record)
        found = diagnose(case)
        yield mapped(
            case.case_id,
            case.action_space,
            case.topology,
            found.service,
            found.fault,
            method=ctx.method,
            policy=policy_of(record),
            evidence={"rule": found.rule, "clue": found.clue},
        )


RULE = Baseline("rule", "Hand rules over logs, events, metrics and state.", _rule)
