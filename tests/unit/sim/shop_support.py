"""The Astronomy Shop on the simulated cluster, for the span tests: a healthy shop, and one
whose flag service is down (a pod failure retargeted at flagd, which has no catalogue cell
of its own)."""

from __future__ import annotations

from pathlib import Path

from r2act.campaigns import Manifest, plan_incidents, render_chaos
from r2act.cluster.sim import SimulatedCluster
from r2act.schema import TimeWindow
from r2act.schema.traces import Span
from r2act.systems import SYSTEMS, get_system

from .conftest import NO_GLITCHES


def shop(tmp_path: Path, seed: int = 11) -> SimulatedCluster:
    """A fresh simulated Astronomy Shop with its shipped load and no glitches."""
    return SimulatedCluster(
        tmp_path,
        seed=seed,
        users=get_system("astronomyshop").users,
        topology=SYSTEMS["astronomyshop"],
        glitches=NO_GLITCHES,
    )


def spans_with_flagd_down(tmp_path: Path) -> list[Span]:
    """Every span (sample 1.0) of the 80 s before the end of a 100 s pod failure of flagd,
    after 300 s of healthy traffic."""
    manifest = Manifest.model_validate(
        {
            "name": "t",
            "system": "astronomyshop",
            "target": {"kind": "sim"},
            "services": ["cart"],
            "faults": [{"type": "pod_failure", "intensities": ["severe"]}],
        },
        strict=False,
    )
    (planned,) = plan_incidents(manifest)
    planned = planned.model_copy(update={"service": "flagd"})
    cluster = shop(tmp_path, seed=4)
    cluster.clock.sleep(300.0)
    cluster.inject(render_chaos(planned, "default", SYSTEMS["astronomyshop"]))
    cluster.clock.sleep(100.0)  # the object acts for 120 s
    now = cluster.clock.now()
    return [s for batch in cluster.traces(TimeWindow(now - 80.0, now), 1.0) for s in batch]
