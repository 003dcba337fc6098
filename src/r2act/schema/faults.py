"""Fault vocabulary: the eight fault types, two intensities and a fault's full specification."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class FaultType(StrEnum):
    """Root-cause fault categories, one Chaos Mesh mechanism each."""

    POD_FAILURE = "pod_failure"
    CPU_SATURATION = "cpu_saturation"
    MEMORY_PRESSURE = "memory_pressure"
    NETWORK_DELAY = "network_delay"
    HTTP_ERROR = "http_error"
    HTTP_ABORT = "http_abort"
    DNS_FAULT = "dns_fault"
    DNS_RANDOM = "dns_random"


class Intensity(StrEnum):
    """How hard a fault hits; it scales the Chaos Mesh parameters."""

    MODERATE = "moderate"
    SEVERE = "severe"


CHAOS_KIND: dict[FaultType, str] = {
    FaultType.POD_FAILURE: "PodChaos",
    FaultType.CPU_SATURATION: "StressChaos",
    FaultType.MEMORY_PRESSURE: "StressChaos",
    FaultType.NETWORK_DELAY: "NetworkChaos",
    FaultType.HTTP_ERROR: "HTTPChaos",
    FaultType.HTTP_ABORT: "HTTPChaos",
    FaultType.DNS_FAULT: "DNSChaos",
    FaultType.DNS_RANDOM: "DNSChaos",
}
"""The Chaos Mesh kind that injects each fault type."""


class FaultSpec(BaseModel):
    """One fault as planned: what, how hard, where, for how long, with which parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: FaultType = Field(description="Fault category; it is the root-cause type label.")
    intensity: Intensity = Field(description="Intensity level that chose the parameters.")
    service: str = Field(description="Root-cause service: the deployment the fault is about.")
    duration_s: int = Field(gt=0, description="How long the Chaos Mesh object keeps the fault.")
    parameters: dict[str, JsonValue] = Field(
        default_factory=dict,
        description=(
            "Kind-specific Chaos Mesh parameters, resolved from defaults and the manifest: "
            "e.g. latency/jitter (delay), workers/load (cpu), workers/size (memory), "
            "path/method/code (http), patterns (dns)."
        ),
    )

    @property
    def chaos_kind(self) -> str:
        """The Chaos Mesh kind that injects this fault."""
        return CHAOS_KIND[self.type]
