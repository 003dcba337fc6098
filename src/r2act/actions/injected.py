"""What a fault broke, read from its parameters: the HTTP route rule, the DNS name, the
number of CPU stressor workers.

These are the incident-specific fields a coarse service/type diagnosis does not know, and
the reason a fixed mapper cannot always produce a valid plan.
"""

from __future__ import annotations

from r2act.errors import DataError
from r2act.schema import PlannedIncident, Topology


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
