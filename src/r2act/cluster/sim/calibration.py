"""Log volume calibration: how many lines one logged request stands for.

The paper's incidents average 41.7k log records over their three phases. Online
Boutique's per-request logging at the default 10 users gives fewer lines than that, so
request-driven lines are scaled by one factor, computed here from the healthy scene, that
makes 10 users produce ~40k records in 540 s (300 + 120 + 120). Volume stays
proportional to the request rate; ``volume`` on the cluster scales it further.
"""

from __future__ import annotations

from r2act.cluster.sim.identity import pod_facts
from r2act.cluster.sim.podlogs import PodLogger
from r2act.cluster.sim.scene import build_scene
from r2act.cluster.sim.state import fresh_state
from r2act.cluster.sim.timeline import build_timelines
from r2act.schema import Topology

TARGET_RECORDS = 40_000
TARGET_SECONDS = 540.0
CALIBRATION_USERS = 10
LOCUST_LINES_PER_S = 18 / 2.0
"""Locust prints an ~18-line stats table every 2 s whatever the load."""


_CACHE: dict[str, float] = {}


def log_scale(topology: Topology) -> float:
    """Factor on request-driven line rates that gives ~40k lines per default incident."""
    if topology.system not in _CACHE:
        _CACHE[topology.system] = _compute(topology)
    return _CACHE[topology.system]


def _compute(topology: Topology) -> float:
    state = fresh_state(topology, name="calibration", seed=0, namespace="default")
    timelines = build_timelines(state, pod_facts(topology), {}, 0)
    scene = build_scene(topology, timelines, state.now, CALIBRATION_USERS)
    fixed = variable = 0.0
    for line in timelines.values():
        pod = line.pod
        logger = PodLogger(topology, pod.name, pod.app, "server", seed=0, users=CALIBRATION_USERS)
        ready = scene.services[pod.app].ready
        share = 1.0 / len(ready) if pod.name in ready else 0.0
        base = sum(rate * lines for rate, lines, _ in logger.kinds(scene, share, 0.0))
        full = sum(rate * lines for rate, lines, _ in logger.kinds(scene, share, 1.0))
        fixed += base
        variable += full - base
    wanted = TARGET_RECORDS / TARGET_SECONDS - fixed - LOCUST_LINES_PER_S
    return max(0.1, wanted / variable) if variable > 0 else 1.0
