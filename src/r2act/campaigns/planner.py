"""Expand a manifest into the ordered list of incidents to collect.

Order is services x faults x intensities x repetitions, each in manifest order, so a plan
reads like the manifest. Ids and seeds depend only on the manifest, never on time or on
Python's randomised ``hash``, so a rerun (or a resume after a crash) plans the same
incidents with the same seeds.
"""

from __future__ import annotations

import hashlib

from pydantic import JsonValue

from r2act.campaigns.manifest import Manifest
from r2act.schema import (
    FaultSpec,
    FaultType,
    Intensity,
    PhaseDurations,
    PlannedIncident,
    Topology,
    incident_id,
)

HTTP_FAULTS = frozenset({FaultType.HTTP_ERROR, FaultType.HTTP_ABORT})
DNS_FAULTS = frozenset({FaultType.DNS_FAULT, FaultType.DNS_RANDOM})


def plan_incidents(manifest: Manifest) -> list[PlannedIncident]:
    """Every incident the manifest asks for, in collection order, with stable ids and seeds."""
    planned: list[PlannedIncident] = []
    for service in manifest.services:
        for fault in manifest.faults:
            for intensity in fault.intensities:
                base = fault.parameters_for(intensity)
                cell = (service, fault.fault_type, intensity)
                count = manifest.repetitions_for(*cell)
                planned.extend(
                    _incident(manifest, cell, base, repetition)
                    for repetition in range(1, count + 1)
                )
    return planned


def incident_seed(campaign_seed: int, incident: str) -> int:
    """A 63-bit seed from the campaign seed and the incident id (stable across processes)."""
    digest = hashlib.sha256(f"{campaign_seed}:{incident}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def resolve_parameters(
    fault_type: FaultType,
    service: str,
    repetition: int,
    base: dict[str, JsonValue],
    topology: Topology,
) -> dict[str, JsonValue]:
    """The concrete Chaos Mesh parameters of one incident.

    Choices that vary by repetition (the memory size, the HTTP route) cycle through their
    options, so repetitions of one cell differ in ways the recovery label depends on."""
    params = dict(base)
    if fault_type == FaultType.POD_FAILURE:
        params["action"] = "pod-failure"
    elif fault_type == FaultType.MEMORY_PRESSURE:
        sizes = params.pop("sizes")
        assert isinstance(sizes, list) and sizes, "memory defaults always list sizes"
        params["size"] = sizes[(repetition - 1) % len(sizes)]
    elif fault_type == FaultType.NETWORK_DELAY:
        params["direction"] = "to"
    elif fault_type in HTTP_FAULTS:
        params.update(_http_route(service, repetition, topology))
        params["target"] = "Response" if fault_type == FaultType.HTTP_ERROR else "Request"
        if fault_type == FaultType.HTTP_ABORT:
            params["abort"] = True
    elif fault_type in DNS_FAULTS:
        params.update(_dns(fault_type, service, topology))
    return params


def _incident(
    manifest: Manifest,
    cell: tuple[str, FaultType, Intensity],
    base: dict[str, JsonValue],
    repetition: int,
) -> PlannedIncident:
    topology = manifest.topology
    service, fault_type, intensity = cell
    ident = incident_id(topology.system, service, fault_type, intensity, repetition)
    spec = FaultSpec(
        type=fault_type,
        intensity=intensity,
        service=service,
        duration_s=manifest.phases.during_s,
        parameters=resolve_parameters(fault_type, service, repetition, base, topology),
    )
    return PlannedIncident(
        id=ident,
        campaign=manifest.name,
        system=topology.system,
        service=service,
        fault=spec,
        repetition=repetition,
        phases=PhaseDurations.model_validate(manifest.phases.model_dump()),
        seed=incident_seed(manifest.seed, ident),
        pilot=manifest.pilot,
    )


def _http_route(service: str, repetition: int, topology: Topology) -> dict[str, JsonValue]:
    routes = topology.routes_of(service)
    if not routes:
        raise ValueError(f"no HTTP route of {topology.entrypoint} reaches {service}")
    route = routes[(repetition - 1) % len(routes)]
    return {
        "method": route.method,
        "path": route.path,
        "port": topology.entrypoint_port,
        "scope": route.scope,
    }


def _dns(fault_type: FaultType, service: str, topology: Topology) -> dict[str, JsonValue]:
    callers: list[JsonValue] = list(topology.callers(service))
    return {
        "action": "error" if fault_type == FaultType.DNS_FAULT else "random",
        "patterns": [service, f"{service}.*"],
        "callers": callers,
        "dependency": topology.deployment(service).endpoint,
    }
