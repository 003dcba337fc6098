"""Replay's own safety envelope: what no dataset can widen.

A dataset is data from elsewhere: even when its checksums match, its action spaces and
faults are only what its author wrote. Before replay touches a cluster it checks each plan
and fault against rules that come from r2act itself: targets are deployments the system's
release ships (never its load generator), replica counts and memory limits stay within the
default recovery policy's ceilings, and everything is rendered into the namespace of the
target replay was given (the manifest's), never one a record names.
"""

from __future__ import annotations

from r2act.actions.policy import DEFAULT_POLICY
from r2act.schema import (
    BenchmarkRecord,
    IncreaseMemoryLimit,
    RecoveryPlan,
    RepairDependency,
    ScaleOut,
    memory_bytes,
)
from r2act.systems import SYSTEMS


def allowed_targets(system: str) -> frozenset[str]:
    """Deployments a plan or a fault may touch: the system's own, minus its load generator."""
    topology = SYSTEMS.get(system)
    if topology is None:
        return frozenset()
    names = {d.name for d in topology.deployments}
    names.discard(topology.load_generator or "")
    return frozenset(names)


def envelope_problem(plan: RecoveryPlan, record: BenchmarkRecord) -> str | None:
    """Why replaying ``plan`` for ``record`` is out of bounds, else None (the namespace is
    never a record's: everything is rendered into the replay target's)."""
    allowed = allowed_targets(record.metadata.system)
    if not allowed:
        return f"system {record.metadata.system!r} is not one r2act knows"
    if record.fault.service not in allowed:
        return f"the fault targets {record.fault.service!r}, not a deployment of the system"
    target = getattr(plan, "target", None)
    if target is not None and target not in allowed:
        return f"{plan.operation} targets {target!r}, not a deployment of the system"
    if isinstance(plan, RepairDependency):
        dependency = plan.dependency.split(":", 1)[0]
        if dependency not in allowed:
            return f"repair_dependency names {dependency!r}, not a deployment of the system"
    if isinstance(plan, ScaleOut) and plan.replicas > DEFAULT_POLICY.max_replicas:
        return (
            f"scale_out to {plan.replicas} replicas exceeds the policy's ceiling of "
            f"{DEFAULT_POLICY.max_replicas}"
        )
    if isinstance(plan, IncreaseMemoryLimit):
        ceiling = DEFAULT_POLICY.max_memory_limit
        if memory_bytes(plan.memory_limit) > memory_bytes(ceiling):
            return f"memory limit {plan.memory_limit} exceeds the policy's ceiling of {ceiling}"
    return None
