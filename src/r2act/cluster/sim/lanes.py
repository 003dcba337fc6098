"""One incident per fresh simulated system: what makes schedules interchangeable on the simulator.

Before each incident the collector (``collector.fresh``) resets the simulated cluster to
the state a fresh cluster of the same seed has, at a virtual time fixed by the incident's
place in the whole plan. It does so in every schedule: one run, each lane of a lanes run,
each shard. An incident's telemetry is then a function of the campaign seed and the
incident alone: the same bytes in one run, whichever lane collects it, after whichever
incidents, in however many lanes or shards, and after a resume. A lane's own elapsed time
is kept by the caller (the sum of its incidents' virtual spans), which is the wall-clock a
real lane would need.

The reset never hides a leftover: while the cluster still holds a live r2act chaos object
(a SIGKILL between injection and removal), nothing is reset, so the collector refuses and
points to ``r2act cleanup``.
"""

from __future__ import annotations

from pathlib import Path

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL
from r2act.cluster.sim.seeding import key_int
from r2act.cluster.sim.state import EPOCH, fresh_state, load_state, save_state, state_path
from r2act.schema import Topology
from r2act.systems import DEFAULT_SYSTEM, SYSTEMS

INCIDENT_STRIDE_S = 86_400.0
"""Virtual seconds between the start times of consecutive planned incidents: far longer
than any incident, so no two incidents' clocks ever overlap."""
START_SPREAD_S = 60
"""An incident starts a whole number of seconds in [0, 60) past a whole minute, drawn from
the seed and its position. On a real cluster an injection falls anywhere between two
scrapes. Started on whole minutes, every simulated injection (a whole number of baseline
seconds later) would land on a sample of any usual step, and that one sample would always
catch both pods of the rollout a ConfigFault starts (a service's summed memory doubled at
the injection time in every DNS and memory incident); spread over the minute, it does so
as often as on a real cluster, when a scrape falls within the new pod's start-up."""


def incident_start(position: int, seed: int) -> float:
    """The virtual time the incident at ``position`` (0-based, in the whole plan) starts at."""
    offset = key_int(seed, "incident-start", position) % START_SPREAD_S
    return EPOCH + position * INCIDENT_STRIDE_S + offset


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
    state = fresh_state(
        topology, name=name, seed=seed, namespace=namespace, now=incident_start(position, seed)
    )
    save_state(path, state)
    return state.now


def virtual_now(workspace: Path, name: str) -> float | None:
    """The lane cluster's clock as saved, None when it has no state yet."""
    state = load_state(state_path(workspace, name))
    return None if state is None else state.now
