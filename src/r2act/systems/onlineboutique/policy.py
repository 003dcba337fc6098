"""Online Boutique's recovery-policy rules: what recovers each fault on its shipped deployment.

The rules follow the per-cell evidence (``docs/faults.md``, "Per-cell table" and
"Policies"); ``r2act-mechanics/3`` is that page in code:

- a restart for pod, delay and CPU faults: Chaos Mesh selects pods at creation, so new pods
  are not injected, and a scale-out does not help because every backend is reached by a
  gRPC client that pins one connection per callee (``frontend/main.go`` L229): added
  replicas get no traffic, and a failed pod stays in the Deployment, not ready;
- for CPU on the entry point also a scale-out to more pods than the stressor has workers:
  the shipped load generator opens a connection per request, so users spread over the
  ready pods (``Reach.FRESH_CONNECTIONS``, ``Topology.load_connection_reuse``);
- for HTTP faults the rollback of the entry point's route rule, or a restart (PodHttpChaos
  is per pod: new pods are not injected);
- for DNS faults a repair, or a rollback, in the caller that holds the broken ``*_ADDR``
  variable (drawn per incident from ``Topology.address_holders``);
- for memory faults a raised limit (``RecoveryPolicy.memory_bounds`` decides which limits
  recover) or a rollback.

``r2act-mechanics/2`` is version 3 with the DNS fault always in the primary caller; it
stays to re-audit runs collected before version 3. Changing a rule changes labels: bump the
policy's version (``r2act.actions.policy``) when you do.
"""

from __future__ import annotations

from types import MappingProxyType

from r2act.schema import FaultType, Operation
from r2act.schema.rules import PlanRule, Reach, Role, RuleTable
from r2act.systems.policy import RecoveryRules

_M, _P = Operation, Role

MECHANICS_V2: RuleTable = MappingProxyType(
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
"""``r2act-mechanics/2``: the DNS fault sits in the primary caller."""

MECHANICS_V3: RuleTable = MappingProxyType(
    {
        **MECHANICS_V2,
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
"""``r2act-mechanics/3``: the DNS fault sits in the caller drawn from every holder."""

RULES = RecoveryRules(
    tables=MappingProxyType({"r2act-mechanics/3": MECHANICS_V3, "r2act-mechanics/2": MECHANICS_V2}),
    evidence="docs/faults.md, Per-cell table",
)
"""Online Boutique's rules, per policy that reads them from the system."""
