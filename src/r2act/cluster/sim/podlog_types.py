"""What a pod's line renderers share: the ``Render`` signature and the pod they render for.

``podlogs`` (the entry point's lines and the rate model) builds renderers from
``podlogs_backend`` (backend, start-up and load-generator lines); both read the pod through
``PodIdentity``, so the backend renderers need nothing from ``podlogs`` and the two modules
import in one direction only.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from r2act.schema import LogLine, Topology

Render = Callable[[float, random.Random, list[LogLine]], None]
"""Appends the lines of one occurrence at a timestamp, drawing from the given generator."""


class PodIdentity(Protocol):
    """The pod a renderer writes for (``podlogs.PodLogger`` is one)."""

    topology: Topology
    pod: str
    app: str
    container: str
    seed: int
    sessions: list[str]
    """One session id per load-generator user."""
    route_ms: dict[str, float]
    """Healthy latency per entry-point route scope."""
