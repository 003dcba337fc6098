"""The OpenTelemetry Astronomy Shop 2.2.0 (Helm chart 0.40.10), r2act's second system.

So far this package holds what is true of the deployment alone:

- ``topology``: deployments, containers, ports, ``*_ADDR`` variables, memory limits, the
  call graph and the entry point's routes, as the chart renders them;
- ``runtime``: images, start-up times, probes (none) and shell-less images per service;
- its install files are in ``deploy/astronomyshop/``.

It is not in ``r2act.systems.INSTALLED`` yet: a ``System`` needs its fault catalogue,
texts and renderers first, and registering it would put its service names under the
engine's service-name test before the simulator can run it.
"""

from __future__ import annotations

from r2act.systems.astronomyshop.runtime import IMAGES, NO_SHELL, PROBES, STARTUP_S
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP, CHART_VERSION, VERSION

__all__ = [
    "ASTRONOMY_SHOP",
    "CHART_VERSION",
    "IMAGES",
    "NO_SHELL",
    "PROBES",
    "STARTUP_S",
    "VERSION",
]
