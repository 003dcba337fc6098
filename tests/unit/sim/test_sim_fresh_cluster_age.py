"""A fresh lane cluster is a day old at its incident's start, wherever the incident sits.

Lanes give every incident a fresh cluster at ``EPOCH + position x INCIDENT_STRIDE_S``. Its
pods must be ``INITIAL_POD_AGE_S`` old then, not that much older than the epoch: the load
generator's stats table counts requests since its container started, so pods dated from
the epoch would show the 300th incident's users a year of cumulative requests.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from r2act.cluster.sim import SimulatedCluster
from r2act.cluster.sim.lanes import incident_start, reset_for_incident
from r2act.cluster.sim.state import INITIAL_POD_AGE_S, load_state, state_path
from r2act.cluster.sim.traffic import user_rate
from r2act.schema import NoiseLevel, TimeWindow
from r2act.systems import ONLINE_BOUTIQUE

from .conftest import NO_GLITCHES

_AGGREGATED = re.compile(r"^\s+Aggregated\s+(\d+)\s")


@pytest.mark.parametrize("position", [0, 300])
def test_a_lane_cluster_pods_are_a_day_old_at_the_incident_start(
    tmp_path: Path, position: int
) -> None:
    start = reset_for_incident(
        tmp_path, name="lane", seed=3, namespace="default", position=position
    )
    assert start == incident_start(position, 3)
    state = load_state(state_path(tmp_path, "lane"))
    assert state is not None and state.now == start
    assert {p.created_at for p in state.pods} == {start - INITIAL_POD_AGE_S}


def test_the_load_generator_counts_a_day_of_requests_not_the_incident_position(
    tmp_path: Path,
) -> None:
    users = 27
    counts = []
    for position in (1, 300):
        workspace = tmp_path / str(position)
        start = reset_for_incident(
            workspace, name="lane", seed=3, namespace="default", position=position
        )
        assert start is not None
        cluster = SimulatedCluster(
            workspace, name="lane", users=users, glitches=NO_GLITCHES, noise=NoiseLevel.NONE
        )
        cluster.clock.sleep(10)
        lines = [x for b in cluster.logs(TimeWindow(start, start + 10)) for x in b]
        totals = [
            int(m.group(1))
            for x in lines
            if x.service == ONLINE_BOUTIQUE.load_generator and (m := _AGGREGATED.match(x.line))
        ]
        assert totals, "the stats table is printed every 2 s"
        counts.append(totals[0])
    day = user_rate(ONLINE_BOUTIQUE, users) * INITIAL_POD_AGE_S
    for count in counts:
        assert count == pytest.approx(day, rel=0.25)
    assert counts[1] == pytest.approx(counts[0], rel=0.01)
