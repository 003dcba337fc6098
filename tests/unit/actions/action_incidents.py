"""Build PlannedIncidents the way the campaign planner does (contracts.md), without it.

The actions tests must not depend on the campaigns package, so this mirrors the parameter
conventions: HTTP faults record method/path/port of the route chosen by repetition, DNS
faults record patterns, memory faults a size cycled by repetition, and so on.
"""

from __future__ import annotations

from pydantic import JsonValue

from r2act.schema import (
    FaultSpec,
    FaultType,
    Intensity,
    PhaseDurations,
    PlannedIncident,
    Topology,
    incident_id,
)
from r2act.systems import ONLINE_BOUTIQUE

MEMORY_SIZES = {
    Intensity.MODERATE: ["24MB", "40MB"],
    Intensity.SEVERE: ["160MB", "256MB", "384MB"],
}
ROOT_CAUSE_SERVICES = [
    "frontend",
    "checkoutservice",
    "recommendationservice",
    "cartservice",
    "productcatalogservice",
    "paymentservice",
]


def fault_parameters(
    service: str,
    fault_type: FaultType,
    intensity: Intensity,
    repetition: int,
    topology: Topology = ONLINE_BOUTIQUE,
) -> dict[str, JsonValue]:
    """Chaos Mesh parameters as contracts.md says the planner records them."""
    severe = intensity == Intensity.SEVERE
    if fault_type == FaultType.CPU_SATURATION:
        return {"workers": 2 if severe else 1, "load": 100 if severe else 80}
    if fault_type == FaultType.MEMORY_PRESSURE:
        sizes = MEMORY_SIZES[intensity]
        return {"workers": 1, "size": sizes[(repetition - 1) % len(sizes)]}
    if fault_type == FaultType.NETWORK_DELAY:
        return {
            "latency": "1200ms" if severe else "200ms",
            "jitter": "200ms" if severe else "50ms",
            "correlation": "25",
        }
    if fault_type in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        routes = topology.routes_of(service)
        route = routes[(repetition - 1) % len(routes)]
        params: dict[str, JsonValue] = {
            "method": route.method,
            "path": route.path,
            "port": topology.entrypoint_port,
        }
        if fault_type == FaultType.HTTP_ERROR:
            params["code"] = 503 if severe else 500
        else:
            params["abort"] = True
        return params
    if fault_type in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
        return {"patterns": [service, f"{service}.*"]}
    return {}


def make_incident(
    service: str,
    fault_type: FaultType,
    intensity: Intensity = Intensity.MODERATE,
    repetition: int = 1,
    *,
    parameters: dict[str, JsonValue] | None = None,
    topology: Topology = ONLINE_BOUTIQUE,
) -> PlannedIncident:
    """One incident; ``parameters`` replaces the conventional ones when given."""
    params = (
        fault_parameters(service, fault_type, intensity, repetition, topology)
        if parameters is None
        else parameters
    )
    return PlannedIncident(
        id=incident_id(topology.system, service, fault_type, intensity, repetition),
        campaign="actions-tests",
        system=topology.system,
        service=service,
        fault=FaultSpec(
            type=fault_type,
            intensity=intensity,
            service=service,
            duration_s=120,
            parameters=params,
        ),
        repetition=repetition,
        phases=PhaseDurations(),
        seed=repetition,
    )


def every_incident_kind() -> list[PlannedIncident]:
    """One incident per root-cause service x fault type x intensity x a few repetitions."""
    return [
        make_incident(service, fault_type, intensity, repetition)
        for service in ROOT_CAUSE_SERVICES
        for fault_type in FaultType
        for intensity in Intensity
        for repetition in (1, 2, 3)
    ]
