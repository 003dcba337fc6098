"""Materialise a BenchmarkRecord from an audited incident (the paper's section III-C).

Labels, action space and plan sets come from ``actions.label_incident`` under the named
policy, so the gate never invents recovery semantics of its own; this module only joins
them with the annotation and the observation counts the evidence already holds.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Final

from pydantic import ValidationError

from r2act.actions import DEFAULT_POLICY, RecoveryPolicy, label_incident
from r2act.quality_gate.evidence import IncidentEvidence
from r2act.quality_gate.problems import Problem, error
from r2act.schema import (
    PHASES,
    BenchmarkRecord,
    FaultType,
    ObservationRefs,
    PlannedIncident,
    RcaLabel,
    RecordMetadata,
    Topology,
)
from r2act.systems import SYSTEMS

MECHANISM: Final[dict[FaultType, str]] = {
    FaultType.POD_FAILURE: "chaos-mesh-pod-failure",
    FaultType.CPU_SATURATION: "chaos-mesh-stress-cpu",
    FaultType.MEMORY_PRESSURE: "config-fault-memory-limit",
    FaultType.NETWORK_DELAY: "chaos-mesh-network-delay",
    FaultType.HTTP_ERROR: "chaos-mesh-http-replace-code",
    FaultType.HTTP_ABORT: "chaos-mesh-http-abort",
    FaultType.DNS_FAULT: "config-fault-address-nxdomain",
    FaultType.DNS_RANDOM: "config-fault-address-wrong-ip",
    FaultType.FEATURE_FLAG: "flag-fault-default-variant",
}
"""The injection mechanism label of each fault type (paper Fig. 4 style; ``docs/faults.md``)."""


def rfc3339(ts: float) -> str:
    """Seconds since the epoch as an RFC 3339 UTC string with millisecond precision."""
    moment = datetime.fromtimestamp(ts, tz=UTC)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _load_profile(load: dict[str, object]) -> dict[str, int | float | str]:
    return {str(k): v for k, v in sorted(load.items()) if isinstance(v, int | float | str)}


def record_for(
    incident: PlannedIncident,
    topology: Topology,
    metadata: RecordMetadata,
    observations: ObservationRefs,
    policy: RecoveryPolicy = DEFAULT_POLICY,
) -> BenchmarkRecord:
    """Join an incident's labels under ``policy`` with its metadata and observations.

    The one place a record is assembled; the audit calls it with what the raw store shows,
    benchmarks and tests with synthetic metadata.
    """
    labels = label_incident(incident, topology, policy)
    return BenchmarkRecord(
        incident_id=incident.id,
        metadata=metadata,
        fault=incident.fault,
        observations=observations,
        labels=RcaLabel(
            service=incident.service,
            fault_type=incident.fault.type,
            intensity=incident.fault.intensity,
            mechanism=MECHANISM[incident.fault.type],
        ),
        action_space=labels.action_space,
        gold_plan=labels.gold_plan,
        valid_plans=list(labels.valid_plans),
        invalid_plans=list(labels.invalid_plans),
        policy=labels.policy,
    )


def planned_record(
    incident: PlannedIncident, topology: Topology, *, tool_version: str
) -> BenchmarkRecord:
    """The record an incident would get before any collection: labels, no observations.

    Later stages (evaluation, replay) need only labels and the action space, so benchmarks
    and tests of those stages start from the plan instead of a collected run.
    """
    return record_for(
        incident,
        topology,
        RecordMetadata(
            campaign=incident.campaign,
            system=incident.system,
            repetition=incident.repetition,
            target_kind="sim",
            seed=incident.seed,
            tool_version=tool_version,
            manifest_sha256="0" * 64,
            collected_at=rfc3339(0.0),
        ),
        ObservationRefs(
            phases=[], log_records=0, event_records=0, metric_samples=0, services_logging=[]
        ),
    )


def build_record(
    ev: IncidentEvidence, policy: RecoveryPolicy = DEFAULT_POLICY
) -> tuple[BenchmarkRecord | None, list[Problem]]:
    """The record of an incident, or None with a RECORD_INVALID problem saying why."""
    ann = ev.annotation
    if ann is None:
        return None, []
    incident = ann.incident
    topology = SYSTEMS.get(incident.system)
    if topology is None:
        return None, [error("RECORD_INVALID", f"unknown system {incident.system!r}")]
    phases = [p for p in PHASES if ev.phases[p].logs is not None]
    services = sorted({s for p in ev.phases.values() if p.logs for s in p.logs.services})
    injected = ann.timestamps.injected_at or ann.timestamps.pre_start or 0.0
    try:
        record = record_for(
            incident,
            topology,
            RecordMetadata(
                campaign=ann.campaign,
                system=incident.system,
                repetition=incident.repetition,
                target_kind=ann.target.kind,
                target_seed=ann.target.seed,
                noise=ann.target.noise,
                seed=incident.seed,
                tool_version=ann.tool_version,
                manifest_sha256=ann.manifest_sha256,
                collected_at=rfc3339(injected),
                load_profile=_load_profile(ann.load),
            ),
            ObservationRefs(
                phases=phases,
                log_records=ev.log_records,
                event_records=sum(p.events.visible for p in ev.phases.values() if p.events),
                metric_samples=sum(p.metrics.samples for p in ev.phases.values() if p.metrics),
                services_logging=services,
            ),
            policy,
        )
    except (ValidationError, ValueError, KeyError) as exc:
        first = str(exc).splitlines()[0][:300]
        return None, [error("RECORD_INVALID", f"record cannot be built: {first}")]
    return record, []
