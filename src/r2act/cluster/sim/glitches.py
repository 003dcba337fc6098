"""Collection glitches: the small, seeded misbehaviours a real campaign runs into.

Decisions are drawn per chaos object (keyed by its name and creation time, so a replay
that re-creates the same object later gets fresh draws) and per API call (keyed by the
call counter). Rates come from the manifest's ``GlitchRates``; the defaults are non-zero
so that a paper-scale campaign leaves an audit trail of rejected incidents.
"""

from __future__ import annotations

from collections.abc import Mapping

from r2act.campaigns import GlitchRates
from r2act.cluster.sim.chaos import Fault, dns_injection_error
from r2act.cluster.sim.seeding import between, unit
from r2act.cluster.sim.state import ChaosRec
from r2act.errors import PermanentClusterError, TransientClusterError

HEAL_S = {
    "pod_failure": (6.0, 15.0),
    "memory": (2.0, 6.0),
    "cpu": (1.0, 4.0),
    "delay": (1.0, 4.0),
    "http": (1.0, 3.0),
    "dns": (3.0, 12.0),
}
"""Seconds a service needs to heal once its fault stops (restart, caches, connections)."""
SLOW_HEAL_S = (200.0, 290.0)
"""Healing time under the slow-recovery glitch: longer than the default 180 s verify
timeout, shorter than that plus a default post window, so the next incident starts on a
healthy system instead of failing its preflight too."""


class Glitches:
    """Seeded glitch decisions for one simulated cluster."""

    def __init__(self, rates: GlitchRates, seed: int, no_shell: Mapping[str, str]) -> None:
        self.rates, self.seed = rates, seed
        self.no_shell = no_shell
        """The system's shell-less deployments (``System.no_shell``): DNSChaos fails there."""

    def check_call(self, operation: str, call: int, incident: str | None) -> None:
        """Raise the configured API failures for this call, if any."""
        if incident is not None and incident in self.rates.fail_incidents:
            raise PermanentClusterError(
                f"simulated API failure for incident {incident} ({operation}): "
                "the server rejected the request"
            )
        rate = self.rates.transient_api_error
        if rate > 0 and unit(self.seed, "api", call) < rate:
            raise TransientClusterError(
                f"simulated transient API error on {operation} (call {call}): "
                "503 Service Unavailable"
            )

    def decide(self, rec: ChaosRec, fault: Fault) -> None:
        """Fill in the object's glitch decisions and healing time."""
        key = (rec.name, rec.created_at)
        rec.injection_failed = unit(self.seed, "inject", *key) < self.rates.injection_failure
        if fault.effect == "dns" and any(
            dns_injection_error(app, self.no_shell) for app in fault.apps
        ):
            rec.injection_failed = True  # the daemon cannot rewrite resolv.conf there
        if unit(self.seed, "gap", *key) < self.rates.metric_gap:
            start = rec.applied_at + between(self.seed, 10.0, 50.0, "gap-start", *key)
            rec.metric_gap = (start, start + between(self.seed, 45.0, 90.0, "gap-len", *key))
        low, high = HEAL_S.get(fault.effect, (1.0, 5.0))
        if unit(self.seed, "slow", *key) < self.rates.slow_recovery:
            low, high = SLOW_HEAL_S
        rec.heal_s = between(self.seed, low, high, "heal", *key)
