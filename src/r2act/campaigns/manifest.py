"""The campaign manifest: what to inject, where, how often and how to observe it.

Every model forbids unknown keys and coerces nothing it does not have to (``strict``): a
typo or a quoted number in a manifest that drives fault injection should stop the run
before it starts, not silently fall back to a default. Enum-valued fields accept their
plain string names, which is how a YAML file spells them.
"""

from __future__ import annotations

import math
from string import Template
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from r2act.campaigns.base import (
    STRICT,
    DnsName,
    FaultTypeName,
    IntensityName,
    ManifestFieldError,
    NoiseLevelName,
)
from r2act.campaigns.defaults import DEFAULT_QUERIES
from r2act.campaigns.faults import FaultConfig, FaultEntry
from r2act.campaigns.flags import check_flags
from r2act.campaigns.lane_spec import MAX_LANES, KubernetesLane, duplicate_lane
from r2act.schema import FaultType, Intensity, NoiseLevel, PhaseDurations, Topology
from r2act.systems import DEFAULT_SYSTEM, INSTALLED, SYSTEMS

MAX_PHASE_S = 3600
"""Longest phase (pre, during, post) and recovery timeout: an hour is past any recovery, and
the simulator keeps only a few hours of telemetry."""
MAX_USERS = 500
"""Most simulated users: traffic and log volume grow with them (50x the default)."""
MAX_REPETITIONS = 1000
"""Most incidents per cell and intensity (the paper needs at most a handful)."""
MAX_SEED = 2**63 - 1
SIM_NAME = r"^[a-z0-9]([-a-z0-9_.]{0,61}[a-z0-9])?$"
"""A simulated cluster's name names a directory under the run: no '/', no '..', no '.x'."""


class GlitchRates(BaseModel):
    """How often the simulated cluster misbehaves, so the quality gate has real work."""

    model_config = STRICT

    injection_failure: float = Field(default=0.03, ge=0, le=1, description="Chaos never applies.")
    metric_gap: float = Field(default=0.03, ge=0, le=1, description="A metrics window is empty.")
    slow_recovery: float = Field(
        default=0.02, ge=0, le=1, description="Recovery exceeds the verify timeout."
    )
    transient_api_error: float = Field(
        default=0.0, ge=0, le=1, description="A cluster call fails once, retryably."
    )
    fail_incidents: list[str] = Field(
        default_factory=list, description="Incident ids whose every cluster call fails (tests)."
    )


class SimTarget(BaseModel):
    """The built-in simulated cluster: no Kubernetes needed, deterministic for a seed."""

    model_config = STRICT

    kind: Literal["sim"] = Field(description="Target discriminator.")
    seed: int = Field(
        default=0, ge=0, le=MAX_SEED, description="Seed of the simulation's randomness."
    )
    name: str = Field(
        default="default",
        pattern=SIM_NAME,
        description="Simulated cluster name: lowercase letters, digits, '-', '_', '.' (no path).",
    )
    glitches: GlitchRates = Field(default_factory=GlitchRates, description="Glitch rates.")
    lanes: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LANES,
        description="Simulated lanes collecting concurrently (campaigns.lanes); omitted: one.",
    )


class KubernetesTarget(BaseModel):
    """A real cluster; r2act acts only inside ``namespace`` and only if it is opted in."""

    model_config = STRICT

    kind: Literal["kubernetes"] = Field(description="Target discriminator.")
    context: str = Field(min_length=1, description="kubeconfig context to use.")
    namespace: DnsName = Field(description="Namespace running the system under test.")
    lanes: list[KubernetesLane] = Field(
        default_factory=list,
        max_length=MAX_LANES - 1,
        description="More lanes besides context/namespace, each opted in (campaigns.lanes).",
    )
    allow_shared_nodes: bool = Field(
        default=False,
        description="Let lanes on one cluster share nodes (the quality gate flags overlaps).",
    )

    @model_validator(mode="after")
    def _distinct_lanes(self) -> KubernetesTarget:
        if (duplicate := duplicate_lane(self.context, self.namespace, self.lanes)) is not None:
            raise ManifestFieldError(
                ("target", "lanes", duplicate[0]),
                f"lane {duplicate[1]} is listed twice",
                "give every lane its own namespace",
            )
        return self


Target = Annotated[SimTarget | KubernetesTarget, Field(discriminator="kind")]


class CellRepetitions(BaseModel):
    """Repetitions of one service x fault cell (optionally one intensity), overriding the global."""

    model_config = STRICT

    service: str = Field(description="Root-cause service of the cell.")
    fault: FaultTypeName = Field(description="Fault type of the cell.")
    intensity: IntensityName | None = Field(
        default=None, description="Only this intensity; omitted means every intensity."
    )
    repetitions: int = Field(
        ge=0, le=MAX_REPETITIONS, description="Incidents per intensity; 0 leaves it empty."
    )
    flag: str | None = Field(
        default=None,
        min_length=1,
        description=(
            "For a feature_flag cell: the flag every incident turns on (a realizable flag "
            "of the service); omitted: drawn per incident among the service's flags."
        ),
    )


class LoadProfile(BaseModel):
    """Load generator settings (Locust users and spawn rate)."""

    model_config = STRICT

    users: int = Field(
        ge=1,
        le=MAX_USERS,
        description=(
            "Concurrent users of the load generator; omitted: the count the system's deploy "
            "files ship (`r2act systems list`), which the simulator then runs."
        ),
    )
    spawn_rate: float = Field(
        default=1.0, gt=0, le=1000, allow_inf_nan=False, description="Users started per second."
    )


class MetricsConfig(BaseModel):
    """Prometheus queries collected in every phase, by name."""

    model_config = STRICT

    step_s: float = Field(
        default=15.0, ge=1, le=MAX_PHASE_S, allow_inf_nan=False, description="Query resolution, s."
    )
    queries: dict[str, str] = Field(
        default_factory=lambda: dict(DEFAULT_QUERIES),
        min_length=1,
        description="PromQL by name; '$namespace' is replaced with the campaign's namespace.",
    )


class HealthConfig(BaseModel):
    """How the entry point's health is probed to decide that the system recovered."""

    model_config = STRICT

    path: str = Field(default="/_healthz", pattern=r"^/", description="HTTP path to probe.")
    interval_s: float = Field(
        default=5.0, ge=0.1, le=600, allow_inf_nan=False, description="Seconds between probes."
    )
    consecutive: int = Field(default=3, ge=1, le=100, description="Healthy probes in a row needed.")
    error_rate_threshold: float = Field(
        default=0.05, ge=0, le=1, description="Highest request error rate that counts healthy."
    )


class TracesConfig(BaseModel):
    """Spans collected in every phase (issue 24); a manifest without this section collects none.

    Whole traces are kept at ``sample`` (``schema.traces.keeps_trace``), which bounds the
    volume; provenance records the rate so a reader can scale counts back.
    """

    model_config = STRICT

    sample: float = Field(
        default=0.1,
        gt=0,
        le=1,
        allow_inf_nan=False,
        description="Share of whole traces kept, decided from the trace id (0 < sample <= 1).",
    )
    store: str | None = Field(
        default=None,
        pattern=r"^https?://",
        description=(
            "A real cluster's trace store query URL (Jaeger's HTTP API); omitted: the "
            "system's own trace store reached through the API server's service proxy. "
            "The simulator ignores it."
        ),
    )


class Phases(PhaseDurations):
    """Phase durations as a manifest writes them: whole seconds, no quoted numbers, bounded."""

    model_config = STRICT

    pre_s: int = Field(default=60, gt=0, le=MAX_PHASE_S, description="Baseline window.")
    during_s: int = Field(default=120, gt=0, le=MAX_PHASE_S, description="Fault window.")
    post_s: int = Field(default=60, gt=0, le=MAX_PHASE_S, description="Window after recovery.")
    recovery_timeout_s: int = Field(
        default=180, gt=0, le=MAX_PHASE_S, description="Longest wait for health after removal."
    )


# --- the manifest ---------------------------------------------------------------------------


class Manifest(BaseModel):
    """A campaign: services x faults x intensities x repetitions on one explicit target."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: DnsName = Field(description="Campaign name; names the run directory.")
    system: str = Field(
        default=DEFAULT_SYSTEM,
        description=(
            "System under test, one of `r2act systems list` (r2act.systems.INSTALLED); "
            "omitted: the default system, as in manifests written before systems were plugins."
        ),
    )
    target: Target = Field(description="Where to run: the simulator or a named cluster.")
    services: list[str] = Field(min_length=1, description="Root-cause services, in plan order.")
    faults: list[FaultConfig] = Field(min_length=1, description="Fault types, in plan order.")
    repetitions: int = Field(
        default=1, ge=1, le=MAX_REPETITIONS, description="Incidents per cell and intensity."
    )
    spares: int = Field(
        default=0,
        ge=0,
        description=(
            "Spare repetitions planned per cell and intensity beyond its quota; the audit "
            "admits only the first quota clean ones, the collector stops a full cell."
        ),
    )
    spare_ratio: float = Field(
        default=0.0,
        ge=0,
        le=10,
        description="At least this share of the quota is planned as spares (rounded up).",
    )
    cells: list[CellRepetitions] = Field(
        default_factory=list, description="Per-cell repetition overrides."
    )
    phases: Phases = Field(default_factory=Phases, description="Phase lengths in seconds.")
    load: LoadProfile = Field(
        description="Load profile (omitted: the system's shipped load generator's users)."
    )
    metrics: MetricsConfig = Field(default_factory=MetricsConfig, description="Metric queries.")
    health: HealthConfig = Field(default_factory=HealthConfig, description="Health probe.")
    traces: TracesConfig | None = Field(
        default=None, description="Span collection (omitted: no traces are collected)."
    )
    noise: NoiseLevelName = Field(
        default=NoiseLevel.REALISTIC,
        description=(
            "Background the simulated cluster shows besides the fault: none (a clean room, "
            "for regression tests), realistic (default) or heavy; a real cluster shows its own "
            "(only realistic is accepted there)."
        ),
    )
    pilot: bool = Field(default=False, description="Pilot run: never enters the main dataset.")
    seed: int = Field(
        default=0,
        ge=0,
        le=MAX_SEED,
        description="Campaign seed (per-incident seeds derive from it).",
    )
    description: str = Field(default="", description="Free text for humans.")

    @model_validator(mode="before")
    @classmethod
    def _deployed_users(cls, data: Any) -> Any:
        """A manifest that names no user count records the one the system's deploy files
        ship (``System.users``): the load generator really runs that many, so the
        simulator and the provenance must say so too."""
        if not isinstance(data, dict):
            return data
        load = data.get("load", {})
        system = data.get("system", DEFAULT_SYSTEM)
        if isinstance(load, dict) and "users" not in load and system in INSTALLED:
            return {**data, "load": {**load, "users": INSTALLED[system].users}}
        return data

    @field_validator("system")
    @classmethod
    def _known_system(cls, value: str) -> str:
        if value not in SYSTEMS:
            raise ValueError(f"unknown system {value!r} (use one of: {', '.join(SYSTEMS)})")
        return value

    @model_validator(mode="after")
    def _cross_checks(self) -> Manifest:
        _check_services(self.services, self.topology)
        _check_faults(self.faults)
        _check_cells(self)
        _check_reachable(self)
        check_flags(self)
        if isinstance(self.target, KubernetesTarget) and self.noise != NoiseLevel.REALISTIC:
            raise ManifestFieldError(
                ("noise",),
                f"noise {self.noise.value!r} needs the simulated target: a real cluster shows "
                "its own background",
                "omit noise (or set it to realistic) for a kubernetes target",
            )
        template = {"namespace": self.namespace}
        queries = {
            k: Template(q).safe_substitute(template) for k, q in self.metrics.queries.items()
        }
        self.metrics = self.metrics.model_copy(update={"queries": queries})
        return self

    @property
    def namespace(self) -> str:
        """Namespace of the system under test ('default' on the simulator)."""
        return self.target.namespace if isinstance(self.target, KubernetesTarget) else "default"

    @property
    def topology(self) -> Topology:
        """Deployments and call graph of the system under test."""
        return SYSTEMS[self.system]

    def fault(self, fault_type: FaultType) -> FaultEntry[Any]:
        """The fault entry for ``fault_type``; KeyError when the manifest has none."""
        for entry in self.faults:
            if entry.fault_type == fault_type:
                return entry
        raise KeyError(fault_type)

    def flag_for(self, service: str, intensity: Intensity) -> str | None:
        """The flag a ``feature_flag`` cell names for ``service`` at ``intensity`` (a cell
        for that intensity wins over one for every intensity); None: the planner draws."""
        named: str | None = None
        for cell in self.cells:
            if cell.service != service or cell.fault != FaultType.FEATURE_FLAG:
                continue
            if cell.intensity == intensity and cell.flag is not None:
                return cell.flag
            if cell.intensity is None and cell.flag is not None:
                named = cell.flag
        return named

    def spares_for(self, quota: int) -> int:
        """Spare repetitions for a cell with ``quota``: ``spares``, or more by ``spare_ratio``."""
        return 0 if quota == 0 else max(self.spares, math.ceil(self.spare_ratio * quota))

    def repetitions_for(self, service: str, fault_type: FaultType, intensity: Intensity) -> int:
        """Incidents planned for one service x fault x intensity (cell overrides win)."""
        count = self.repetitions
        for cell in self.cells:
            if cell.service == service and cell.fault == fault_type:
                if cell.intensity == intensity:
                    return cell.repetitions
                if cell.intensity is None:
                    count = cell.repetitions
        return count


def _check_services(services: list[str], topology: Topology) -> None:
    seen: set[str] = set()
    for index, service in enumerate(services):
        if service in seen:
            raise ManifestFieldError(
                ("services", index), f"{service!r} is listed twice", "list each service once"
            )
        seen.add(service)
        if service == topology.load_generator:
            raise ManifestFieldError(
                ("services", index),
                f"{service!r} is the load generator, not a service under test",
                "remove it",
            )
        if service not in topology.names:
            candidates = [n for n in topology.names if n != topology.load_generator]
            raise ManifestFieldError(
                ("services", index),
                f"unknown service {service!r} in {topology.system}",
                f"use one of: {', '.join(candidates)}",
            )


def _check_faults(faults: list[Any]) -> None:
    seen: set[FaultType] = set()
    for index, fault in enumerate(faults):
        if fault.fault_type in seen:
            raise ManifestFieldError(
                ("faults", index, "type"),
                f"fault type {fault.fault_type.value!r} is listed twice",
                "merge the two entries; list intensities on one",
            )
        seen.add(fault.fault_type)


def _check_cells(manifest: Manifest) -> None:
    seen: set[tuple[str, FaultType, Intensity | None]] = set()
    for index, cell in enumerate(manifest.cells):
        loc: tuple[str | int, ...] = ("cells", index)
        if cell.service not in manifest.services:
            raise ManifestFieldError(
                (*loc, "service"),
                f"{cell.service!r} is not in services",
                "add it to services or fix the name",
            )
        try:
            fault = manifest.fault(cell.fault)
        except KeyError:
            raise ManifestFieldError(
                (*loc, "fault"), f"{cell.fault.value!r} is not in faults", "add it to faults"
            ) from None
        if cell.intensity is not None and cell.intensity not in fault.intensities:
            raise ManifestFieldError(
                (*loc, "intensity"),
                f"{cell.fault.value} is not planned at {cell.intensity.value}",
                f"use one of: {', '.join(i.value for i in fault.intensities)}",
            )
        key = (cell.service, cell.fault, cell.intensity)
        if key in seen:
            raise ManifestFieldError(loc, "this cell is listed twice", "keep one entry")
        seen.add(key)


def _check_reachable(manifest: Manifest) -> None:
    """Every planned cell must be injectable on the deployment (``docs/faults.md``).

    HTTPChaos reaches only the entry point's HTTP/1 routes, so an HTTP fault is a fault of
    the entry point; a DNS fault rewrites the service's address in a caller holding it (the
    planner draws one, ``Topology.address_holders``), so the service needs one."""
    topology = manifest.topology
    for index, service in enumerate(manifest.services):
        for fault in manifest.faults:
            planned = any(
                manifest.repetitions_for(service, fault.fault_type, i) for i in fault.intensities
            )
            if not planned:
                continue
            name = fault.fault_type.value
            if name.startswith("http_") and service != topology.entrypoint:
                raise ManifestFieldError(
                    ("services", index),
                    f"{name} is a rule on a {topology.entrypoint} route (HTTPChaos cannot "
                    f"reach {service!r}'s gRPC server), so it is a {topology.entrypoint} fault",
                    f"plan {name} on {topology.entrypoint}, or set repetitions: 0 for this cell",
                )
            if name.startswith("dns_") and not topology.address_holders(service):
                raise ManifestFieldError(
                    ("services", index),
                    f"no deployment under test holds an address of {service!r}, so {name} "
                    "has no caller to break",
                    f"set repetitions: 0 for this cell in cells, or drop {name}",
                )
