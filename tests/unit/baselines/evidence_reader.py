"""A scripted evidence reader: gold RCA plus what the method-visible tables show.

The control next to "gold RCA + mapper". It is handed the incident's root-cause service and
fault type (as the mapper is) and nothing else from the answers: every other field of its
plan comes from the ``full`` view of the case (``baselines.reader.Case``), the way an
operator would read them off the cluster:

- DNS faults: the caller holding the broken address is the holder of the service's address
  (``Topology.address_holders``) whose Deployment rolled out a new revision between the
  ``pre`` and ``during`` states (a changed pod template); the address to restore is the
  service's own endpoint.
- memory faults: the new limit is the peak ``memory_working_set`` of the service's main
  container in the ``pre`` window, with the published policy's headroom
  (``actions.policy.MEMORY_HEADROOM``), rounded up to a 32Mi step.
- HTTP faults: the route rule is the route whose load-generator failures (the
  ``locust-stats`` request series) grew most from ``pre`` to ``during``.
- pod, CPU and delay faults: a restart of the service.

If it reaches Valid >= 0.98, every field a valid plan needs is readable from the view.
"""

from __future__ import annotations

import json
import math

import pandas as pd

from r2act.actions.policy import MEMORY_HEADROOM
from r2act.baselines.reader import Case
from r2act.schema import (
    FaultType,
    IncreaseMemoryLimit,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    format_mebibytes,
)

_STEP = 32 * 2**20


def read_plan(case: Case, service: str, fault_type: FaultType) -> RecoveryPlan:
    """The plan the evidence of ``case`` supports for a diagnosed ``service`` and type."""
    if fault_type in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
        return _dns(case, service)
    if fault_type == FaultType.MEMORY_PRESSURE:
        return _memory(case, service)
    if fault_type in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        return _http(case, service)
    return RestartService(operation="restart_service", target=service)


def _revisions(case: Case, phase: str) -> dict[str, int]:
    state = case.states.get(phase)
    return {} if state is None else {d.name: d.revision for d in state.deployments}


def rolled_out_holder(case: Case, service: str) -> str | None:
    """The holder of ``service``'s address whose template changed during the incident."""
    before, during = _revisions(case, "pre"), _revisions(case, "during")
    changed = [
        holder
        for holder in case.topology.address_holders(service)
        if during.get(holder, 0) > before.get(holder, 0)
    ]
    return changed[0] if len(changed) == 1 else None


def _dns(case: Case, service: str) -> RecoveryPlan:
    endpoint = case.topology.deployment(service).endpoint
    holder = rolled_out_holder(case, service) or case.topology.primary_caller(service)
    assert endpoint is not None and holder is not None
    return RepairDependency(operation="repair_dependency", target=holder, dependency=endpoint)


def peak_working_set(case: Case, service: str) -> float | None:
    """The largest working set of ``service``'s main container in the ``pre`` window."""
    if case.metrics is None:
        return None
    state = case.states.get("pre")
    pods = set() if state is None else {p.name for p in state.pods if p.app == service}
    container = case.topology.deployment(service).main.name
    rows = case.metrics[
        (case.metrics["phase"] == "pre") & (case.metrics["query"] == "memory_working_set")
    ]
    values = [
        float(value)
        for labels, value in zip(rows["labels"], rows["value"], strict=True)
        if (found := json.loads(labels)).get("pod") in pods and found.get("container") == container
    ]
    return max(values) if values else None


def _memory(case: Case, service: str) -> RecoveryPlan:
    peak = peak_working_set(case, service)
    if peak is None:
        return RestartService(operation="restart_service", target=service)
    limit = math.ceil(math.ceil(peak * (1 + MEMORY_HEADROOM)) / _STEP) * _STEP
    return IncreaseMemoryLimit(
        operation="increase_memory_limit", target=service, memory_limit=format_mebibytes(limit)
    )


def failing_route(requests: pd.DataFrame | None) -> str | None:
    """The route whose load-generator failures grew most from ``pre`` to ``during``."""
    if requests is None or requests.empty:
        return None
    users = requests[(requests["source"] == "locust-stats") & (requests["route"] != "*")]
    rate = users.groupby(["phase", "route"])["errors_per_s"].mean()
    growth = {
        route: rate.get(("during", route), 0.0) - rate.get(("pre", route), 0.0)
        for route in users["route"].unique()
    }
    best = max(growth, key=lambda r: (growth[r], r), default=None)
    return best if best is not None and growth[best] > 0 else None


def _http(case: Case, service: str) -> RecoveryPlan:
    route = failing_route(case.requests)
    if route is None or route not in case.action_space.scopes.get(service, []):
        return RestartService(operation="restart_service", target=service)
    return RollbackConfig(operation="rollback_config", target=service, scope=route)
