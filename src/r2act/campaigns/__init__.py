"""Campaign manifests: the strict manifest model, its loader, the planner and Chaos Mesh rendering.

Pure: reads a manifest file and returns typed models; never touches a cluster."""

from r2act.campaigns.chaos import chaos_name, incident_label, render_chaos
from r2act.campaigns.loader import load_manifest, manifest_sha256
from r2act.campaigns.manifest import (
    CellRepetitions,
    GlitchRates,
    HealthConfig,
    KubernetesTarget,
    LoadProfile,
    Manifest,
    MetricsConfig,
    SimTarget,
)
from r2act.campaigns.planner import incident_seed, plan_incidents

__all__ = [
    "CellRepetitions",
    "GlitchRates",
    "HealthConfig",
    "KubernetesTarget",
    "LoadProfile",
    "Manifest",
    "MetricsConfig",
    "SimTarget",
    "chaos_name",
    "incident_label",
    "incident_seed",
    "load_manifest",
    "manifest_sha256",
    "plan_incidents",
    "render_chaos",
]
