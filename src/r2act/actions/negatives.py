"""P-: plausible invalid plans for an incident, each tagged with how it fails.

These are not random negatives. Each one is a mistake a method that localised the fault
correctly, or nearly, would make: the generic operation for the symptom (restart a service
whose DNS name is broken), the right operation on the service that shows the symptom (a
caller), the right operation with the wrong route or dependency, a value outside the
action space, or doing nothing. Where a mistake can be stated inside the action space it
is, so that its tag is the only thing wrong with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from r2act.actions.injected import broken_endpoint, injected_scope
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
    RollbackDeployment,
    ScaleOut,
    Topology,
    memory_bytes,
)

_Builder = Callable[[PlannedIncident, Topology, ActionSpace], Iterator[InvalidPlan]]


def invalid_plans(
    incident: PlannedIncident,
    topology: Topology,
    space: ActionSpace,
    valid: PlanPattern,
) -> list[InvalidPlan]:
    """P- for an incident whose valid plans are ``valid``: at least two, always a no-op.

    Every builder yields a wrong operation first; a candidate the pattern would accept is
    dropped, so P- never contradicts P+."""
    builder = _BUILDERS[valid.operation]
    plans = [n for n in builder(incident, topology, space) if not valid.matches(n.plan)]
    plans.append(
        InvalidPlan(
            plan=NoAction(operation="no_action"),
            failure_mode=FailureMode.NO_OP,
            rationale="An injected fault does not go away by waiting inside the window.",
        )
    )
    return plans


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
    """The first caller of ``service`` that is a target, else its first callee that is."""
    for name in topology.callers(service):
        if name != service and name in space.targets:
            return Neighbour(name, is_caller=True)
    for name in topology.dependencies(service):
        if name != service and name in space.targets:
            return Neighbour(name, is_caller=False)
    return None


def _restart_negatives(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    service = incident.service
    deployment = topology.deployment(service)
    if incident.fault.type == FaultType.NETWORK_DELAY:
        replicas = min(deployment.replicas + 1, space.max_replicas)
        yield _wrong_operation(
            ScaleOut(operation="scale_out", target=service, replicas=replicas),
            "Added replicas sit behind the same delayed interface; capacity is not the problem.",
        )
    elif incident.fault.type == FaultType.MEMORY_PRESSURE:
        doubled = 2 * memory_bytes(deployment.main.memory_limit)
        if doubled <= memory_bytes(space.max_memory_limit):
            yield _wrong_operation(
                IncreaseMemoryLimit(
                    operation="increase_memory_limit",
                    target=service,
                    memory_limit=f"{doubled // 2**20}Mi",
                ),
                "The stress fits under the current limit; a larger limit keeps the stressed "
                "container running instead of replacing it.",
            )
    else:
        yield _wrong_operation(
            RollbackDeployment(operation="rollback_deployment", target=service),
            "Nothing was deployed; the previous revision has the same template.",
        )
    blamed = neighbour(service, topology, space)
    if blamed is not None:
        yield InvalidPlan(
            plan=RestartService(operation="restart_service", target=blamed.name),
            failure_mode=FailureMode.WRONG_TARGET,
            rationale=f"{blamed.symptom(service)}, but the fault is on {service}.",
        )


def _scale_out_negatives(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    service = incident.service
    yield _wrong_operation(
        RestartService(operation="restart_service", target=service),
        "A restart puts the same load back on the same capacity.",
    )
    if space.max_replicas < 1000:  # ScaleOut itself rejects more than 1000 replicas
        yield InvalidPlan(
            plan=ScaleOut(operation="scale_out", target=service, replicas=space.max_replicas + 1),
            failure_mode=FailureMode.INVALID_STRUCTURE,
            rationale=f"More replicas than the action space allows ({space.max_replicas}).",
        )
    blamed = neighbour(service, topology, space)
    if blamed is not None:
        replicas = min(topology.deployment(blamed.name).replicas + 1, space.max_replicas)
        yield InvalidPlan(
            plan=ScaleOut(operation="scale_out", target=blamed.name, replicas=replicas),
            failure_mode=FailureMode.WRONG_TARGET,
            rationale=f"{blamed.symptom(service)}; only {service} is CPU-saturated.",
        )


def _memory_negatives(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    service = incident.service
    current = memory_bytes(space.current_memory_limits[service])
    yield _wrong_operation(
        RestartService(operation="restart_service", target=service),
        "The new container overflows again: request plus stress exceeds the limit.",
    )
    yield InvalidPlan(
        plan=IncreaseMemoryLimit(
            operation="increase_memory_limit",
            target=service,
            memory_limit=f"{max(current // 2**21, 1)}Mi",
        ),
        failure_mode=FailureMode.INVALID_STRUCTURE,
        rationale="Half the current limit: a decrease, outside the action space.",
    )
    blamed = neighbour(service, topology, space)
    if blamed is not None:
        doubled = 2 * memory_bytes(space.current_memory_limits[blamed.name])
        if doubled <= memory_bytes(space.max_memory_limit):
            yield InvalidPlan(
                plan=IncreaseMemoryLimit(
                    operation="increase_memory_limit",
                    target=blamed.name,
                    memory_limit=f"{doubled // 2**20}Mi",
                ),
                failure_mode=FailureMode.WRONG_TARGET,
                rationale=f"{blamed.symptom(service)}; only {service} is under memory stress.",
            )


def _http_negatives(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    service, scope = incident.service, injected_scope(incident)
    yield _wrong_operation(
        RestartService(operation="restart_service", target=service),
        f"The rule on {scope} is route configuration; new pods are behind the same rule.",
    )
    own_scopes = space.scopes.get(service, [])
    others = [s for s in own_scopes if s != scope] or [
        r.scope for r in topology.routes if r.scope != scope
    ]
    if others:
        yield InvalidPlan(
            plan=RollbackConfig(operation="rollback_config", target=service, scope=others[0]),
            failure_mode=FailureMode.INVALID_SCOPE,
            rationale=f"{others[0]} is a healthy route; the fault is on {scope}.",
        )
    route = next((r for r in topology.routes if r.scope == scope), None)
    sharing = [] if route is None else route.services
    blamed = next(
        (
            s
            for s in sharing
            if s not in (service, topology.entrypoint) and scope in space.scopes.get(s, [])
        ),
        None,
    )
    if blamed is not None:
        yield InvalidPlan(
            plan=RollbackConfig(operation="rollback_config", target=blamed, scope=scope),
            failure_mode=FailureMode.WRONG_TARGET,
            rationale=f"{blamed} serves the same route, but the faulty rule is on {service}.",
        )


def _dns_negatives(
    incident: PlannedIncident, topology: Topology, space: ActionSpace
) -> Iterator[InvalidPlan]:
    service, endpoint = incident.service, broken_endpoint(incident, topology)
    yield _wrong_operation(
        RestartService(operation="restart_service", target=service),
        f"Callers cannot resolve {endpoint}; restarting {service} does not repair that.",
    )
    repair_points = [service] + [c for c in topology.callers(service) if c in space.targets]
    for target in repair_points:
        other = next((d for d in space.dependencies.get(target, []) if d != endpoint), None)
        if other is not None:
            yield InvalidPlan(
                plan=RepairDependency(
                    operation="repair_dependency", target=target, dependency=other
                ),
                failure_mode=FailureMode.INVALID_SCOPE,
                rationale=f"{other} resolves fine; the broken name is {endpoint}.",
            )
            return


def _wrong_operation(
    plan: RestartService | ScaleOut | IncreaseMemoryLimit | RollbackDeployment, rationale: str
) -> InvalidPlan:
    return InvalidPlan(plan=plan, failure_mode=FailureMode.WRONG_OPERATION, rationale=rationale)


_BUILDERS: dict[Operation, _Builder] = {
    Operation.RESTART_SERVICE: _restart_negatives,
    Operation.ROLLBACK_DEPLOYMENT: _restart_negatives,
    Operation.SCALE_OUT: _scale_out_negatives,
    Operation.INCREASE_MEMORY_LIMIT: _memory_negatives,
    Operation.ROLLBACK_CONFIG: _http_negatives,
    Operation.REPAIR_DEPENDENCY: _dns_negatives,
}
