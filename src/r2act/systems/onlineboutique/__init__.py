"""Online Boutique v0.10.6, r2act's first system: everything true of that application alone.

- ``topology``: deployments, call graph, routes and load model of the release manifests,
  and the frontend's error wraps (which backend a failed request names);
- ``catalogue``: the realizable (service, fault type) cells, with their evidence;
- ``policy``: its recovery-policy rules (which plans recover each fault type there);
- ``steps``: the steps its handlers name when they wrap a failed call's error;
- its install files are in ``deploy/`` (kind cluster, the load generator's locustfile);
  the texts the simulator renders for it are still in ``cluster/sim`` (``docs/systems.md``
  says what moves next).
"""

from __future__ import annotations

from r2act.systems.base import System
from r2act.systems.onlineboutique.catalogue import CELLS
from r2act.systems.onlineboutique.policy import RULES
from r2act.systems.onlineboutique.steps import ERROR_STEPS
from r2act.systems.onlineboutique.texts import TEXTS
from r2act.systems.onlineboutique.topology import (
    FRONTEND_STEP_BACKENDS,
    ONLINE_BOUTIQUE,
    VERSION,
    frontend_error_backend,
)
from r2act.systems.onlineboutique.traffic import ROUTE_CALLS, SERVICE_MS, THINK_S

SYSTEM = System(
    name=ONLINE_BOUTIQUE.system,
    title="Online Boutique",
    version=VERSION,
    topology=ONLINE_BOUTIQUE,
    upstream=(
        "online-boutique/kubernetes-manifests.yaml",
        f"online-boutique/src-{VERSION}/",
    ),
    deploy_dir="deploy/",
    cells=CELLS,
    think_s=THINK_S,
    route_calls=ROUTE_CALLS,
    service_ms=SERVICE_MS,
    texts=TEXTS,
    error_backend=frontend_error_backend,
    error_steps=ERROR_STEPS,
    recovery_rules=RULES,
)
"""Online Boutique as r2act benchmarks it."""

__all__ = [
    "FRONTEND_STEP_BACKENDS",
    "ONLINE_BOUTIQUE",
    "SYSTEM",
    "VERSION",
    "frontend_error_backend",
]
