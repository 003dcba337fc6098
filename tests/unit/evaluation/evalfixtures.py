"""Tiny hand-made benchmark records on the Online Boutique topology.

Records are built directly (no dataset on disk) with labels that follow the default policy
closely enough to hand-compute every metric: pod/network -> restart, cpu -> scale_out,
memory -> increase_memory_limit, http -> rollback_config, dns -> repair_dependency.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence

from r2act.evaluation import PredictionFile, parse_stream
from r2act.schema import (
    PLAN_ADAPTER,
    ActionSpace,
    BenchmarkRecord,
    FailureMode,
    FaultSpec,
    FaultType,
    Intensity,
    InvalidPlan,
    ObservationRefs,
    Operation,
    PlanPattern,
    RcaLabel,
    RecordMetadata,
    RecoveryPlan,
)
from r2act.systems import ONLINE_BOUTIQUE as OB


def action_space() -> ActionSpace:
    targets = [d.name for d in OB.deployments if d.name != OB.load_generator]
    return ActionSpace(
        operations=list(Operation),
        targets=targets,
        min_replicas=2,
        max_replicas=10,
        max_memory_limit="2Gi",
        current_memory_limits={t: OB.deployment(t).main.memory_limit for t in targets},
        scopes={t: [r.scope for r in OB.routes_of(t)] for t in targets},
        dependencies={
            t: [
                e
                for e in [
                    *(OB.deployment(c).endpoint for c in OB.dependencies(t)),
                    OB.deployment(t).endpoint,
                ]
                if e
            ]
            for t in targets
        },
    )


def plan(**fields: object) -> RecoveryPlan:
    return PLAN_ADAPTER.validate_python(fields)


def _labels(service: str, fault: FaultType) -> tuple[RecoveryPlan, list[PlanPattern]]:
    if fault in (FaultType.POD_FAILURE, FaultType.NETWORK_DELAY):
        return plan(operation="restart_service", target=service), [
            PlanPattern(operation=Operation.RESTART_SERVICE, targets=[service])
        ]
    if fault is FaultType.CPU_SATURATION:
        return plan(operation="scale_out", target=service, replicas=2), [
            PlanPattern(
                operation=Operation.SCALE_OUT, targets=[service], min_replicas=2, max_replicas=10
            )
        ]
    if fault is FaultType.MEMORY_PRESSURE:
        return plan(operation="increase_memory_limit", target=service, memory_limit="512Mi"), [
            PlanPattern(
                operation=Operation.INCREASE_MEMORY_LIMIT,
                targets=[service],
                min_memory_limit="400Mi",
                max_memory_limit="2Gi",
            )
        ]
    if fault in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        scope = OB.routes_of(service)[0].scope
        return plan(operation="rollback_config", target=service, scope=scope), [
            PlanPattern(operation=Operation.ROLLBACK_CONFIG, targets=[service], scope=scope)
        ]
    endpoint = OB.deployment(service).endpoint
    return plan(operation="repair_dependency", target=service, dependency=endpoint), [
        PlanPattern(
            operation=Operation.REPAIR_DEPENDENCY,
            targets=[service, *OB.callers(service)],
            dependency=endpoint,
        )
    ]


def make_record(service: str, fault: str, rep: int = 1) -> BenchmarkRecord:
    fault_type = FaultType(fault)
    gold, patterns = _labels(service, fault_type)
    incident = f"onlineboutique_{service}_{fault}_moderate_r{rep:02d}"
    return BenchmarkRecord(
        incident_id=incident,
        metadata=RecordMetadata(
            campaign="test",
            system="onlineboutique",
            repetition=rep,
            target_kind="sim",
            seed=rep,
            tool_version="0",
            manifest_sha256="0" * 64,
            collected_at="2026-01-01T00:00:00Z",
        ),
        fault=FaultSpec(
            type=fault_type, intensity=Intensity.MODERATE, service=service, duration_s=60
        ),
        observations=ObservationRefs(
            phases=["pre", "during", "post"],
            log_records=1,
            event_records=0,
            metric_samples=0,
            services_logging=[],
        ),
        labels=RcaLabel(
            service=service, fault_type=fault_type, intensity=Intensity.MODERATE, mechanism="test"
        ),
        action_space=action_space(),
        gold_plan=gold,
        valid_plans=patterns,
        invalid_plans=[
            InvalidPlan(plan=plan(operation="no_action"), failure_mode=FailureMode.NO_OP),
            InvalidPlan(
                plan=plan(operation="rollback_deployment", target=service),
                failure_mode=FailureMode.WRONG_OPERATION,
            ),
        ],
        policy="test/1",
    )


def lines_to_file(lines: Sequence[object], source: str = "pred.jsonl") -> PredictionFile:
    """Parse JSON-encodable objects (or raw bytes lines) as a predictions file."""
    raw = b"".join(
        (line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n" for line in lines
    )
    return parse_stream(io.BytesIO(raw), source=source)


def pred(
    record: BenchmarkRecord,
    service: str | None = None,
    fault: str | None = None,
    plan_: object = "gold",
) -> dict[str, object]:
    """A prediction line for ``record``; defaults are the right answer."""
    line: dict[str, object] = {
        "incident_id": record.incident_id,
        "rca": {
            "service": service or record.labels.service,
            "fault_type": fault or record.labels.fault_type.value,
        },
    }
    if plan_ == "gold":
        line["plan"] = record.gold_plan.model_dump()
    else:
        line["plan"] = plan_
    return line
