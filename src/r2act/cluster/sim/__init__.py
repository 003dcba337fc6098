"""The simulated Online Boutique cluster: an in-process, seeded digital twin on a virtual clock.

``SimulatedCluster`` implements ``r2act.cluster.base.Cluster``. Module map: ``state``
(persisted history), ``chaos`` (Chaos Mesh objects and status), ``timeline`` (pod
dynamics), ``traffic`` + ``scene`` (requests and their fate), ``logs``/``podlogs*`` +
``logformats`` (log lines), ``events``, ``metrics``, ``plans`` (recovery mechanics),
``glitches``, ``view`` (state and health), ``cluster`` (the port).
"""

from r2act.cluster.sim.cluster import SimClock, SimulatedCluster

__all__ = ["SimClock", "SimulatedCluster"]
