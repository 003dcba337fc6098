"""The recovery-semantics policy: which operation recovers which fault, and with which bounds.

Recovery labels are a policy decision, not a fact of nature, so the policy is a named,
versioned object and every label records ``str(policy)`` (``"r2act-default/1"``). Changing
any number here changes labels; bump ``version`` when you do.

The default follows the paper's Table II. The one incident-specific rule is memory
pressure: the baseline working set is taken to be the container's memory request, so a
stress of ``size`` bytes overflows the limit only when ``request + size > limit``. Then the
limit must grow to at least ``request + size + margin``; otherwise the stressed container
still fits and a restart (which also drops the stressor) is the recovery.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from pydantic import JsonValue

from r2act.errors import DataError
from r2act.schema import DeploymentSpec, FaultSpec, FaultType, Operation, memory_bytes

_STRESS_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
}
_STRESS_SIZE = re.compile(r"^([0-9]+)\s*([A-Za-z]*)$")

_TABLE_II: Mapping[FaultType, Operation] = MappingProxyType(
    {
        FaultType.POD_FAILURE: Operation.RESTART_SERVICE,
        FaultType.NETWORK_DELAY: Operation.RESTART_SERVICE,
        FaultType.CPU_SATURATION: Operation.SCALE_OUT,
        FaultType.MEMORY_PRESSURE: Operation.INCREASE_MEMORY_LIMIT,
        FaultType.HTTP_ERROR: Operation.ROLLBACK_CONFIG,
        FaultType.HTTP_ABORT: Operation.ROLLBACK_CONFIG,
        FaultType.DNS_FAULT: Operation.REPAIR_DEPENDENCY,
        FaultType.DNS_RANDOM: Operation.REPAIR_DEPENDENCY,
    }
)


def stress_bytes(parameters: Mapping[str, JsonValue]) -> int:
    """Bytes a memory stressor allocates, from ``parameters["size"]`` (``"192MB"``; MB = 10^6).

    Chaos Mesh reads sizes with decimal units (``MB``) and also accepts binary ones
    (``MiB``); both are understood. Percentages are not, because the label needs bytes."""
    size = parameters.get("size")
    match = _STRESS_SIZE.fullmatch(size.strip()) if isinstance(size, str) else None
    if match is None or match.group(2) not in _STRESS_UNITS:
        raise DataError(
            f"memory_pressure parameter size={size!r} is not a byte size "
            "(write an integer with B, KB, MB, GB, KiB, MiB or GiB, e.g. '192MB')"
        )
    return int(match.group(1)) * _STRESS_UNITS[match.group(2)]


@dataclass(frozen=True)
class MemoryBounds:
    """The admissible new limits for a memory incident, in bytes (inclusive)."""

    lowest: int
    highest: int


@dataclass(frozen=True)
class RecoveryPolicy:
    """A named, versioned mapping from a fault (and the deployment state) to its recovery."""

    name: str
    version: int
    operations: Mapping[FaultType, Operation] = field(default_factory=lambda: _TABLE_II)
    """Table II: the recovering operation per fault type (memory: when the stress overflows)."""
    fits_headroom_operation: Operation = Operation.RESTART_SERVICE
    """Memory pressure whose stress fits under the limit is recovered by this instead."""
    max_replicas: int = 10
    """Largest replica count any scale_out may request."""
    max_memory_limit: str = "2Gi"
    """Largest memory limit any plan may set."""
    memory_margin: str = "16Mi"
    """Slack above request + stress that a raised limit must leave."""
    memory_ceiling_factor: int = 4
    """A raised limit beyond this multiple of the current one is over-provisioning."""

    def __str__(self) -> str:
        return f"{self.name}/{self.version}"

    def __hash__(self) -> int:
        return hash((self.name, self.version))

    def operation_for(self, fault: FaultSpec, deployment: DeploymentSpec) -> Operation:
        """The operation that recovers ``fault`` on ``deployment`` under this policy."""
        if fault.type == FaultType.MEMORY_PRESSURE and not self.stress_overflows(fault, deployment):
            return self.fits_headroom_operation
        return self.operations[fault.type]

    def stress_overflows(self, fault: FaultSpec, deployment: DeploymentSpec) -> bool:
        """True when baseline working set (the request) plus the stress exceeds the limit."""
        main = deployment.main
        demand = memory_bytes(main.memory_request) + stress_bytes(fault.parameters)
        return demand > memory_bytes(main.memory_limit)

    def memory_bounds(self, fault: FaultSpec, deployment: DeploymentSpec) -> MemoryBounds:
        """Limits that hold request + stress + margin without gross over-provisioning.

        Raises DataError when no admissible limit exists (the stress exceeds even the
        ceiling), because such an incident cannot carry a valid increase label."""
        main = deployment.main
        lowest = (
            memory_bytes(main.memory_request)
            + stress_bytes(fault.parameters)
            + memory_bytes(self.memory_margin)
        )
        highest = min(
            self.memory_ceiling_factor * memory_bytes(main.memory_limit),
            memory_bytes(self.max_memory_limit),
        )
        if lowest > highest:
            raise DataError(
                f"memory_pressure on {deployment.name}: a limit of {lowest} bytes is needed "
                f"but policy {self} allows at most {highest} (lower the stress size)"
            )
        return MemoryBounds(lowest, highest)


DEFAULT_POLICY = RecoveryPolicy(name="r2act-default", version=1)
"""The paper's Table II policy, ``"r2act-default/1"``."""
