"""Collection: runs planned incidents on a Cluster and writes the raw store.

Journalled, resumable, and guaranteed to remove every chaos object it created. It talks to
a cluster only through ``r2act.cluster.base.Cluster``, so it runs unchanged on the simulated
and the real adapter. Modules: ``campaign`` (the whole run), ``lifecycle`` (one incident),
``snapshot`` and ``store`` (phase files), ``journal``, ``guard`` (signals and cleanup),
``resume``, ``retrying``, ``cleanup`` (the sweep), ``layout`` (file names).
"""

from r2act.collector.campaign import (
    CampaignSummary,
    CollectionPlan,
    PlannedChaos,
    collect,
    default_run_dir,
    open_target,
    plan_collection,
    settings_for,
)
from r2act.collector.cleanup import sweep
from r2act.collector.context import (
    CollectionObserver,
    CollectSettings,
    IncidentResult,
    NullObserver,
    Provenance,
)
from r2act.collector.guard import CleanupGuard, Interrupted
from r2act.collector.retrying import RetryPolicy

__all__ = [
    "CampaignSummary",
    "CleanupGuard",
    "CollectSettings",
    "CollectionObserver",
    "CollectionPlan",
    "IncidentResult",
    "Interrupted",
    "NullObserver",
    "PlannedChaos",
    "Provenance",
    "RetryPolicy",
    "collect",
    "default_run_dir",
    "open_target",
    "plan_collection",
    "settings_for",
    "sweep",
]
