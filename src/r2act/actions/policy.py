"""Recovery-semantics policies: which plans recover which fault, named and versioned.

Labels are a policy decision, so every record carries ``str(policy)``. Three policies ship:

- ``r2act-mechanics/3`` (the default) follows what recovers under the real mechanics of
  the shipped deployment, bound to what the incident shows. Those mechanics are the
  system's own, so its rules come from the system (``System.recovery_rules``; Online
  Boutique's are in ``systems/onlineboutique/policy.py``, following ``docs/faults.md``),
  with the DNS fault in the caller drawn per incident from every holder of the address;
  this module adds what holds for every system: a memory limit must clear the container's
  working set under load with ``memory_headroom`` to spare, within the replica and limit
  bounds.
- ``r2act-mechanics/2`` is version 3 with the DNS fault always in the primary caller and
  any memory limit above the shipped one (the system's version-2 rules); it stays
  selectable to re-audit runs collected before version 3 (on newer runs its DNS labels
  miss the drawn caller).
- ``paper-table-ii/1`` keeps the paper's Table II (one operation per fault type, on the
  labelled service) for reproduction; it carries its own rules, the same for every system.

A rule (``schema.rules.PlanRule``) names an operation and whose deployment it acts on;
the first rule of a fault type gives the gold plan, the others are further valid plans.
Changing any rule changes labels: bump ``version`` when you do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from r2act.errors import DataError
from r2act.schema import DeploymentSpec, FaultType, Operation, Topology, memory_bytes
from r2act.schema.rules import PlanRule, Reach, Role, RuleTable, ScopeKind

__all__ = [
    "DEFAULT_POLICY",
    "MECHANICS_POLICY",
    "MECHANICS_V2_POLICY",
    "MEMORY_HEADROOM",
    "PAPER_POLICY",
    "POLICIES",
    "MemoryBounds",
    "PlanRule",
    "Reach",
    "RecoveryPolicy",
    "Role",
    "ScopeKind",
    "policy_named",
    "primary_caller",
    "primary_callers",
]


_M, _P = Operation, Role

_TABLE_II: RuleTable = MappingProxyType(
    {
        FaultType.POD_FAILURE: (PlanRule(_M.RESTART_SERVICE),),
        FaultType.NETWORK_DELAY: (PlanRule(_M.RESTART_SERVICE),),
        FaultType.CPU_SATURATION: (PlanRule(_M.SCALE_OUT),),
        FaultType.MEMORY_PRESSURE: (PlanRule(_M.INCREASE_MEMORY_LIMIT),),
        FaultType.HTTP_ERROR: (PlanRule(_M.ROLLBACK_CONFIG),),
        FaultType.HTTP_ABORT: (PlanRule(_M.ROLLBACK_CONFIG),),
        FaultType.DNS_FAULT: (PlanRule(_M.REPAIR_DEPENDENCY, _P.SERVICE_OR_CALLER),),
        FaultType.DNS_RANDOM: (PlanRule(_M.REPAIR_DEPENDENCY, _P.SERVICE_OR_CALLER),),
        # Not in the paper (its systems have no flags): its rollback_config, scoped to the flag.
        FaultType.FEATURE_FLAG: (PlanRule(_M.ROLLBACK_CONFIG, scope=ScopeKind.FLAG),),
    }
)


@dataclass(frozen=True)
class MemoryBounds:
    """The new limits that recover a memory incident, in bytes (both inclusive)."""

    lowest: int
    highest: int
    working_set: int | None = None
    """The working set under load the lowest limit clears (None: bounded by the manifest)."""


@dataclass(frozen=True)
class RecoveryPolicy:
    """A named, versioned mapping from a fault type to the plans that recover it."""

    name: str
    version: int
    rules: RuleTable | None = None
    """Valid plan shapes per fault type, the first giving the gold plan, when the policy
    carries its own (the same for every system); ``None``: each system's own rules for this
    policy (``System.recovery_rules``)."""
    max_replicas: int = 10
    """Largest replica count any scale_out may request."""
    max_memory_limit: str = "2Gi"
    """Largest memory limit any plan may set."""
    memory_ceiling_factor: int = 4
    """A raised limit beyond this multiple of the shipped one is over-provisioning."""
    memory_headroom: float | None = None
    """A new limit must clear the container's working set under load by this share
    (``Topology.working_set_bytes``); None: any limit above the shipped one recovers."""

    def __str__(self) -> str:
        return f"{self.name}/{self.version}"

    def __hash__(self) -> int:
        return hash((self.name, self.version))

    def table(self, topology: Topology) -> RuleTable:
        """The rules this policy labels ``topology``'s incidents with: its own, else those
        its system supplies for it. Raises DataError when the system supplies none."""
        if self.rules is not None:
            return self.rules
        # The registry imports every installed system (and their topologies' quantity
        # parser): loaded on first use, so importing the CLI's verbs stays light.
        from r2act.systems import system_of

        system = system_of(topology)
        table = None if system.recovery_rules is None else system.recovery_rules.table(str(self))
        if table is None:
            raise DataError(
                f"policy {self}: system {system.name!r} supplies no recovery rules for it "
                "(give its System recovery_rules for this policy, docs/systems.md, or label "
                f"with a policy that carries its own rules: {PAPER_POLICY})"
            )
        return table

    def rules_for(self, fault_type: FaultType, topology: Topology) -> tuple[PlanRule, ...]:
        """Every valid plan shape for ``fault_type`` on ``topology``'s system, gold first
        (whatever the service)."""
        fault = FaultType(fault_type)
        rules = self.table(topology).get(fault)
        if not rules:
            raise DataError(
                f"policy {self}: system {topology.system!r}'s rules name no plan that "
                f"recovers {fault} (add one to its recovery_rules)"
            )
        return rules

    def rules_on(
        self, fault_type: FaultType, service: str, topology: Topology
    ) -> tuple[PlanRule, ...]:
        """The valid plan shapes for ``fault_type`` on ``service``, gold first."""
        rules = self.rules_for(fault_type, topology)
        return tuple(r for r in rules if r.applies(service, topology))

    def operation_for(self, fault_type: FaultType, topology: Topology) -> Operation:
        """The gold plan's operation for ``fault_type`` on ``topology``'s system."""
        return self.rules_for(fault_type, topology)[0].operation

    def memory_bounds(self, deployment: DeploymentSpec) -> MemoryBounds:
        """Limits that undo a lowered limit, at most the ceiling (both bounds inclusive).

        With ``memory_headroom`` the lowest is the working set under load plus the headroom
        (the mechanism: a limit under the working set is OOM-killed under load, whatever
        the manifest says); without, it is just above the shipped limit (restoring exactly
        the shipped value is what ``rollback_deployment`` does)."""
        shipped = memory_bytes(deployment.main.memory_limit)
        highest = min(self.memory_ceiling_factor * shipped, memory_bytes(self.max_memory_limit))
        working_set: int | None = None
        if self.memory_headroom is None:
            lowest = shipped + 1
        else:
            working_set = memory_bytes(
                deployment.main.working_set or deployment.main.memory_request
            )
            lowest = math.ceil(working_set * (1 + self.memory_headroom))
        if lowest > highest:
            raise DataError(
                f"{deployment.name}: no memory limit from {lowest} bytes up to policy "
                f"{self}'s ceiling {highest} bytes recovers it (raise max_memory_limit)"
            )
        return MemoryBounds(lowest, highest, working_set)


def primary_caller(service: str, topology: Topology) -> str:
    """The caller whose ``<S>_ADDR`` a DNS fault on ``service`` rewrites (the PRIMARY_CALLER
    role): the entry point when it calls S directly, otherwise S's only caller
    (``Topology.primary_caller``). Raises DataError when there is none."""
    caller = topology.primary_caller(service)
    if caller is None:
        raise DataError(
            f"{service}: no primary caller (no entry point or single caller calls it), so a "
            "DNS fault has no caller to break (pick a service another deployment calls)"
        )
    return caller


def primary_callers(topology: Topology) -> dict[str, str]:
    """Every service with a primary caller -> that caller, for docs and checks."""
    return {
        d.name: caller
        for d in topology.deployments
        if (caller := topology.primary_caller(d.name)) is not None
    }


MEMORY_HEADROOM = 0.2
"""Headroom a new limit keeps above the working set under load (a named parameter): an
operator sizing a limit from a short window leaves room for growth the window did not
show. 20% sits above the simulated working set's 8% movement below its peak and above the
15% safety margin the Kubernetes VPA recommender adds to its estimate by default
(``--recommendation-margin-fraction``)."""

MECHANICS_POLICY = RecoveryPolicy(
    name="r2act-mechanics", version=3, memory_headroom=MEMORY_HEADROOM
)
"""What recovers under the real mechanics of each system (its ``recovery_rules``; Online
Boutique's follow ``docs/faults.md``), bound to the incident's evidence; the default.
Version 3: a DNS fault sits in any caller that holds the address (drawn per incident), and
a memory plan must clear the working set under load. Version 2: the shipped load generator
opens a connection per request, so a scale-out of the entry point relieves its CPU fault
(version 1 assumed Locust's kept-alive connections)."""

MECHANICS_V2_POLICY = RecoveryPolicy(name="r2act-mechanics", version=2)
"""Version 2 (each system's version-2 rules), kept to re-audit runs collected before
version 3."""

PAPER_POLICY = RecoveryPolicy(name="paper-table-ii", version=1, rules=_TABLE_II)
"""The paper's Table II, kept for reproducing its numbers."""

DEFAULT_POLICY = MECHANICS_POLICY

POLICIES: Mapping[str, RecoveryPolicy] = MappingProxyType(
    {str(p): p for p in (MECHANICS_POLICY, MECHANICS_V2_POLICY, PAPER_POLICY)}
)
"""Every shipped policy by ``name/version``."""


def policy_named(name: str) -> RecoveryPolicy:
    """The shipped policy called ``name`` (``name/version``; a bare name takes the newest)."""
    if "/" in name:
        policy = POLICIES.get(name)
    else:
        versions = [p for p in POLICIES.values() if p.name == name]
        policy = max(versions, key=lambda p: p.version) if versions else None
    if policy is None:
        raise DataError(f"unknown policy {name!r} (use one of: {', '.join(POLICIES)})")
    return policy
