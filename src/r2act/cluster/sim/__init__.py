"""The simulation engine: an in-process, seeded digital twin of a system on a virtual clock.

``SimulatedCluster`` implements ``r2act.cluster.base.Cluster`` for any system of
``r2act.systems`` (Online Boutique by default); it names no application service itself and
reads everything application-specific through the system's ``System`` (load model, texts,
renderers, runtime facts). Module map: ``state`` (persisted history), ``chaos`` (Chaos
Mesh objects and status), ``timeline`` (pod dynamics), ``traffic`` + ``scene`` (requests
and their fate), ``logs``/``podlogs`` (log rates; the lines are the system's renderers',
and ``redislog``/``loadgen`` render Redis and Locust), ``identity`` + ``kubetexts`` +
``events`` (Kubernetes texts), ``metrics``, ``plans`` (recovery mechanics), ``glitches``,
``view`` (state and health), ``cluster`` (the port).
"""

from r2act.cluster.sim.cluster import SimClock, SimulatedCluster

__all__ = ["SimClock", "SimulatedCluster"]
