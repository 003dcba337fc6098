"""One incident per fresh simulated system: what makes lanes interchangeable on the simulator.

A lane's simulated cluster is reset before each incident to the state a fresh cluster of the
same seed has, at a virtual time fixed by the incident's place in the plan. An incident's
telemetry is then a function of the incident alone: the same bytes whichever lane collects
it, after whichever incidents, in however many lanes, and after a resume. The lane's own
elapsed time is kept by the caller (the sum of its incidents' virtual spans), which is the
wall-clock a real lane would need.

The reset never hides a leftover: while the lane's cluster still holds a live r2act chaos
object (a SIGKILL between injection and removal), nothing is reset, so the collector's
preflight refuses and points to ``r2act cleanup`` exactly as without lanes.
"""

from __future__ import annotations

from pathlib import Path

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL
from r2act.cluster.sim.state import EPOCH, fresh_state, load_state, save_state, state_path
from r2act.schema import Topology
from r2act.systems import DEFAULT_SYSTEM, SYSTEMS

INCIDENT_STRIDE_S = 86_400.0
"""Virtual seconds between the start times of consecutive planned incidents: far longer
than any incident, so no two incidents' clocks ever overlap."""


def incident_start(position: int) -> float:
    """The virtual time the incident at ``position`` (0-based, in the whole plan) starts at."""
    return EPOCH + position * INCIDENT_STRIDE_S


def reset_for_incident(
    workspace: Path,
    *,
    name: str,
    seed: int,
    namespace: str,
    position: int,
    topology: Topology = SYSTEMS[DEFAULT_SYSTEM],
) -> float | None:
    """Make the lane's cluster fresh at the incident's start time; None when it holds a fault.

    Returns the virtual start time, from which the caller measures the incident's span."""
    path = state_path(workspace, name)
    current = load_state(path)
    if current is not None and any(
        c.deleted_at is None and c.labels.get(MANAGED_BY_LABEL) == MANAGED_BY for c in current.chaos
    ):
        return None
    state = fresh_state(topology, name=name, seed=seed, namespace=namespace)
    state.now = incident_start(position)
    save_state(path, state)
    return state.now


def virtual_now(workspace: Path, name: str) -> float | None:
    """The lane cluster's clock as saved, None when it has no state yet."""
    state = load_state(state_path(workspace, name))
    return None if state is None else state.now
