"""What a system supplies as its recovery-policy rules: which plans recover which fault.

Which operation recovers a fault is a claim about one deployment's mechanics (how its
clients hold connections, what a restart or a rollback resets there), established per cell
by the system's evidence (Online Boutique: ``docs/faults.md``, "Per-cell table"). So each
system states its rules in its own package (``systems/<name>/policy.py``), in the
vocabulary of ``r2act.schema.rules`` (``PlanRule``: an operation, a ``Role`` relative to
the labelled service, a ``Reach``), and hands them over as ``System.recovery_rules``. The
recovery engine (``r2act.actions``) applies them: it turns a rule into the gold plan, the
valid patterns and the mapper's plan for an incident, reading every fact a rule depends on
(the entry point, who holds an address, working sets) from the topology.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from r2act.schema.rules import RuleTable


@dataclass(frozen=True)
class RecoveryRules:
    """A system's recovery-policy rules: per policy (``name/version``), its rule table."""

    tables: Mapping[str, RuleTable]
    """Policy ``name/version`` (``r2act-mechanics/3``) -> the rules that recover each fault
    type on this system's shipped deployment. A policy that carries its own rules (the
    paper's Table II) does not look here."""
    evidence: str
    """Where the per-cell evidence the rules follow is (a document and its section)."""

    def table(self, policy: str) -> RuleTable | None:
        """The rule table for ``policy`` (``name/version``), if this system supplies one."""
        return self.tables.get(policy)
