"""r2act: build, publish, score and replay recovery benchmarks for Kubernetes microservices.

The package is a pipeline of stages joined by files (see ``docs/`` and the README):
``campaigns`` plans incidents, ``collector`` runs them on a ``cluster``, ``quality_gate``
admits them, ``datasets`` publishes them, ``evaluation`` scores predictions and ``replay``
executes them. ``schema`` holds the typed contracts between the stages.
"""

__version__ = "0.1.0"
