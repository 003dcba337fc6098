"""Fault entries of a manifest: one model per fault type, with typed parameter overrides.

A discriminated union on ``type`` lets each fault type accept exactly the parameters its
injector has, so ``load: 190`` or a latency without a unit is caught with the
field's path and line instead of failing later inside Chaos Mesh.
"""

from __future__ import annotations

from typing import Annotated, Generic, Literal, TypeVar

from pydantic import BaseModel, Field, JsonValue, field_validator

from r2act.campaigns.base import DURATION, STRICT, IntensityName
from r2act.campaigns.defaults import FAULT_DEFAULTS
from r2act.schema import FaultType, Intensity


class NoParameters(BaseModel):
    """Fault types whose parameters come from the topology, not from the manifest."""

    model_config = STRICT


class CpuParameters(BaseModel):
    """StressChaos CPU stressor overrides."""

    model_config = STRICT

    workers: int | None = Field(default=None, ge=1, le=8192, description="stress-ng workers.")
    load: int | None = Field(default=None, ge=0, le=100, description="Percent load per worker.")


class MemoryParameters(BaseModel):
    """ConfigFault memory-limit overrides."""

    model_config = STRICT

    limit_percent: int | None = Field(
        default=None,
        ge=1,
        le=99,
        description="The lowered limit as a percentage of the container's memory request.",
    )


class DelayParameters(BaseModel):
    """NetworkChaos delay overrides."""

    model_config = STRICT

    latency: str | None = Field(default=None, pattern=DURATION, description="e.g. '200ms'.")
    jitter: str | None = Field(default=None, pattern=DURATION, description="e.g. '50ms'.")
    correlation: str | None = Field(
        default=None, pattern=r"^(100|[0-9]{1,2})$", description="Percent, as a string."
    )


class HttpErrorParameters(BaseModel):
    """HTTPChaos response-replacement overrides."""

    model_config = STRICT

    code: int | None = Field(default=None, ge=400, le=599, description="Replacement status.")


P = TypeVar("P", bound=BaseModel)


class FaultEntry(BaseModel, Generic[P]):
    """One fault type to inject, at which intensities, with which parameter overrides."""

    model_config = STRICT

    intensities: list[IntensityName] = Field(
        default_factory=lambda: [Intensity.MODERATE, Intensity.SEVERE],
        min_length=1,
        description="Intensities to plan, in order.",
    )
    parameters: dict[IntensityName, P] = Field(
        default_factory=dict, description="Per-intensity overrides of the default parameters."
    )

    @field_validator("intensities")
    @classmethod
    def _unique(cls, value: list[Intensity]) -> list[Intensity]:
        if len(set(value)) != len(value):
            raise ValueError("intensities repeat; list each of moderate, severe at most once")
        return value

    @property
    def fault_type(self) -> FaultType:
        """The fault type this entry configures."""
        return FaultType(getattr(self, "type"))  # noqa: B009 - declared by each subclass

    def parameters_for(self, intensity: Intensity) -> dict[str, JsonValue]:
        """Default parameters for ``intensity`` with this manifest's overrides applied."""
        merged = dict(FAULT_DEFAULTS[self.fault_type][intensity])
        override = self.parameters.get(intensity)
        if override is not None:
            merged.update(override.model_dump(exclude_none=True))
        return merged


class PodFailureFault(FaultEntry[NoParameters]):
    """PodChaos pod-failure on every pod of the service."""

    type: Literal["pod_failure"] = Field(description="Fault type discriminator.")


class CpuSaturationFault(FaultEntry[CpuParameters]):
    """StressChaos CPU stress in the service's main container."""

    type: Literal["cpu_saturation"] = Field(description="Fault type discriminator.")


class MemoryPressureFault(FaultEntry[MemoryParameters]):
    """ConfigFault: the service's main container memory limit set below its working set."""

    type: Literal["memory_pressure"] = Field(description="Fault type discriminator.")


class NetworkDelayFault(FaultEntry[DelayParameters]):
    """NetworkChaos delay on the service's pods."""

    type: Literal["network_delay"] = Field(description="Fault type discriminator.")


class HttpErrorFault(FaultEntry[HttpErrorParameters]):
    """HTTPChaos status replacement on one route of the entry point (a fault of the entry
    point: HTTPChaos cannot reach gRPC services)."""

    type: Literal["http_error"] = Field(description="Fault type discriminator.")


class HttpAbortFault(FaultEntry[NoParameters]):
    """HTTPChaos request abort on one route of the entry point (a fault of the entry point)."""

    type: Literal["http_abort"] = Field(description="Fault type discriminator.")


class DnsFaultFault(FaultEntry[NoParameters]):
    """ConfigFault: the primary caller's address of the service names a host that does not
    resolve (NXDOMAIN)."""

    type: Literal["dns_fault"] = Field(description="Fault type discriminator.")


class DnsRandomFault(FaultEntry[NoParameters]):
    """ConfigFault: the primary caller's address of the service is a wrong IPv4 literal."""

    type: Literal["dns_random"] = Field(description="Fault type discriminator.")


class FeatureFlagFault(FaultEntry[NoParameters]):
    """FlagFault: one of the service's own feature flags turned to its failing variant (the
    intensity picks the variant, ``FeatureFlag.intensities``). The flag is drawn per
    incident among the service's realizable flags unless a ``cells`` entry names it
    (``flag:``)."""

    type: Literal["feature_flag"] = Field(description="Fault type discriminator.")


FaultConfig = Annotated[
    PodFailureFault
    | CpuSaturationFault
    | MemoryPressureFault
    | NetworkDelayFault
    | HttpErrorFault
    | HttpAbortFault
    | DnsFaultFault
    | DnsRandomFault
    | FeatureFlagFault,
    Field(discriminator="type"),
]
