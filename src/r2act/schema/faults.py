"""Fault vocabulary: the fault types, two intensities and a fault's full specification."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, JsonValue


class FaultType(StrEnum):
    """Root-cause fault categories, one injection mechanism each (``CHAOS_KIND``)."""

    POD_FAILURE = "pod_failure"
    CPU_SATURATION = "cpu_saturation"
    MEMORY_PRESSURE = "memory_pressure"
    NETWORK_DELAY = "network_delay"
    HTTP_ERROR = "http_error"
    HTTP_ABORT = "http_abort"
    DNS_FAULT = "dns_fault"
    DNS_RANDOM = "dns_random"
    FEATURE_FLAG = "feature_flag"
    """An application's own fault: a flag in its flag service turned to a failing variant
    (``systems.flags``). Declared last so the paper's eight keep their order (seeded draws
    and tie-breaks read it); only a system with flags (``System.flags``) realises it."""


class Intensity(StrEnum):
    """How hard a fault hits; it scales the injector's parameters."""

    MODERATE = "moderate"
    SEVERE = "severe"


CONFIG_FAULT_KIND = "ConfigFault"
"""r2act's own injector: a change to a Deployment's pod template (``r2act.io/v1alpha1``)."""
CONFIG_FAULT_API_VERSION = "r2act.io/v1alpha1"
"""apiVersion of a rendered ConfigFault object (never sent to an API server as such)."""
CONFIG_FAULT_ANNOTATION = "r2act.io/config-fault"
"""Deployment annotation holding the originals a ConfigFault replaced, its name and run."""
CONFIG_FAULT_RUN_ANNOTATION = "r2act.io/run-id"
"""Object annotation that may carry the run id when the run label is absent."""

FLAG_FAULT_KIND = "FlagFault"
"""r2act's feature-flag injector: a flag's ``defaultVariant`` in a flagd ConfigMap, taken
live by a rollout restart of the flag-serving Deployment (``r2act.io/v1alpha1``)."""
FLAG_FAULT_ANNOTATION = "r2act.io/flag-fault"
"""ConfigMap annotation holding the flags a FlagFault changed (each with its original
``defaultVariant``), its name, run and incident; the same key on the flag-serving
Deployment points to that ConfigMap, so leftovers are found by listing Deployments."""
FLAG_FAULT_INJECTION_PATH = "configmap+restart"
"""How a FlagFault reaches flagd (edit the ConfigMap, then restart flagd), recorded in the
annotation so provenance can say which path was used."""

CHAOS_KIND: dict[FaultType, str] = {
    FaultType.POD_FAILURE: "PodChaos",
    FaultType.CPU_SATURATION: "StressChaos",
    FaultType.MEMORY_PRESSURE: CONFIG_FAULT_KIND,
    FaultType.NETWORK_DELAY: "NetworkChaos",
    FaultType.HTTP_ERROR: "HTTPChaos",
    FaultType.HTTP_ABORT: "HTTPChaos",
    FaultType.DNS_FAULT: CONFIG_FAULT_KIND,
    FaultType.DNS_RANDOM: CONFIG_FAULT_KIND,
    FaultType.FEATURE_FLAG: FLAG_FAULT_KIND,
}
"""The object kind that injects each fault type on the shipped deployment.

DNS faults are a wrong ``<S>_ADDR`` in the primary caller's environment because Chaos
Mesh's DNSChaos cannot inject Online Boutique's shell-less, read-only callers; memory
pressure is a lowered memory limit because a StressChaos memory stressor ends in one group
OOM kill on cgroup v2 and then leaves a clean container (``docs/faults.md``). A feature
flag is a FlagFault: the flag's ``defaultVariant`` in the flag service's configuration."""


class FaultSpec(BaseModel):
    """One fault as planned: what, how hard, where, for how long, with which parameters."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    type: FaultType = Field(description="Fault category; it is the root-cause type label.")
    intensity: Intensity = Field(description="Intensity level that chose the parameters.")
    service: str = Field(description="Root-cause service: the deployment the fault is about.")
    duration_s: int = Field(gt=0, description="How long the injected object keeps the fault.")
    parameters: dict[str, JsonValue] = Field(
        default_factory=dict,
        description=(
            "Kind-specific injector parameters, resolved from defaults and the manifest: "
            "e.g. latency/jitter (delay), workers/load (cpu), memory_limit (memory), "
            "path/method/code (http), caller/variable/value (dns), flag/variant (feature flag)."
        ),
    )

    @property
    def chaos_kind(self) -> str:
        """The kind of object that injects this fault (a Chaos Mesh kind or ConfigFault)."""
        return CHAOS_KIND[self.type]


class NoiseLevel(StrEnum):
    """How much of a real cluster's background the simulated cluster shows (issue 22).

    The background is what a healthy cluster prints and records with no fault at all: the
    deadline warnings of a tolerated slow call, probe timeouts from the latency tail, the
    kubelet's events on every pod start, load-generator failures from connection churn,
    CPU throttling under bursty load, garbage-collector sawtooths, metric noise. A method
    that reads an incident must tell the fault's mark from it."""

    NONE = "none"
    """No background: only what the fault and the load cause (regression tests)."""
    REALISTIC = "realistic"
    """Every background mechanism at the rates its documented parameters give (default)."""
    HEAVY = "heavy"
    """The same mechanisms at higher rates: a noisier cluster, for robustness tables."""
