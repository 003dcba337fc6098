"""Planned incidents: what the planner emits and the collector executes."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from r2act.schema.faults import FaultSpec, FaultType, Intensity

INCIDENT_ID_PATTERN = r"^[a-z0-9]+_[a-z0-9-]+_[a-z_]+_(moderate|severe)_r[0-9]{2,}$"
"""Shape of an incident id; ids are safe as file names."""


def incident_id(
    system: str, service: str, fault_type: FaultType, intensity: Intensity, repetition: int
) -> str:
    """The stable id ``<system>_<service>_<fault_type>_<intensity>_r<NN>``."""
    return f"{system}_{service}_{fault_type.value}_{intensity.value}_r{repetition:02d}"


class PhaseDurations(BaseModel):
    """How long each collection phase lasts, in seconds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pre_s: int = Field(default=60, gt=0, description="Baseline window before injection.")
    during_s: int = Field(default=120, gt=0, description="Window while the fault is active.")
    post_s: int = Field(default=60, gt=0, description="Window after removal and recovery.")
    recovery_timeout_s: int = Field(
        default=180, gt=0, description="Longest wait for the system to be healthy after removal."
    )


class PlannedIncident(BaseModel):
    """One incident to collect: a fault on a service, one repetition of a campaign cell."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=INCIDENT_ID_PATTERN, description="Stable incident id.")
    campaign: str = Field(description="Name of the campaign that planned it.")
    system: str = Field(description="System under test, e.g. 'onlineboutique'.")
    service: str = Field(description="Root-cause service.")
    fault: FaultSpec = Field(description="The fault, with resolved Chaos Mesh parameters.")
    repetition: int = Field(ge=1, description="Repetition number within its cell, from 1.")
    phases: PhaseDurations = Field(description="Phase durations.")
    seed: int = Field(description="Per-incident seed derived from the campaign seed and id.")
    pilot: bool = Field(default=False, description="True when the campaign is a pilot run.")
    quota: int | None = Field(
        default=None,
        ge=1,
        description=(
            "Main incidents wanted from its cell and intensity; repetitions beyond it are "
            "spares, admitted only while the cell is short. None: no quota (all admitted)."
        ),
    )
