"""Expand a manifest into the ordered list of incidents to collect.

Order is services x faults x intensities x repetitions, each in manifest order, so a plan
reads like the manifest. Ids and seeds depend only on the manifest, never on time or on
Python's randomised ``hash``, so a rerun (or a resume after a crash) plans the same
incidents with the same seeds. Each cell and intensity plans its quota (the main incidents
wanted) plus its spares (``Manifest.spares_for``); every incident carries the quota, so the audit
admits the first ``quota`` clean ones and the collector can stop a full cell
(``r2act.campaigns.quotas``).
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
    memory_bytes,
)
from r2act.schema.topology import split_address
from r2act.systems import system_of

HTTP_FAULTS = frozenset({FaultType.HTTP_ERROR, FaultType.HTTP_ABORT})
DNS_FAULTS = frozenset({FaultType.DNS_FAULT, FaultType.DNS_RANDOM})


def plan_incidents(manifest: Manifest) -> list[PlannedIncident]:
    """Every incident the manifest asks for, in collection order, with stable ids and seeds."""
    planned: list[PlannedIncident] = []
    for service in manifest.services:
        for fault in manifest.faults:
            for intensity in fault.intensities:
                base = fault.parameters_for(intensity)
                if fault.fault_type == FaultType.FEATURE_FLAG:
                    named = manifest.flag_for(service, intensity)
                    base = base if named is None else {**base, "flag": named}
                cell = (service, fault.fault_type, intensity)
                quota = manifest.repetitions_for(*cell)
                if quota == 0:
                    continue
                planned.extend(
                    _incident(manifest, cell, base, repetition, quota)
                    for repetition in range(1, quota + manifest.spares_for(quota) + 1)
                )
    return planned


def incident_seed(campaign_seed: int, incident: str) -> int:
    """A 63-bit seed from the campaign seed and the incident id (stable across processes)."""
    digest = hashlib.sha256(f"{campaign_seed}:{incident}".encode()).digest()
    return int.from_bytes(digest[:8], "big") & (2**63 - 1)


def incident_draw(campaign_seed: int, incident: str, purpose: str) -> float:
    """A number in [0, 1) drawn for one purpose of one incident (stable across processes).

    Parameters that differ between incidents of one cell (the caller holding a broken
    address, the lowered memory limit) come from here, so they follow from the campaign
    seed and the incident id alone, never from the order incidents are planned in."""
    digest = hashlib.sha256(f"{campaign_seed}:{incident}:{purpose}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def resolve_parameters(
    fault_type: FaultType,
    service: str,
    repetition: int,
    base: dict[str, JsonValue],
    topology: Topology,
    *,
    ident: str = "",
    seed: int = 0,
    intensity: Intensity = Intensity.MODERATE,
) -> dict[str, JsonValue]:
    """The concrete injector parameters of one incident.

    The HTTP route cycles through the entry point's routes by repetition, so repetitions of
    one cell differ in the rule a plan must name; the caller whose address a DNS fault
    breaks, the lowered memory limit and a random DNS answer are drawn from the campaign
    ``seed`` and the incident id ``ident`` (``incident_draw``), and so is a feature flag
    the manifest does not name, whose ``intensity`` picks the variant (``_flag``)."""
    params = dict(base)
    if fault_type == FaultType.POD_FAILURE:
        params["action"] = "pod-failure"
    elif fault_type == FaultType.MEMORY_PRESSURE:
        params.update(_memory_limit(service, base, topology, incident_draw(seed, ident, "memory")))
    elif fault_type == FaultType.NETWORK_DELAY:
        params["direction"] = "to"
    elif fault_type in HTTP_FAULTS:
        params.update(_http_route(service, repetition, topology))
        params["target"] = "Response" if fault_type == FaultType.HTTP_ERROR else "Request"
        if fault_type == FaultType.HTTP_ABORT:
            params["abort"] = True
    elif fault_type in DNS_FAULTS:
        params.update(
            _dns(fault_type, service, topology, ident, incident_draw(seed, ident, "caller"))
        )
    elif fault_type == FaultType.FEATURE_FLAG:
        params.update(_flag(service, base, topology, intensity, incident_draw(seed, ident, "flag")))
    return params


def _flag(
    service: str, base: dict[str, JsonValue], topology: Topology, intensity: Intensity, draw: float
) -> dict[str, JsonValue]:
    """The flag a flag fault on ``service`` turns on, and the variant ``intensity`` names.

    The flag is the manifest's (``base["flag"]``, checked by ``campaigns.flags``) or drawn
    (``draw``) among the service's realizable flags in flag-file order, as the fault a
    service's own flags can cause may be any of them; the label stays ``service``."""
    system = system_of(topology)
    named = base.get("flag")
    if isinstance(named, str):
        chosen = system.flags.get(named)
        if chosen is None:
            raise ValueError(f"{system.name} has no flag {named!r}")
    else:
        candidates = system.realizable_flags(service)
        if not candidates:
            raise ValueError(f"no realizable flag is a fault of {service} (drop feature_flag)")
        chosen = candidates[int(draw * len(candidates))]
    return {"flag": chosen.key, "variant": chosen.variant(intensity).name}


def _incident(
    manifest: Manifest,
    cell: tuple[str, FaultType, Intensity],
    base: dict[str, JsonValue],
    repetition: int,
    quota: int,
) -> PlannedIncident:
    topology = manifest.topology
    service, fault_type, intensity = cell
    ident = incident_id(topology.system, service, fault_type, intensity, repetition)
    spec = FaultSpec(
        type=fault_type,
        intensity=intensity,
        service=service,
        duration_s=manifest.phases.during_s,
        parameters=resolve_parameters(
            fault_type,
            service,
            repetition,
            base,
            topology,
            ident=ident,
            seed=manifest.seed,
            intensity=intensity,
        ),
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
        quota=quota,
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


def _memory_limit(
    service: str, base: dict[str, JsonValue], topology: Topology, draw: float
) -> dict[str, JsonValue]:
    """The lowered limit: a share of the memory request, in whole Mi.

    ``limit_percent`` (a manifest override) fixes the share; otherwise it is drawn from the
    intensity's ``limit_percent_range`` (``campaigns.defaults``), so incidents of one cell
    differ in the limit a method sees. Every share of the defaults lies between the
    start-up working set and the working set under load, so the new pod becomes ready and
    is OOM-killed under load (``campaigns.defaults`` says why not at start-up)."""
    main = topology.deployment(service).main
    percent = base.get("limit_percent")
    if not isinstance(percent, int):
        low, high = _percent_range(base.get("limit_percent_range"))
        percent = low + int(draw * (high - low + 1))
    limit = max(memory_bytes(main.memory_request) * percent // 100 // 2**20, 1)
    return {"container": main.name, "memory_limit": f"{limit}Mi", "limit_percent": percent}


def _percent_range(value: JsonValue) -> tuple[int, int]:
    if (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        low, high = int(str(value[0])), int(str(value[1]))
        if 1 <= low <= high <= 99:
            return low, high
    raise ValueError(f"limit_percent_range must be [low, high] percent, got {value!r}")


DOC_NETS = ("192.0.2", "198.51.100", "203.0.113")
"""RFC 5737's three /24s reserved for documentation (TEST-NET-1, -2, -3): never assigned
to a host, so a wrong address drawn there dials nobody, on a test bed or anywhere."""


def _dns(
    fault_type: FaultType, service: str, topology: Topology, ident: str, draw: float
) -> dict[str, JsonValue]:
    """The caller whose address of ``service`` breaks, its variable and the wrong value.

    The caller is drawn (``draw``) from every deployment whose environment holds an address
    of ``service`` (``Topology.address_holders``), as a real misconfiguration can sit in any
    of them; the label stays ``service``. ``dns_fault``: the host becomes
    ``<service>.invalid`` (RFC 6761 reserves ``.invalid``, so it never resolves: NXDOMAIN).
    ``dns_random``: a wrong IPv4 literal with the right port, drawn from the incident id in
    the RFC 5737 documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24), which
    reach no real host: a SYN to one is dropped, so the caller's connect times out
    (``DOC_NETS``)."""
    holders = topology.address_holders(service)
    if not holders:
        raise ValueError(f"no caller holds an address of {service} (drop dns faults on it)")
    found = topology.held_address(holders[int(draw * len(holders))], service)
    assert found is not None, "address_holders lists only deployments holding one"
    caller, variable, address = found
    scheme, _, port = split_address(address)
    if fault_type == FaultType.DNS_FAULT:
        value = f"{scheme}{service}.invalid:{port}"
    else:
        digest = hashlib.sha256(f"dns_random:{ident}".encode()).digest()
        value = f"{scheme}{DOC_NETS[digest[0] % len(DOC_NETS)]}.{1 + digest[1] % 254}:{port}"
    caller_main = topology.deployment(caller).main.name
    return {
        "caller": caller,
        "container": caller_main,
        "variable": variable,
        "value": value,
        "dependency": address,
    }
