"""Build PlannedIncidents the way the campaign planner does (contracts.md), without it.

The actions tests must not depend on the campaigns package, so this mirrors the parameter
conventions: HTTP faults (always on the entry point) record method/path/port of the route
chosen by repetition, DNS faults the variable of a caller holding the address (cycling
through the holders by repetition, where the planner draws one) and its wrong value,
memory faults the lowered limit, and so on.
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
from r2act.systems import ONLINE_BOUTIQUE, get_system

LIMIT_PERCENT = {Intensity.MODERATE: 75, Intensity.SEVERE: 55}
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
    """Injector parameters as the planner records them."""
    severe = intensity == Intensity.SEVERE
    if fault_type == FaultType.CPU_SATURATION:
        return {"workers": 2 if severe else 1, "load": 100 if severe else 80}
    if fault_type == FaultType.MEMORY_PRESSURE:
        request = int(topology.deployment(service).main.memory_request.removesuffix("Mi"))
        return {
            "limit_percent": LIMIT_PERCENT[intensity],
            "container": "server",
            "memory_limit": f"{request * LIMIT_PERCENT[intensity] // 100}Mi",
        }
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
        holders = topology.address_holders(service)
        assert holders, f"no caller holds an address of {service}"
        found = topology.held_address(holders[(repetition - 1) % len(holders)], service)
        assert found is not None
        caller, variable, address = found
        port = address.split(":")[1]
        value = (
            f"{service}.invalid:{port}"
            if fault_type == FaultType.DNS_FAULT
            else f"10.9.8.{repetition}:{port}"
        )
        return {"caller": caller, "variable": variable, "value": value, "dependency": address}
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


def realizable(service: str, fault_type: FaultType, topology: Topology = ONLINE_BOUTIQUE) -> bool:
    """HTTP faults only on the entry point, DNS faults only where a caller holds the address."""
    if fault_type in (FaultType.HTTP_ERROR, FaultType.HTTP_ABORT):
        return service == topology.entrypoint
    if fault_type in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
        return bool(topology.address_holders(service))
    return True


def every_incident_kind() -> list[PlannedIncident]:
    """One incident per realizable service x fault type x intensity x a few repetitions."""
    return [
        make_incident(service, fault_type, intensity, repetition)
        for service in ROOT_CAUSE_SERVICES
        for fault_type in get_system("onlineboutique").fault_types
        if realizable(service, fault_type)
        for intensity in Intensity
        for repetition in (1, 2, 3)
    ]
