"""The cluster each incident runs on: on the simulator, a fresh system per incident.

A simulated cluster that carried one history through a whole run would give an incident
telemetry that depends on every incident collected before it in that run (its clock, its
pods' restart counts, the API call counter the glitches are drawn from). The same campaign
collected in one run, on lanes and as shards would then hold different observations. So
before each incident the cluster is reset (``cluster.sim.lanes.reset_for_incident``) to a
fresh system of the campaign's seed at a virtual time fixed by the incident's place in the
whole plan, and reopened: an incident's observations are a function of the campaign seed
and the incident alone, whichever schedule collected it (one run, lanes, shards, a resume).

A real cluster cannot be reset: on Kubernetes the one connection serves every incident.
The reset never hides a leftover (a live r2act chaos object): the cluster is then left as
it is, and the leftover check that follows refuses, pointing to ``r2act cleanup``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from r2act.campaigns import Manifest, SimTarget, plan_incidents
from r2act.cluster.base import Cluster
from r2act.collector.cleanup import remover
from r2act.collector.context import CollectSettings
from r2act.schema import ChaosRef, PlannedIncident


def positions_of(incidents: Sequence[PlannedIncident]) -> dict[str, int]:
    """Incident id -> its place (0-based) in ``incidents``, the campaign's whole plan with
    its spares.

    Taken before ``--only``, the shard and the lane select, so it can fix an incident's
    simulated start time."""
    return {incident.id: n for n, incident in enumerate(incidents)}


def plan_positions(manifest: Manifest) -> dict[str, int]:
    """``positions_of`` the campaign's whole plan."""
    return positions_of(plan_incidents(manifest))


class IncidentCluster:
    """The cluster the current incident runs on, and the remover the cleanup guard uses.

    The guard removes through ``remove``, which always acts on the current cluster: after a
    reset the previous simulated cluster object holds a stale copy of the state, and acting
    on it would overwrite the fresh one."""

    def __init__(
        self,
        manifest: Manifest,
        run_dir: Path,
        factory: Callable[[Manifest, Path], Cluster],
        settings: CollectSettings,
        positions: Mapping[str, int] | None = None,
    ) -> None:
        self._manifest, self._run_dir, self._factory = manifest, run_dir, factory
        self._settings = settings
        self._positions = positions
        self.cluster = factory(manifest, run_dir)

    def remove(self, ref: ChaosRef) -> None:
        """Remove ``ref`` from the current cluster with bounded retries."""
        s = self._settings
        remover(self.cluster, s.retry, s.remove_timeout_s, s.backoff_sleep)(ref)

    def for_incident(self, incident_id: str) -> bool:
        """Make the cluster ready for ``incident_id``; True when it is a fresh system.

        On the simulator the cluster is reset and reopened (False, unchanged, when it holds
        a live fault); any other target keeps its one connection."""
        target = self._manifest.target
        if not isinstance(target, SimTarget):
            return False
        from r2act.cluster.sim.lanes import reset_for_incident

        if self._positions is None:
            self._positions = plan_positions(self._manifest)
        start = reset_for_incident(
            self._run_dir,
            name=target.name,
            seed=target.seed,
            namespace=self._manifest.namespace,
            position=self._positions[incident_id],
            topology=self._manifest.topology,
        )
        if start is None:
            return False
        close = getattr(self.cluster, "close", None)
        if close is not None:
            close()
        self.cluster = self._factory(self._manifest, self._run_dir)
        return True
