"""P-: exactly two plausible invalid plans per incident, each tagged with how it fails.

The rule (``docs/faults.md``, "Invalid plans"), as in the paper's two per incident:

1. **Right place, wrong operation**: the operation the mechanics say does not recover the
   fault, on the deployment the gold plan acts on (scale_out for pod, delay and CPU faults,
   a restart for memory and DNS faults), or, for an HTTP rule, the rollback of a healthy
   route (the most-trafficked other route).
2. **Right operation, wrong place**: the gold operation where the symptom shows instead of
   where the fault is: the root cause's neighbour (its primary caller, else its first
   dependency by name) for pod, delay, CPU and memory faults; a backend on the faulty route
   for HTTP faults; the callee itself for DNS faults (whose gold acts on the caller).

Where the valid plan is bound to the incident's evidence (``r2act-mechanics/3``), the near
miss comes first, since it is the mistake a method that got the diagnosis right still makes:
for a DNS fault the right repair on another caller that holds the same address (the
primary caller when the fault is elsewhere, else the first other holder by name); for a
memory fault the right operation with a limit that does not clear the working set under
load (one 32Mi step above the lowered limit when that stays under it, else the whole Mi
just under it), tagged ``invalid_scope`` (a field of the right plan that does not recover).

For a feature flag, the near miss is the revert of another flag the service reads
(``invalid_scope``: the flag turned on stays on), then a restart of the service
(``wrong_operation``: the flag service still serves the flag, so the new pod reads the
same variant).

Candidates are tried in that order and a candidate any valid pattern accepts is skipped
(the next one in the fault type's list takes its place), so P- never contradicts P+ under
any policy; ``no_action`` closes every list. Every candidate lies inside the action space,
so its tag is the only thing wrong with it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from r2act.actions.injected import (
    address_holder,
    broken_caller,
    broken_endpoint,
    injected_flag,
    injected_scope,
    lowered_limit,
    stress_workers,
)
from r2act.actions.policy import PlanRule, Reach, RecoveryPolicy, Role
from r2act.actions.space import flag_scopes
from r2act.errors import DataError
from r2act.schema import (
    ActionSpace,
    FailureMode,
    FaultType,
    IncreaseMemoryLimit,
    InvalidPlan,
    NoAction,
    Operation,
    PlannedIncident,
    PlanPattern,
    RepairDependency,
    RestartService,
    RollbackConfig,
    ScaleOut,
    Topology,
    format_mebibytes,
    memory_bytes,
)

PER_INCIDENT = 2
"""Invalid plans listed per incident (the paper's 604 for 302 incidents)."""
_MI = 2**20
_STEP = 32 * _MI


def invalid_plans(
    incident: PlannedIncident,
    topology: Topology,
    space: ActionSpace,
    valid: Sequence[PlanPattern],
    policy: RecoveryPolicy,
) -> list[InvalidPlan]:
    """P- for an incident whose valid plans are ``valid``: the first two candidates no
    pattern accepts (module docstring)."""
    chosen: list[InvalidPlan] = []
    for candidate in [
        *_near_misses(incident, topology, space, policy),
        *_candidates(incident, topology, space),
    ]:
        if any(p.matches(candidate.plan) for p in valid):
            continue
        if any(c.plan == candidate.plan for c in chosen) or not space.contains(candidate.plan):
            continue
        chosen.append(candidate)
        if len(chosen) == PER_INCIDENT:
            return chosen
    raise DataError(  # pragma: no cover - no_action closes every list and is never valid
        f"incident {incident.id}: policy {policy} leaves fewer than {PER_INCIDENT} invalid plans"
    )


@dataclass(frozen=True)
class Neighbour:
    """A service next to the root cause on the call graph, the one a symptom-chaser blames."""

    name: str
    is_caller: bool

    def symptom(self, service: str) -> str:
        """Why blaming it is plausible, in a few words."""
        if self.is_caller:
            return f"{self.name} shows errors from calling {service}"
        return f"{self.name} is a dependency {service} waits on"


def neighbour(service: str, topology: Topology, space: ActionSpace) -> Neighbour | None:
    """The primary caller of ``service`` if it is a target, else its first callee by name."""
    caller = topology.primary_caller(service)
    if caller is not None and caller in space.targets:
        return Neighbour(caller, is_caller=True)
    for name in sorted(topology.dependencies(service)):
        if name != service and name in space.targets:
            return Neighbour(name, is_caller=False)
    return None


def _near_misses(
    incident: PlannedIncident, topology: Topology, space: ActionSpace, policy: RecoveryPolicy
) -> Iterator[InvalidPlan]:
    """The right operation with the field the incident's evidence decides wrong."""
    fault, service = FaultType(incident.fault.type), incident.service
    if fault in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
        if policy.rules_for(fault, topology)[0].role != Role.ADDRESS_HOLDER:
            return
        holder = address_holder(broken_caller(incident), service, topology)
        endpoint = broken_endpoint(incident, topology)
        primary = topology.primary_caller(service)
        others = [c for c in topology.address_holders(service) if c != holder]
        others.sort(key=lambda c: (c != primary, c))
        for other in others[:1]:
            yield _wrong_target(
                RepairDependency(operation="repair_dependency", target=other, dependency=endpoint),
                f"{other} also holds {service}'s address, but its value is right; the broken "
                f"one is in {holder}, whose logs show the address it dials.",
            )
        yield _wrong_operation(
            RestartService(operation="restart_service", target=holder),
            f"A restart of {holder} keeps the broken variable in its pod template.",
        )
    elif fault == FaultType.FEATURE_FLAG:
        flag = injected_flag(incident)
        others = [s for s in flag_scopes(topology, service) if s != flag]
        for other in [s for s in others if s in space.scopes.get(service, [])][:1]:
            yield InvalidPlan(
                plan=RollbackConfig(operation="rollback_config", target=service, scope=other),
                failure_mode=FailureMode.INVALID_SCOPE,
                rationale=(
                    f"{service} reads {other} too, but that flag is at its default; the one "
                    f"turned on is {flag}, and reverting another leaves it on."
                ),
            )
    elif fault == FaultType.MEMORY_PRESSURE and policy.memory_headroom is not None:
        lowered = lowered_limit(incident)
        working_set = policy.memory_bounds(topology.deployment(service)).working_set
        if lowered is None or working_set is None:
            return
        step = lowered + _STEP
        limit = step if step < working_set else (working_set - 1) // _MI * _MI
        if limit <= lowered:
            return
        yield InvalidPlan(
            plan=IncreaseMemoryLimit(
                operation="increase_memory_limit",
                target=service,
                memory_limit=format_mebibytes(limit),
            ),
            failure_mode=FailureMode.INVALID_SCOPE,
            rationale=(
                f"{format_mebibytes(limit)} is above the lowered {format_mebibytes(lowered)} "
                f"but under the {format_mebibytes(working_set)} working set under load: "
                "the container is OOM-killed again."
            ),
        )


def _candidates(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    fault = FaultType(incident.fault.type)
    service = incident.service
    blamed = neighbour(service, topology, space)
    if fault in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        yield from _http(incident, topology, space)
    elif fault in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
        yield from _dns(incident, topology, space)
    elif fault == FaultType.FEATURE_FLAG:
        yield _wrong_operation(
            RestartService(operation="restart_service", target=service),
            "The flag service still serves the flag: the new pod asks it on its next call and "
            "gets the same variant.",
        )
        if blamed is not None:
            yield _wrong_target(
                RestartService(operation="restart_service", target=blamed.name),
                f"{blamed.symptom(service)}, but the flag that is on is read by {service}.",
            )
    elif fault == FaultType.MEMORY_PRESSURE:
        yield _wrong_operation(
            RestartService(operation="restart_service", target=service),
            "The new container gets the same lowered limit and is OOM-killed again.",
        )
        if blamed is not None:
            limit = memory_bytes(space.current_memory_limits[blamed.name])
            yield _wrong_target(
                IncreaseMemoryLimit(
                    operation="increase_memory_limit",
                    target=blamed.name,
                    memory_limit=format_mebibytes(limit + 32 * 2**20),
                ),
                f"{blamed.symptom(service)}; only {service}'s limit was lowered.",
            )
    else:
        replicas = min(topology.deployment(service).replicas + 1, space.max_replicas)
        yield _wrong_operation(
            ScaleOut(operation="scale_out", target=service, replicas=replicas),
            _scale_out_fails(incident, topology, replicas),
        )
        yield _wrong_operation(
            RestartService(operation="restart_service", target=service),
            "A restart puts the same load back on the same capacity.",
        )
        if blamed is not None:
            yield _wrong_target(
                RestartService(operation="restart_service", target=blamed.name),
                f"{blamed.symptom(service)}, but the fault is on {service}.",
            )
        yield from _route_rollback(service, topology, space)
    yield InvalidPlan(
        plan=NoAction(operation="no_action"),
        failure_mode=FailureMode.NO_OP,
        rationale="An injected fault does not go away by waiting inside the window.",
    )


def _route_rollback(service: str, topology: Topology, space: ActionSpace) -> Iterator[InvalidPlan]:
    """On the entry point (the only service with routes to roll back), undoing a route rule
    that is not there: the slow or failing pages suggest one, but the fault is in the pods."""
    routes = sorted(topology.routes_of(service), key=lambda r: (-r.weight, r.scope))
    if service != topology.entrypoint or not routes:
        return
    scope = routes[0].scope
    if scope in space.scopes.get(service, []):
        yield _wrong_operation(
            RollbackConfig(operation="rollback_config", target=service, scope=scope),
            f"No rule sits on {scope}; the pages suffer from the fault in {service}'s pods.",
        )


def _scale_out_fails(incident: PlannedIncident, topology: Topology, replicas: int) -> str:
    """Why adding pods leaves the fault in place (only candidates no pattern accepts are
    listed, so for a CPU fault on the entry point this is a too-small scale-out)."""
    fresh = Reach.FRESH_CONNECTIONS
    if not PlanRule(Operation.SCALE_OUT, reach=fresh).applies(incident.service, topology):
        return (
            "Clients keep their pinned connection to the faulty pod; new replicas get no "
            "traffic from them."
        )
    fault = FaultType(incident.fault.type)
    if fault == FaultType.POD_FAILURE:
        return (
            "Users' new connections go to the added pod, but the failed pod stays in the "
            "Deployment, not ready, so the Deployment never has its replicas available."
        )
    if fault == FaultType.CPU_SATURATION:
        workers = stress_workers(incident)
        return (
            f"With {replicas} pods the stressed one still takes 1/{replicas} of users' "
            f"requests, more than the 1/{workers + 1} of its CPU its {workers} stressor "
            "worker(s) leave it."
        )
    return (
        f"Each user request still lands on the faulty pod with chance 1/{replicas}; those "
        "requests keep failing or stay slow."
    )


def _http(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    entry, scope = topology.entrypoint, injected_scope(incident)
    healthy = sorted(
        (r for r in topology.routes if r.scope != scope), key=lambda r: (-r.weight, r.scope)
    )
    if healthy:
        other = healthy[0].scope
        yield InvalidPlan(
            plan=RollbackConfig(operation="rollback_config", target=entry, scope=other),
            failure_mode=FailureMode.INVALID_SCOPE,
            rationale=f"{other} is a healthy route; the rule is on {scope}.",
        )
    route = next((r for r in topology.routes if r.scope == scope), None)
    backends = sorted(
        s
        for s in ([] if route is None else route.services)
        if s != entry and scope in space.scopes.get(s, [])
    )
    for backend in backends[:1]:
        yield _wrong_target(
            RollbackConfig(operation="rollback_config", target=backend, scope=scope),
            f"{backend} serves {scope} too, but the faulty rule sits on {entry}'s route.",
        )
        yield _wrong_target(
            RestartService(operation="restart_service", target=backend),
            f"{backend} is healthy; the errors come from a rule on {entry}.",
        )


def _dns(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    service, endpoint = incident.service, broken_endpoint(incident, topology)
    yield _wrong_operation(
        RestartService(operation="restart_service", target=service),
        f"{service} is healthy; its caller's address for it ({endpoint}) is wrong.",
    )
    if endpoint in space.dependencies.get(service, []):
        yield _wrong_target(
            RepairDependency(operation="repair_dependency", target=service, dependency=endpoint),
            f"Nothing is wrong on {service}'s side; the caller holds the broken address.",
        )
    caller = topology.primary_caller(service)
    if caller is not None and caller in space.targets:
        yield _wrong_operation(
            RestartService(operation="restart_service", target=caller),
            f"A restart of {caller} keeps the broken variable in its pod template.",
        )


def _wrong_operation(
    plan: RestartService | ScaleOut | RollbackConfig, rationale: str
) -> InvalidPlan:
    return InvalidPlan(plan=plan, failure_mode=FailureMode.WRONG_OPERATION, rationale=rationale)


def _wrong_target(
    plan: RestartService | RollbackConfig | RepairDependency | IncreaseMemoryLimit,
    rationale: str,
) -> InvalidPlan:
    return InvalidPlan(plan=plan, failure_mode=FailureMode.WRONG_TARGET, rationale=rationale)
