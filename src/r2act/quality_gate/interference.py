"""Interference between lanes: a fault in one lane may disturb another lane on the same node.

Lanes that share a cluster are meant to run on separate nodes; when a campaign allows
shared nodes, an incident's baseline (``pre``) or fault (``during``) window may overlap a
*disturbance* in another lane on a shared node: the time from that lane's injection until
its system was verified healthy again (its removal, or the end of its fault window, when
recovery was never verified). Such an incident is parked with a warning that names the
other incident, the node and the window, so concurrency never silently contaminates data.

Pure over ``incident.json`` files: the ``lane`` record (name, cluster, nodes) the lanes
collector writes, the timestamps and the windows. Incidents without a lane record (single
lane runs, the simulator's separate clusters) never interfere.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from r2act.quality_gate.problems import Problem, warning
from r2act.schema.rawstore import INCIDENT_JSON

CODE = "LANE_INTERFERENCE"
WATCHED = ("pre", "during")
"""Windows a disturbance elsewhere must not overlap: the baseline and the fault's effect."""


@dataclass(frozen=True)
class LaneWindows:
    """What interference needs to know about one incident."""

    incident_id: str
    lane: str
    cluster: str
    nodes: frozenset[str]
    windows: dict[str, tuple[float, float]]
    disturbance: tuple[float, float] | None
    """From injection until recovery was verified (or the fault window ended)."""


def read_lane_windows(incident_dir: Path) -> LaneWindows | None:
    """The lane and windows of one incident; None without a lane record or when unreadable.

    (An unreadable ``incident.json`` is the other checks' finding, not this one's.)"""
    try:
        document = json.loads((incident_dir / INCIDENT_JSON).read_bytes())
        lane = document.get("lane")
        if not isinstance(lane, dict):
            return None
        windows = {k: (float(v[0]), float(v[1])) for k, v in document["windows"].items()}
        stamps = document.get("timestamps") or {}
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return None
    return LaneWindows(
        incident_id=incident_dir.name,
        lane=str(lane.get("name", "")),
        cluster=str(lane.get("cluster", "")),
        nodes=frozenset(str(n) for n in lane.get("nodes") or []),
        windows=windows,
        disturbance=_disturbance(stamps, windows),
    )


def _disturbance(
    stamps: dict[str, float | None], windows: dict[str, tuple[float, float]]
) -> tuple[float, float] | None:
    start = stamps.get("injected_at")
    if start is None:
        return None
    end = stamps.get("recovered_at") or stamps.get("removed_at")
    if end is None and "during" in windows:
        end = windows["during"][1]
    if end is None:
        return None
    return (float(start), float(end))


def interference(incidents: Iterable[LaneWindows]) -> dict[str, list[Problem]]:
    """Incident id -> one warning per disturbance in another lane on a shared node."""
    known = list(incidents)
    found: dict[str, list[Problem]] = {}
    for mine in known:
        for other in known:
            if (
                other.lane == mine.lane
                or other.cluster != mine.cluster
                or other.disturbance is None
                or not (shared := mine.nodes & other.nodes)
            ):
                continue
            for phase in WATCHED:
                window = mine.windows.get(phase)
                if window is None or not _overlap(window, other.disturbance):
                    continue
                node = sorted(shared)[0]
                found.setdefault(mine.incident_id, []).append(
                    warning(
                        CODE,
                        f"the {phase} window overlaps the fault of {other.incident_id} "
                        f"in {other.lane} on shared node {node}",
                        where=phase,
                        other=other.incident_id,
                        other_lane=other.lane,
                        node=node,
                        window=list(window),
                        disturbance=list(other.disturbance),
                    )
                )
    return found


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


def run_interference(incident_dirs: Iterable[Path]) -> dict[str, list[Problem]]:
    """``interference`` over a run's incident directories."""
    return interference(w for d in incident_dirs if (w := read_lane_windows(d)) is not None)
