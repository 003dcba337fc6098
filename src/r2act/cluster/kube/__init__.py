"""The real-cluster adapter, split by concern as ``sim/`` is.

- ``api``: the edge to the API server (raw JSON, translated errors, retries, named
  permissions); the only module that imports ``kubernetes``;
- ``parse``: what the API's JSON means (pods, events, chaos status, cluster state);
- ``config_fault``: r2act's own configuration-fault injector (a Deployment template change
  with its originals kept in an annotation);
- ``flag_fault``: r2act's feature-flag injector (a flag's ``defaultVariant`` in its
  ConfigMap, taken live by restarting the flag service; undone flag by flag);
- ``plans``: recovery plans (apply, preimage, undo), mixed into the cluster;
- ``cluster``: ``KubeCluster``, the Cluster port on top of those (safety checks, chaos
  objects, snapshots, health) and ``connect_kubernetes``.

Retries are ``cluster.retry``'s (shared with the Prometheus adapter).
"""

from r2act.cluster.kube.cluster import (
    REQUIRED_PERMISSIONS,
    KubeCluster,
    Permission,
    WallClock,
    connect_kubernetes,
)

__all__ = ["REQUIRED_PERMISSIONS", "KubeCluster", "Permission", "WallClock", "connect_kubernetes"]
