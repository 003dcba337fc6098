"""Systems r2act knows how to benchmark, by the name a manifest uses (``system:``)."""

from __future__ import annotations

from r2act.schema.topology import Topology
from r2act.systems.onlineboutique import ONLINE_BOUTIQUE

SYSTEMS: dict[str, Topology] = {ONLINE_BOUTIQUE.system: ONLINE_BOUTIQUE}
"""Known systems by name."""

__all__ = ["ONLINE_BOUTIQUE", "SYSTEMS"]
