"""The operation catalogue: what each recovery operation needs and what it means.

One table serves three readers: documentation, LLM prompts (``describe_operations``) and a
test that keeps it in step with the plan models of ``r2act.schema.plans``. Domains are
written against the incident's ``ActionSpace`` (``A``), because a field is admissible only
relative to the deployment state it was derived from.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from r2act.schema import FaultType, Operation


@dataclass(frozen=True)
class FieldDomain:
    """A required plan field and the values it may take."""

    name: str
    domain: str


@dataclass(frozen=True)
class OperationSpec:
    """One row of the catalogue (paper Table II; typical faults per ``r2act-mechanics/3``)."""

    operation: Operation
    fields: tuple[FieldDomain, ...]
    meaning: str
    typical_faults: tuple[FaultType, ...]

    def signature(self) -> str:
        """``name(field, ...)``, the form prompts and docs show."""
        return f"{self.operation.value}({', '.join(f.name for f in self.fields)})"


_TARGET = FieldDomain("target", "a deployment in A.targets")

OPERATION_CATALOG: Mapping[Operation, OperationSpec] = MappingProxyType(
    {
        Operation.RESTART_SERVICE: OperationSpec(
            Operation.RESTART_SERVICE,
            (_TARGET,),
            "Rolling restart of the target's pods with the same template.",
            (FaultType.POD_FAILURE, FaultType.NETWORK_DELAY, FaultType.CPU_SATURATION),
        ),
        Operation.SCALE_OUT: OperationSpec(
            Operation.SCALE_OUT,
            (_TARGET, FieldDomain("replicas", "integer in [A.min_replicas, A.max_replicas]")),
            "Raise the target's replica count so added pods absorb the load (only where "
            "every request opens a new connection, as users' requests to the entry point do; "
            "pinned gRPC clients keep their pod).",
            (FaultType.CPU_SATURATION,),
        ),
        Operation.ROLLBACK_DEPLOYMENT: OperationSpec(
            Operation.ROLLBACK_DEPLOYMENT,
            (_TARGET,),
            "Revert the target's pod template to its previous revision.",
            (FaultType.MEMORY_PRESSURE, FaultType.DNS_FAULT, FaultType.DNS_RANDOM),
        ),
        Operation.INCREASE_MEMORY_LIMIT: OperationSpec(
            Operation.INCREASE_MEMORY_LIMIT,
            (
                _TARGET,
                FieldDomain(
                    "memory_limit",
                    "memory quantity above the target's current limit (its observations "
                    "show it; A.current_memory_limits lists the shipped ones), "
                    "at most A.max_memory_limit",
                ),
            ),
            "Raise the main container's memory limit so the working set fits.",
            (FaultType.MEMORY_PRESSURE,),
        ),
        Operation.ROLLBACK_CONFIG: OperationSpec(
            Operation.ROLLBACK_CONFIG,
            (
                _TARGET,
                FieldDomain(
                    "scope", "a route rule 'METHOD /path' or a flag key in A.scopes[target]"
                ),
            ),
            "Remove the faulty route rule on the target's inbound HTTP route, or revert one "
            "feature flag the target reads to its default variant.",
            (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT, FaultType.FEATURE_FLAG),
        ),
        Operation.REPAIR_DEPENDENCY: OperationSpec(
            Operation.REPAIR_DEPENDENCY,
            (
                _TARGET,
                FieldDomain("dependency", "an endpoint 'name:port' in A.dependencies[target]"),
            ),
            "Restore the address the target uses to reach one dependency endpoint.",
            (FaultType.DNS_FAULT, FaultType.DNS_RANDOM),
        ),
        Operation.NO_ACTION: OperationSpec(
            Operation.NO_ACTION,
            (),
            "Do nothing; never a valid recovery for an injected fault.",
            (),
        ),
    }
)
"""Every operation, in ``Operation`` order, with its required fields and meaning."""


def describe_operations() -> str:
    """The catalogue as plain text lines, one per operation, for prompts and help texts."""
    lines = []
    for spec in OPERATION_CATALOG.values():
        domains = "; ".join(f"{f.name}: {f.domain}" for f in spec.fields) or "no fields"
        lines.append(f"- {spec.signature()}: {spec.meaning} ({domains})")
    return "\n".join(lines)
