"""A scripted method that decides from tool answers only (the JSON an agent would read).

It exists to show that the tools expose what a correct decision needs. It asks the tool
environment through :func:`r2act.agents.tools.call` (so it sees exactly the rendered
answers, bounded and truncated like an agent does), diagnoses a service and a fault type
from the evidence the upstream components leave, and turns the diagnosis into a plan with
the policy's mapper (:func:`r2act.actions.map_rca`, which needs only the action space and
the topology, both tool answers) except where the evidence names a field the mapper
cannot know (the faulty route of an HTTP rule).

Evidence, in the order checked:

- ``dns_fault``: a caller logs ``lookup <name> ...: no such host`` (S is the name), or gRPC's
  ``name resolver error: produced zero addresses`` (S is the callee its message names).
- ``dns_random``: a caller logs ``dial tcp <ip>:<port>: i/o timeout``; S is the callee of
  that caller with that port (the line's text breaks a tie between callees on one port).
- ``memory_pressure``: a deployment's memory limit during the fault is below the shipped
  limit the topology lists, or its pod's last termination was OOMKilled.
- ``pod_failure``: a pod runs the pause image (Chaos Mesh's pod-failure swaps it in).
- ``cpu_saturation``: a pod's CPU throttling rose many times over its baseline.
- ``http_error`` / ``http_abort``: users fail on one route (the load generator's stats
  rows) with no backend error at the entry point; the failing route is the rule's scope,
  and it is an abort when the entry point stopped serving that route.
- ``network_delay``: entry-point latency rose on a set of routes; S is the service whose
  routes match that set best (Jaccard over the topology's routes).
- last, ``pod_failure`` again when a pod's readiness fell and nothing else explains it.
"""

from __future__ import annotations

import fnmatch
import json
import re
import statistics
from collections import Counter
from dataclasses import dataclass
from typing import Any

from r2act.actions import map_rca
from r2act.agents.env import CaseEnvironment
from r2act.agents.tools import call
from r2act.schema import FaultType, RollbackConfig

_LOOKUP = re.compile(r"lookup ([a-z0-9.-]+?)(?:\.invalid)?(?:\.[a-z0-9.-]+)? on ")
_NOUNS = {
    "productcatalogservice": "product",
    "currencyservice": "currenc",
    "checkoutservice": "order",
    "recommendationservice": "recommendation",
    "adservice": "ads",
}
"""The noun an Online Boutique caller's error message uses for a callee, where it is not
the callee's name without 'service' (frontend: 'could not retrieve product', 'failed to
complete the order')."""
_DIAL = re.compile(r"dial tcp (\d+\.\d+\.\d+\.\d+):(\d+): i/o timeout")
_STATS_ROW = re.compile(r"^(GET|POST)\s+(/\S*)\s.*\|\s*[0-9.]+\s+([0-9.]+)\s*$")
"""A Locust stats row of one request entry: method, name, and its current failures/s."""


@dataclass(frozen=True)
class Decision:
    """What the policy answers, and why."""

    service: str | None
    fault_type: FaultType | None
    plan: dict[str, Any] | None
    why: str


def _ask(env: CaseEnvironment, tool: str, **args: Any) -> Any:
    answer, error = call(env, tool, args)
    value = json.loads(answer)
    if error:
        return None
    return value


class Policy:
    """One case's investigation."""

    def __init__(self, env: CaseEnvironment) -> None:
        self.env = env
        self.topology = _ask(env, "topology")
        self.space = _ask(env, "action_space")
        services = _ask(env, "services")
        self.pod_service = {p: s["name"] for s in services["services"] for p in s["pods"]}
        self.deployments = {d["name"]: d for d in self.topology["deployments"]}

    def lines(self, contains: str, service: str | None = None, phase: str = "during") -> list[Any]:
        args: dict[str, Any] = {"phase": phase, "contains": contains, "limit": 200}
        if service:
            args["service"] = service
        answer = _ask(self.env, "logs", **args)
        return [] if answer is None else answer["lines"]

    # -- evidence ----------------------------------------------------------------------

    def named_callee(self, caller: str, text: str) -> str | None:
        """The callee of ``caller`` an error line is about: named outright, else by the noun
        the caller's error message uses for it ('could not retrieve cart')."""
        callees = self.deployments.get(caller, {}).get("calls", [])
        for callee in callees:
            if callee in text:
                return str(callee)
        lowered = text.lower()
        for callee in callees:
            stem = callee.removesuffix("service")
            nouns = {stem, _NOUNS.get(callee, stem)}
            if any(re.search(rf"\b{re.escape(n)}", lowered) for n in nouns if n):
                return str(callee)
        return None

    def dns_fault(self) -> tuple[str, str] | None:
        votes: Counter[tuple[str, str]] = Counter()
        for _, pod, text in self.lines("no such host"):
            found = _LOOKUP.search(text)
            if found and found.group(1) in self.deployments:
                votes[(found.group(1), self.pod_service.get(pod, ""))] += 1
        for _, pod, text in self.lines("produced zero addresses"):
            caller = self.pod_service.get(pod, "")
            callee = self.named_callee(caller, text.split("produced zero addresses")[0])
            if callee:
                votes[(callee, caller)] += 1
        return votes.most_common(1)[0][0] if votes else None

    def dns_random(self) -> tuple[str, str] | None:
        votes: Counter[tuple[str, str]] = Counter()
        for _, pod, text in self.lines("i/o timeout"):
            found = _DIAL.search(text)
            if not found or found.group(1).startswith("10.96."):
                continue
            caller = self.pod_service.get(pod, "")
            port = found.group(2)
            callees = [
                c for c in self.deployments.get(caller, {}).get("calls", [])
                if (self.deployments[c]["endpoint"] or "").endswith(f":{port}")
            ]  # fmt: skip
            named = [c for c in callees if c in text]
            if named or callees:
                votes[((named or callees)[0], caller)] += 1
        return votes.most_common(1)[0][0] if votes else None

    def memory(self) -> str | None:
        state = _ask(self.env, "state", kind="deployment", phase="during")
        if state is not None:
            for item in state["items"]:
                shipped = self.deployments.get(item["name"], {}).get("memory_limit")
                container = self.deployments.get(item["name"], {}).get("container")
                now = item["memory_limits"].get(container)
                if shipped and now and _mib(now) < _mib(shipped):
                    return str(item["name"])
        events = _ask(self.env, "events", phase="during", reason="OOMKilling")
        for event in (events or {}).get("events", []):
            return self.pod_service.get(event["object"].split("/", 1)[1])
        return None

    def paused(self) -> str | None:
        events = _ask(self.env, "events", phase="during", reason="Pulled")
        for event in (events or {}).get("events", []):
            if "pause" in event["message"]:
                return self.pod_service.get(event["object"].split("/", 1)[1])
        return None

    def unready(self) -> str | None:
        ready = _ask(self.env, "metrics", query="ready")
        worst: tuple[float, str] | None = None
        for series in (ready or {}).get("series", []):
            phases = series["phases"]
            if "pre" in phases and "during" in phases:
                drop = phases["pre"]["mean"] - phases["during"]["mean"]
                if drop > 0.3 and (worst is None or drop > worst[0]):
                    worst = (drop, series["labels"].get("service", ""))
        return worst[1] if worst else None

    def cpu(self) -> str | None:
        throttled = _ask(self.env, "metrics", query="cpu_throttled")
        best: tuple[float, str] | None = None
        for series in (throttled or {}).get("series", []):
            phases = series["phases"]
            if "pre" in phases and "during" in phases:
                rise = phases["during"]["mean"] - 5 * max(phases["pre"]["mean"], 0.01)
                if rise > 0 and (best is None or rise > best[0]):
                    best = (rise, series["labels"].get("service", ""))
        return best[1] if best else None

    def route_of(self, method: str, path: str) -> str | None:
        for route in self.topology["routes"]:
            route_method, pattern = route["scope"].split(" ", 1)
            if route_method == method and fnmatch.fnmatchcase(path, pattern):
                return str(route["scope"])
        return None

    def latency(self) -> dict[str, tuple[float, float]]:
        """p90 took_ms of the entry point per route, before and during."""
        entry = self.topology["entrypoint"]
        out: dict[str, dict[str, list[float]]] = {}
        for phase in ("pre", "during"):
            for _, _, text in self.lines('"request complete"', service=entry, phase=phase):
                try:
                    row = json.loads(text)
                    scope = self.route_of(row["http.req.method"], row["http.req.path"])
                    took = float(row["http.resp.took_ms"])
                except (ValueError, KeyError, TypeError):
                    continue
                if scope is not None:
                    out.setdefault(scope, {}).setdefault(phase, []).append(took)
        return {
            scope: (_p90(v.get("pre", [])), _p90(v.get("during", [])))
            for scope, v in out.items()
            if v.get("pre") and v.get("during")
        }

    def user_failures(self, phase: str) -> dict[str, float]:
        """Mean current failures/s per route in the load generator's stats rows."""
        per_route: dict[str, list[float]] = {}
        for _, _, text in self.lines("%) |", service="loadgenerator", phase=phase):
            found = _STATS_ROW.match(text)
            scope = found and self.route_of(found.group(1), found.group(2))
            if found and scope:
                per_route.setdefault(scope, []).append(float(found.group(3)))
        return {scope: statistics.fmean(v) for scope, v in per_route.items()}

    def served_share(self, scope: str, phase: str) -> float:
        """Share of the entry point's completed requests (a sample) on ``scope``."""
        lines = self.lines('"request complete"', service=self.topology["entrypoint"], phase=phase)
        hits = 0
        for _, _, text in lines:
            try:
                row = json.loads(text)
                hits += self.route_of(row["http.req.method"], row["http.req.path"]) == scope
            except (ValueError, KeyError, TypeError):
                continue
        return hits / max(len(lines), 1)

    def http(self) -> tuple[FaultType, str] | None:
        """Users fail on one route (Locust's stats) while the entry point logs no backend
        error: a rule on that route; abort when the entry point stopped serving it."""
        before, during = self.user_failures("pre"), self.user_failures("during")
        failing = [s for s, f in during.items() if f > 2 * before.get(s, 0.0) + 0.02]
        backend = self.lines("rpc error", service=self.topology["entrypoint"])
        if len(failing) != 1 or len(backend) > 5:
            return None
        scope = failing[0]
        gone = self.served_share(scope, "during") < 0.5 * self.served_share(scope, "pre")
        return (FaultType.HTTP_ABORT if gone else FaultType.HTTP_ERROR), scope

    def delay(self) -> str | None:
        slow = {s for s, (pre, during) in self.latency().items() if during > 3 * max(pre, 20.0)}
        if not slow:
            return None
        routes: dict[str, set[str]] = {}
        for route in self.topology["routes"]:
            for service in route["services"]:
                routes.setdefault(service, set()).add(route["scope"])
        routes[self.topology["entrypoint"]] = {r["scope"] for r in self.topology["routes"]}
        scored = sorted(
            (-len(slow & have) / len(slow | have), name) for name, have in routes.items()
        )
        return scored[0][1]

    # -- decision ----------------------------------------------------------------------

    def plan(self, service: str, fault: FaultType) -> dict[str, Any] | None:
        from r2act.schema import ActionSpace, Topology
        from r2act.systems import SYSTEMS

        space = ActionSpace.model_validate(self.space)
        topology: Topology = next(
            t for t in SYSTEMS.values() if t.entrypoint == self.topology["entrypoint"]
        )
        return map_rca(service, fault, space, topology).model_dump(mode="json")

    def decide(self) -> Decision:
        found = self.dns_fault()
        if found:
            return self._dns(*found, FaultType.DNS_FAULT, "cannot resolve it")
        found = self.dns_random()
        if found:
            return self._dns(*found, FaultType.DNS_RANDOM, "dials a wrong IP")
        service = self.memory()
        if service:
            return self._with(service, FaultType.MEMORY_PRESSURE, "limit below shipped / OOM")
        service = self.paused()
        if service:
            return self._with(service, FaultType.POD_FAILURE, "its pod runs the pause image")
        service = self.cpu()
        if service:
            return self._with(service, FaultType.CPU_SATURATION, "CPU throttling rose")
        http = self.http()
        if http:
            entry = self.topology["entrypoint"]
            plan = RollbackConfig(operation="rollback_config", target=entry, scope=http[1])
            why = f"users fail on {http[1]}"
            return Decision(entry, http[0], plan.model_dump(mode="json"), why)
        service = self.delay()
        if service:
            return self._with(service, FaultType.NETWORK_DELAY, "latency on its routes")
        service = self.unready()
        if service:
            return self._with(service, FaultType.POD_FAILURE, "its readiness fell")
        return Decision(None, None, None, "no evidence found")

    def _with(self, service: str, fault: FaultType, why: str) -> Decision:
        return Decision(service, fault, self.plan(service, fault), why)

    def rolled_out(self) -> set[str]:
        """Deployments whose template revision grew from ``pre`` to ``during``."""

        def revisions(phase: str) -> dict[str, int]:
            state = _ask(self.env, "state", kind="deployment", phase=phase) or {}
            return {str(i["name"]): int(i.get("revision", 0)) for i in state.get("items", [])}

        before, during = revisions("pre"), revisions("during")
        return {name for name, rev in during.items() if rev > before.get(name, rev)}

    def _dns(self, service: str, caller: str, fault: FaultType, why: str) -> Decision:
        """The repair goes to the caller holding the broken address: the one of S's callers
        that rolled out a new template (a caller up the chain only relays the error)."""
        holders = [
            name
            for name, d in self.deployments.items()
            if service in d.get("calls", []) and name in self.rolled_out()
        ]
        holder = holders[0] if len(holders) == 1 else caller
        plan = self.plan(service, fault)
        if plan is not None and plan.get("operation") == "repair_dependency":
            plan = {**plan, "target": holder}
        return Decision(service, fault, plan, f"{holder} {why}")


def _mib(quantity: str) -> float:
    from r2act.schema import memory_bytes

    return memory_bytes(quantity) / 2**20


def _p90(values: list[float]) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return (
        ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))] if len(ordered) > 1 else ordered[0]
    )


def decide(env: CaseEnvironment) -> Decision:
    """The scripted policy's answer for the case behind ``env``."""
    return Policy(env).decide()


__all__ = ["Decision", "decide", "statistics"]
