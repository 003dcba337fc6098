"""The action space of an incident: what may be executed, read off the deployment state.

The space is shared by all incidents of one system (paper Fig. 6a: seven candidate
operations, one action space), so a method cannot guess the answer from the space. Its
field domains come from the topology: existing deployments (the load generator is
infrastructure, never a target), replica and memory bounds from the policy, the entry-point
routes each service sits on and the feature flags its code reads, and each service's
dependency endpoints plus its own.
"""

from __future__ import annotations

from r2act.actions.policy import DEFAULT_POLICY, RecoveryPolicy
from r2act.errors import DataError
from r2act.schema import ActionSpace, Operation, PlannedIncident, Topology


def action_space(
    incident: PlannedIncident, topology: Topology, policy: RecoveryPolicy = DEFAULT_POLICY
) -> ActionSpace:
    """The admissible plans for ``incident`` given the deployments of ``topology``.

    Raises DataError when the incident does not belong to the topology, since labels
    computed against the wrong system would be silently meaningless."""
    if incident.system != topology.system:
        raise DataError(
            f"incident {incident.id}: system {incident.system!r} is not the topology's "
            f"{topology.system!r} (label it against its own system)"
        )
    space = system_action_space(topology, policy)
    if incident.service not in space.targets:
        raise DataError(
            f"incident {incident.id}: service {incident.service!r} is not a deployment of "
            f"{topology.system} (use one of {', '.join(space.targets)})"
        )
    return space


def system_action_space(topology: Topology, policy: RecoveryPolicy = DEFAULT_POLICY) -> ActionSpace:
    """The action space every incident of ``topology`` shares."""
    targets = [d for d in topology.deployments if d.name != topology.load_generator]
    lowest_scale_out = min((d.replicas + 1 for d in targets), default=1)
    return ActionSpace(
        operations=list(Operation),
        targets=[d.name for d in targets],
        min_replicas=min(lowest_scale_out, policy.max_replicas),
        max_replicas=policy.max_replicas,
        max_memory_limit=policy.max_memory_limit,
        current_memory_limits={d.name: d.main.memory_limit for d in targets},
        scopes={d.name: scopes for d in targets if (scopes := rollback_scopes(topology, d.name))},
        dependencies={
            d.name: endpoints
            for d in targets
            if (endpoints := dependency_endpoints(topology, d.name))
        },
    )


def dependency_endpoints(topology: Topology, service: str) -> list[str]:
    """Endpoints ``service`` calls, in call order, then its own (its name as callers use it).

    The own endpoint is included because a DNS fault on S breaks S's name: repairing that
    name on S's side (``repair_dependency(S, S:port)``) is a legitimate plan."""
    endpoints: list[str] = []
    for callee in topology.dependencies(service):
        endpoint = topology.deployment(callee).endpoint
        if endpoint is not None and endpoint not in endpoints:
            endpoints.append(endpoint)
    own = topology.deployment(service).endpoint
    if own is not None and own not in endpoints:
        endpoints.append(own)
    return endpoints


def rollback_scopes(topology: Topology, service: str) -> list[str]:
    """What a ``rollback_config`` on ``service`` may undo: its entry-point routes, then the
    feature flags its code reads (its system's ``flags``, in flag-file order), since
    reverting a flag is undoing that service's configuration (``docs/faults.md``,
    "Recovering a flag fault")."""
    routes = [route.scope for route in topology.routes_of(service)]
    return routes + flag_scopes(topology, service)


def flag_scopes(topology: Topology, service: str) -> list[str]:
    """The keys of the feature flags ``service``'s code reads, in flag-file order."""
    # The registry imports every installed system: loaded on first use (as in the policy).
    from r2act.systems import system_of

    return list(system_of(topology).flags_read_by(service))
