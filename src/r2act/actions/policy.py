"""Recovery-semantics policies: which plans recover which fault, named and versioned.

Labels are a policy decision, so every record carries ``str(policy)``. Three policies ship:

- ``r2act-mechanics/3`` (the default) follows what recovers under the real mechanics of
  the shipped deployment (``docs/faults.md``), bound to what the incident shows: a restart
  for pod, delay and CPU faults (gRPC clients pin one connection, so added replicas get no
  traffic); for CPU on the entry point also a scale-out to more pods than the stressor has
  workers, since its users open a connection per request and spread over the ready pods;
  the frontend route rule for HTTP faults (a restart also clears it, since Chaos Mesh
  injects only the pods it selected at creation); for DNS faults the environment of the
  caller that holds the broken address (drawn per incident from every holder); for memory
  faults a limit that clears the container's working set under load with
  ``memory_headroom`` to spare.
- ``r2act-mechanics/2`` is version 3 with the DNS fault always in the primary caller and
  any memory limit above the shipped one; it stays selectable to re-audit runs collected
  before version 3 (on newer runs its DNS labels miss the drawn caller).
- ``paper-table-ii/1`` keeps the paper's Table II (one operation per fault type, on the
  labelled service) for reproduction.

A rule names an operation and whose deployment it acts on; the first rule of a fault type
gives the gold plan, the others are further valid plans. Changing any rule changes labels:
bump ``version`` when you do.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from types import MappingProxyType

from r2act.errors import DataError
from r2act.schema import DeploymentSpec, FaultType, Operation, Topology, memory_bytes


class Role(StrEnum):
    """Whose deployment a rule's plan acts on, relative to the labelled service S."""

    SERVICE = "service"
    """S itself."""
    PRIMARY_CALLER = "primary_caller"
    """The caller C whose ``<S>_ADDR`` a DNS fault breaks (``primary_caller``); version 2."""
    ADDRESS_HOLDER = "address_holder"
    """The caller holding the broken ``<S>_ADDR``: the fault's ``caller`` parameter, drawn
    per incident from ``Topology.address_holders`` (its logs show the address it dials)."""
    SERVICE_OR_CALLER = "service_or_caller"
    """S (gold) or any direct caller of S (paper: repair the name on either side)."""


class Reach(StrEnum):
    """Which services a rule applies to, by how their clients reach them."""

    ANY = "any"
    """Every service."""
    FRESH_CONNECTIONS = "fresh_connections"
    """Only a service whose every client request opens a new connection, so new requests
    spread over its ready pods at once: the entry point when the load generator does not
    reuse connections (``Topology.load_connection_reuse``). Pinned gRPC clients keep their
    pod, so on other services added replicas get no traffic."""


@dataclass(frozen=True)
class PlanRule:
    """One valid plan shape: an operation acting on a role's deployment."""

    operation: Operation
    role: Role = Role.SERVICE
    reach: Reach = Reach.ANY
    above_stressors: bool = False
    """A scale-out must run more pods than the CPU stressor has workers: CFS shares the
    stressed pod's quota among its runnable threads, so with w busy workers its server keeps
    about 1/(w+1) of its CPU and can carry only 1/(w+1) of the traffic it had."""

    def applies(self, service: str, topology: Topology) -> bool:
        """Whether this rule can recover a fault on ``service`` of ``topology``."""
        if self.reach == Reach.ANY:
            return True
        return service == topology.entrypoint and not topology.load_connection_reuse


_M, _P = Operation, Role

_MECHANICS_V2: Mapping[FaultType, tuple[PlanRule, ...]] = MappingProxyType(
    {
        FaultType.POD_FAILURE: (PlanRule(_M.RESTART_SERVICE),),
        FaultType.NETWORK_DELAY: (PlanRule(_M.RESTART_SERVICE),),
        FaultType.CPU_SATURATION: (
            PlanRule(_M.RESTART_SERVICE),
            PlanRule(_M.SCALE_OUT, reach=Reach.FRESH_CONNECTIONS, above_stressors=True),
        ),
        FaultType.HTTP_ERROR: (PlanRule(_M.ROLLBACK_CONFIG), PlanRule(_M.RESTART_SERVICE)),
        FaultType.HTTP_ABORT: (PlanRule(_M.ROLLBACK_CONFIG), PlanRule(_M.RESTART_SERVICE)),
        FaultType.DNS_FAULT: (
            PlanRule(_M.REPAIR_DEPENDENCY, _P.PRIMARY_CALLER),
            PlanRule(_M.ROLLBACK_DEPLOYMENT, _P.PRIMARY_CALLER),
        ),
        FaultType.DNS_RANDOM: (
            PlanRule(_M.REPAIR_DEPENDENCY, _P.PRIMARY_CALLER),
            PlanRule(_M.ROLLBACK_DEPLOYMENT, _P.PRIMARY_CALLER),
        ),
        FaultType.MEMORY_PRESSURE: (
            PlanRule(_M.INCREASE_MEMORY_LIMIT),
            PlanRule(_M.ROLLBACK_DEPLOYMENT),
        ),
    }
)

_MECHANICS: Mapping[FaultType, tuple[PlanRule, ...]] = MappingProxyType(
    {
        **_MECHANICS_V2,
        FaultType.DNS_FAULT: (
            PlanRule(_M.REPAIR_DEPENDENCY, _P.ADDRESS_HOLDER),
            PlanRule(_M.ROLLBACK_DEPLOYMENT, _P.ADDRESS_HOLDER),
        ),
        FaultType.DNS_RANDOM: (
            PlanRule(_M.REPAIR_DEPENDENCY, _P.ADDRESS_HOLDER),
            PlanRule(_M.ROLLBACK_DEPLOYMENT, _P.ADDRESS_HOLDER),
        ),
    }
)

_TABLE_II: Mapping[FaultType, tuple[PlanRule, ...]] = MappingProxyType(
    {
        FaultType.POD_FAILURE: (PlanRule(_M.RESTART_SERVICE),),
        FaultType.NETWORK_DELAY: (PlanRule(_M.RESTART_SERVICE),),
        FaultType.CPU_SATURATION: (PlanRule(_M.SCALE_OUT),),
        FaultType.MEMORY_PRESSURE: (PlanRule(_M.INCREASE_MEMORY_LIMIT),),
        FaultType.HTTP_ERROR: (PlanRule(_M.ROLLBACK_CONFIG),),
        FaultType.HTTP_ABORT: (PlanRule(_M.ROLLBACK_CONFIG),),
        FaultType.DNS_FAULT: (PlanRule(_M.REPAIR_DEPENDENCY, _P.SERVICE_OR_CALLER),),
        FaultType.DNS_RANDOM: (PlanRule(_M.REPAIR_DEPENDENCY, _P.SERVICE_OR_CALLER),),
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
    rules: Mapping[FaultType, tuple[PlanRule, ...]] = field(default_factory=lambda: _MECHANICS)
    """Valid plan shapes per fault type; the first one gives the gold plan."""
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

    def rules_for(self, fault_type: FaultType) -> tuple[PlanRule, ...]:
        """Every valid plan shape for ``fault_type``, gold first (whatever the service)."""
        return self.rules[FaultType(fault_type)]

    def rules_on(
        self, fault_type: FaultType, service: str, topology: Topology
    ) -> tuple[PlanRule, ...]:
        """The valid plan shapes for ``fault_type`` on ``service``, gold first."""
        return tuple(r for r in self.rules_for(fault_type) if r.applies(service, topology))

    def operation_for(self, fault_type: FaultType) -> Operation:
        """The gold plan's operation for ``fault_type``."""
        return self.rules_for(fault_type)[0].operation

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
"""What recovers under the real mechanics (``docs/faults.md``), bound to the incident's
evidence; the default. Version 3: a DNS fault sits in any caller that holds the address
(drawn per incident), and a memory plan must clear the working set under load. Version 2:
the shipped load generator opens a connection per request, so a scale-out of the entry
point relieves its CPU fault (version 1 assumed Locust's kept-alive connections)."""

MECHANICS_V2_POLICY = RecoveryPolicy(name="r2act-mechanics", version=2, rules=_MECHANICS_V2)
"""Version 2, kept to re-audit runs collected before version 3."""

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
