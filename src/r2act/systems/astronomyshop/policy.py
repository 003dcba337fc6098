"""The Astronomy Shop 2.2.0's recovery-policy rules: what recovers each fault on chart 0.40.10.

The rules follow its per-cell and per-flag evidence (``docs/faults.md``, "Astronomy Shop
2.2.0: per-cell table" and "Recovering a flag fault"). Where the mechanics are Online
Boutique's, so are the rules (``systems/onlineboutique/policy.py``), and for the same
reasons, which hold on this deployment too:

- a restart for pod, delay and CPU faults: Chaos Mesh selects pods at creation, so new pods
  are not injected; a scale-out does not help a gRPC service, whose callers hold one
  channel per callee (``frontend/gateways/rpc/ProductCatalog.gateway.ts`` L9), and a failed
  pod stays in the Deployment, not ready;
- for CPU on the entry point (frontend-proxy) also a scale-out to more pods than the
  stressor has workers, only where the load generator opens a connection per request
  (``Reach.FRESH_CONNECTIONS`` reads ``Topology.load_connection_reuse``; with the chart's
  kept-alive Locust users it does not apply);
- for HTTP faults (frontend-proxy's routes, quote's ``POST /getquote``) the rollback of
  the injected route rule, or a restart (PodHttpChaos is per pod);
- for DNS faults a repair, or a rollback, in the holder of the broken address (drawn per
  incident among ``Topology.address_holders``: frontend, checkout, recommendation and
  product-reviews hold addresses here);
- for memory faults a raised limit (``RecoveryPolicy.memory_bounds``) or a rollback.

What is this system's own: **a feature flag is reverted, never restarted away.** flagd
serves the flag and every reader asks it on each call, so a restarted reader gets the same
variant (``docs/faults.md``, "Recovering a flag fault"): the only valid plan is
``rollback_config`` on the labelled service with the flag's key as its scope
(``ScopeKind.FLAG``), the paper's vocabulary for undoing one part of a configuration. A
restart of the reader is a listed invalid plan (``actions.negatives``), and so is the revert
of another flag the service reads.

``r2act-mechanics/2`` is version 3 with the DNS fault in the primary caller, as for Online
Boutique. Changing a rule changes labels: bump the policy's version
(``r2act.actions.policy``) when you do.
"""

from __future__ import annotations

from types import MappingProxyType

from r2act.schema import FaultType, Operation
from r2act.schema.rules import PlanRule, RuleTable, ScopeKind
from r2act.systems.onlineboutique import policy as onlineboutique_policy
from r2act.systems.policy import RecoveryRules

_M = Operation

_REVERT_FLAG = (PlanRule(_M.ROLLBACK_CONFIG, scope=ScopeKind.FLAG),)
"""A flag fault's only valid plan: revert that flag on its reader (``rollback_config``)."""

MECHANICS_V2: RuleTable = MappingProxyType(
    {**onlineboutique_policy.MECHANICS_V2, FaultType.FEATURE_FLAG: _REVERT_FLAG}
)
"""``r2act-mechanics/2``: Online Boutique's version 2 (the DNS fault in the primary caller),
whose Chaos Mesh and ConfigFault mechanics hold here too, and the flag revert."""

MECHANICS_V3: RuleTable = MappingProxyType(
    {**onlineboutique_policy.MECHANICS_V3, FaultType.FEATURE_FLAG: _REVERT_FLAG}
)
"""``r2act-mechanics/3``: Online Boutique's version 3 (the DNS fault in the holder drawn per
incident) and the flag revert."""

RULES = RecoveryRules(
    tables=MappingProxyType({"r2act-mechanics/3": MECHANICS_V3, "r2act-mechanics/2": MECHANICS_V2}),
    evidence="docs/faults.md, Astronomy Shop 2.2.0: per-cell table; Recovering a flag fault",
)
"""The Astronomy Shop's rules, per policy that reads them from the system."""
