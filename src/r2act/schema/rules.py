"""The vocabulary of recovery-policy rules: an operation, whose deployment it acts on, where.

A rule names no service: it names a role relative to the labelled service (the service, the
caller holding a broken address, ...) and which services it applies to by how their clients
reach them, and every fact it depends on is read from the ``Topology``. Systems state their
rules in these terms (``r2act.systems.policy``) and the recovery engine (``r2act.actions``)
applies them; both read them from here, the layer below both.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum

from r2act.schema.faults import FaultType
from r2act.schema.plans import Operation
from r2act.schema.topology import Topology


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


class ScopeKind(StrEnum):
    """What a ``rollback_config`` rule's scope names: which configuration it undoes."""

    ROUTE = "route"
    """The route rule an HTTP fault injected (``METHOD /path``)."""
    FLAG = "flag"
    """The feature flag a flag fault turned on (its key): the revert restores that flag's
    default variant, and only that flag's."""


@dataclass(frozen=True)
class PlanRule:
    """One valid plan shape: an operation acting on a role's deployment."""

    operation: Operation
    role: Role = Role.SERVICE
    reach: Reach = Reach.ANY
    scope: ScopeKind = ScopeKind.ROUTE
    """For ``rollback_config``: whether the scope is the injected route or flag."""
    above_stressors: bool = False
    """A scale-out must run more pods than the CPU stressor has workers: CFS shares the
    stressed pod's quota among its runnable threads, so with w busy workers its server keeps
    about 1/(w+1) of its CPU and can carry only 1/(w+1) of the traffic it had."""

    def applies(self, service: str, topology: Topology) -> bool:
        """Whether this rule can recover a fault on ``service`` of ``topology``."""
        if self.reach == Reach.ANY:
            return True
        return service == topology.entrypoint and not topology.load_connection_reuse


RuleTable = Mapping[FaultType, tuple[PlanRule, ...]]
"""Valid plan shapes per fault type; the first rule of a fault type gives the gold plan."""
