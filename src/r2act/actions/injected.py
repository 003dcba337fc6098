"""What a fault broke, read from its parameters: the HTTP route rule, the DNS name and the
caller holding it, the lowered memory limit, the number of CPU stressor workers, the
feature flag turned on.

These are the incident-specific fields a coarse service/type diagnosis does not know, and
the reason a fixed mapper cannot always produce a valid plan.
"""

from __future__ import annotations

from r2act.errors import DataError
from r2act.schema import PlannedIncident, Topology, memory_bytes


def injected_scope(incident: PlannedIncident) -> str:
    """The route rule an HTTP fault injected, as a plan names it: ``"METHOD /path"``."""
    params = incident.fault.parameters
    method, path = params.get("method"), params.get("path")
    if isinstance(method, str) and isinstance(path, str):
        return f"{method} {path}"
    scope = params.get("scope")
    if isinstance(scope, str):
        return scope
    raise DataError(f"incident {incident.id}: an HTTP fault needs parameters method and path")


def broken_endpoint(incident: PlannedIncident, topology: Topology) -> str:
    """The endpoint a DNS fault on S breaks: S's name as its callers address it."""
    endpoint = topology.deployment(incident.service).endpoint
    if endpoint is None:
        raise DataError(
            f"incident {incident.id}: {incident.service} has no Service port, so no DNS name "
            "to break (pick a service that callers reach over a Service)"
        )
    return endpoint


def stress_workers(incident: PlannedIncident) -> int:
    """How many CPU stressor workers a CPU fault runs in the pod (``workers``; 1 if unset)."""
    workers = incident.fault.parameters.get("workers", 1)
    if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
        raise DataError(f"incident {incident.id}: CPU stress needs a positive integer 'workers'")
    return workers


def broken_caller(incident: PlannedIncident) -> str | None:
    """The caller whose address a DNS fault rewrote (its ``caller`` parameter), if any."""
    caller = incident.fault.parameters.get("caller")
    return caller if isinstance(caller, str) else None


def address_holder(caller: str | None, service: str, topology: Topology) -> str:
    """The deployment a DNS plan must act on: ``caller``, checked against the topology."""
    if caller is None:
        raise DataError(
            f"{service}: a DNS fault's parameters name no caller (plan it again with this "
            "version of r2act, which records the caller holding the broken address)"
        )
    if caller not in topology.address_holders(service):
        raise DataError(
            f"{service}: {caller!r} holds no address of {service} "
            f"(callers that do: {', '.join(topology.address_holders(service)) or 'none'})"
        )
    return caller


def lowered_limit(incident: PlannedIncident) -> int | None:
    """The memory limit a memory fault set, in bytes (None when it names none)."""
    limit = incident.fault.parameters.get("memory_limit")
    return memory_bytes(limit) if isinstance(limit, str) else None


def injected_flag(incident: PlannedIncident) -> str:
    """The key of the feature flag a flag fault turned on (its ``flag`` parameter)."""
    flag = incident.fault.parameters.get("flag")
    if not isinstance(flag, str) or not flag:
        raise DataError(
            f"incident {incident.id}: a feature_flag fault needs parameter flag (plan it "
            "again with this version of r2act, which records the flag it turns on)"
        )
    return flag
