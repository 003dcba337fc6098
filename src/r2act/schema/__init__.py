"""Typed contracts between the pipeline stages. Pure models: no I/O, no other r2act imports.

Every model documents each field; JSON Schemas are generated from them (``r2act schema
export``) and never written by hand.
"""

from r2act.schema.cluster import Change, ChaosRef, HealthReport, PlanEffect, PreflightReport
from r2act.schema.faults import CHAOS_KIND, FaultSpec, FaultType, Intensity
from r2act.schema.incidents import (
    INCIDENT_ID_PATTERN,
    PhaseDurations,
    PlannedIncident,
    incident_id,
)
from r2act.schema.plans import (
    PLAN_ADAPTER,
    FailureMode,
    IncreaseMemoryLimit,
    InvalidPlan,
    NoAction,
    Operation,
    PlanPattern,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    plan_target,
)
from r2act.schema.predictions import Prediction, RcaPrediction
from r2act.schema.quantities import cpu_millicores, format_mebibytes, memory_bytes
from r2act.schema.records import (
    SCHEMA_VERSION,
    ActionSpace,
    BenchmarkRecord,
    ObservationRefs,
    RcaLabel,
    RecordMetadata,
)
from r2act.schema.telemetry import (
    PHASES,
    ChaosEvent,
    ChaosRecord,
    ChaosStatus,
    ClusterState,
    ContainerState,
    DeploymentState,
    KubeEvent,
    LogLine,
    MetricSeries,
    Phase,
    PodState,
    TimeWindow,
)
from r2act.schema.topology import ContainerSpec, DeploymentSpec, HttpRoute, Topology

__all__ = [
    "CHAOS_KIND",
    "INCIDENT_ID_PATTERN",
    "PHASES",
    "PLAN_ADAPTER",
    "SCHEMA_VERSION",
    "ActionSpace",
    "BenchmarkRecord",
    "Change",
    "ChaosEvent",
    "ChaosRecord",
    "ChaosRef",
    "ChaosStatus",
    "ClusterState",
    "ContainerSpec",
    "ContainerState",
    "DeploymentSpec",
    "DeploymentState",
    "FailureMode",
    "FaultSpec",
    "FaultType",
    "HealthReport",
    "HttpRoute",
    "IncreaseMemoryLimit",
    "Intensity",
    "InvalidPlan",
    "KubeEvent",
    "LogLine",
    "MetricSeries",
    "NoAction",
    "ObservationRefs",
    "Operation",
    "Phase",
    "PhaseDurations",
    "PlanEffect",
    "PlanPattern",
    "PlannedIncident",
    "PodState",
    "Prediction",
    "PreflightReport",
    "RcaLabel",
    "RcaPrediction",
    "RecordMetadata",
    "RecoveryPlan",
    "RepairDependency",
    "RestartService",
    "RollbackConfig",
    "RollbackDeployment",
    "ScaleOut",
    "TimeWindow",
    "Topology",
    "cpu_millicores",
    "format_mebibytes",
    "incident_id",
    "memory_bytes",
    "plan_target",
]
