"""Systems r2act knows how to benchmark, by the name a manifest uses (``system:``).

This registry is the one place that imports a concrete system (``systems/<name>/``); every
other package looks a system up here by name (``get_system``), so the engine and the
offline stages name no application (an import-linter contract and
``tests/unit/systems/test_systems.py`` hold that).
"""

from __future__ import annotations

from r2act.schema.topology import Topology
from r2act.systems import astronomyshop, onlineboutique
from r2act.systems.base import Call, FaultCell, System

INSTALLED: dict[str, System] = {s.name: s for s in (onlineboutique.SYSTEM, astronomyshop.SYSTEM)}
"""Every installed system by name."""

SYSTEMS: dict[str, Topology] = {name: s.topology for name, s in INSTALLED.items()}
"""Known systems' topologies by name."""

DEFAULT_SYSTEM = onlineboutique.SYSTEM.name
"""The system a component uses when it is given none (the simulator's default)."""

ONLINE_BOUTIQUE = onlineboutique.ONLINE_BOUTIQUE
"""Online Boutique's topology, for tests and examples (``src`` looks systems up by name)."""


def get_system(name: str) -> System:
    """The installed system ``name``; ``KeyError`` naming the installed ones otherwise."""
    try:
        return INSTALLED[name]
    except KeyError:
        raise KeyError(f"unknown system {name!r} (installed: {', '.join(INSTALLED)})") from None


def system_of(topology: Topology) -> System:
    """The installed system of this topology (by its ``system`` name); for a topology of no
    installed system (a test's toy system), one with nothing of its own: each route calls
    its services once, every call costs the engine's default, its services print nothing
    (``render.Renderers``' defaults) and every runtime fact is the engine's default."""
    known = INSTALLED.get(topology.system)
    return known if known is not None else _toy(topology)


def _toy(topology: Topology) -> System:
    return System(
        name=topology.system,
        title=topology.system,
        version="",
        topology=topology,
        upstream=(),
        deploy_dir="",
        cells=(),
        think_s=_TOY_THINK_S,
    )


_TOY_THINK_S = 5.5
"""Think time of a toy system's users: Locust's ``between(1, 10)`` mean."""


__all__ = [
    "DEFAULT_SYSTEM",
    "INSTALLED",
    "ONLINE_BOUTIQUE",
    "SYSTEMS",
    "Call",
    "FaultCell",
    "System",
    "get_system",
    "system_of",
]
