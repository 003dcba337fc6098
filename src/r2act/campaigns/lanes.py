"""Lanes: several deployments of the system under test that collect one campaign together.

A lane is one Online Boutique deployment r2act may act on: on Kubernetes a namespace (opted
in on its own) on a kubeconfig context, on the simulator a separately seeded simulated
cluster. Each lane collects one incident at a time; lanes run concurrently, so N lanes take
about 1/N of the time. A manifest names its lanes in its target::

    target: {kind: kubernetes, context: kind-r2act, namespace: boutique-1,
             lanes: [{namespace: boutique-2}, {namespace: boutique-3, context: other}]}
    target: {kind: sim, seed: 302, lanes: 4}

The target's own context and namespace are lane 1; ``lanes`` adds the others. ``lane_targets``
turns a target into one plain single-lane target per lane, which is what each lane's
collector connects to, so the adapters never see lanes at all.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from r2act.campaigns.lane_spec import MAX_LANES, KubernetesLane
from r2act.campaigns.manifest import KubernetesTarget, SimTarget

__all__ = ["MAX_LANES", "KubernetesLane", "Lane", "has_lanes", "lane_targets", "shared_nodes"]


@dataclass(frozen=True)
class Lane:
    """A lane as the collector uses it: a name for people and records, and its own target."""

    name: str
    """``lane-1`` .. ``lane-N``: recorded with every incident it collects."""
    target: SimTarget | KubernetesTarget
    """A single-lane target (no ``lanes``) that ``cluster.connect`` accepts unchanged."""

    @property
    def namespace(self) -> str:
        """The namespace this lane acts in ('default' on the simulator)."""
        return getattr(self.target, "namespace", "default")


def has_lanes(target: SimTarget | KubernetesTarget) -> bool:
    """Whether the target names lanes (even one): then collect runs the lanes engine."""
    lanes = getattr(target, "lanes", None)
    return lanes is not None and (not isinstance(lanes, list) or bool(lanes))


def lane_name(index: int) -> str:
    """``lane-<index>``, 1-based."""
    return f"lane-{index}"


def lane_targets(target: SimTarget | KubernetesTarget) -> list[Lane]:
    """One single-lane target per lane of ``target``, lane 1 first.

    Simulated lanes are clusters ``<name>-lane-<i>`` with the target's seed, so every lane
    is the same system and an incident's telemetry does not depend on which lane ran it.
    """
    if isinstance(target, SimTarget):
        if target.lanes is None:
            return [Lane(lane_name(1), target)]
        return [
            Lane(
                lane_name(i),
                target.model_copy(update={"lanes": None, "name": _sim_name(target.name, i)}),
            )
            for i in range(1, target.lanes + 1)
        ]
    lanes = [Lane(lane_name(1), target.model_copy(update={"lanes": []}))]
    for i, extra in enumerate(target.lanes, start=2):
        update = {
            "lanes": [],
            "namespace": extra.namespace,
            "context": extra.context or target.context,
        }
        lanes.append(Lane(lane_name(i), target.model_copy(update=update)))
    return lanes


def _sim_name(name: str, index: int) -> str:
    return f"{name}-lane-{index}"


def shared_nodes(placement: Mapping[str, tuple[str, Iterable[str]]]) -> list[tuple[str, str, str]]:
    """``(lane, other lane, node)`` for every node two lanes of one cluster both run on.

    ``placement`` maps a lane to its cluster (kubeconfig context) and the nodes its pods
    run on. Node names only mean something within one cluster, so lanes on different
    clusters never share a node."""
    found: list[tuple[str, str, str]] = []
    names = sorted(placement)
    for i, lane in enumerate(names):
        cluster, nodes = placement[lane]
        mine = set(nodes)
        for other in names[i + 1 :]:
            other_cluster, other_nodes = placement[other]
            if other_cluster == cluster:
                found += [(lane, other, node) for node in sorted(mine & set(other_nodes))]
    return found
