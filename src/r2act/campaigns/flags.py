"""Feature-flag cells of a manifest: which flags a ``feature_flag`` fault may turn on.

A flag fault is a fault of the service whose code path reads the flag and misbehaves
(``FeatureFlag.service``), and only a realizable flag (``FeatureFlag.realizable``) shows on
what r2act collects. So a ``feature_flag`` fault on a service needs at least one realizable
flag of that service, and a ``cells`` entry that names a flag (``flag:``) must name one of
them. Each error names the field, the problem and the fix, as every manifest error does;
the catalogue they read is the system's own (``System.flags``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from r2act.campaigns.base import ManifestFieldError
from r2act.schema import FaultType, Intensity, Topology
from r2act.systems import System, system_of


class _Cell(Protocol):
    @property
    def service(self) -> str: ...
    @property
    def fault(self) -> FaultType: ...
    @property
    def flag(self) -> str | None: ...


class FlagCampaign(Protocol):
    """What the check reads of a manifest (``campaigns.manifest.Manifest`` is one)."""

    @property
    def topology(self) -> Topology: ...
    @property
    def services(self) -> Sequence[str]: ...
    @property
    def faults(self) -> Sequence[Any]: ...
    @property
    def cells(self) -> Sequence[_Cell]: ...

    def repetitions_for(self, service: str, fault_type: FaultType, intensity: Intensity) -> int:
        """Incidents planned for one cell and intensity."""
        ...


def check_flags(manifest: FlagCampaign) -> None:
    """Raise ManifestFieldError for a flag the manifest cannot inject on its system."""
    system = system_of(manifest.topology)
    planned = [f for f in manifest.faults if f.fault_type == FaultType.FEATURE_FLAG]
    for index, cell in enumerate(manifest.cells):
        if cell.flag is not None:
            _check_named(system, cell.service, cell.fault, cell.flag, ("cells", index, "flag"))
    if not planned:
        return
    fault = planned[0]
    if not system.flags:
        raise ManifestFieldError(
            ("faults", list(manifest.faults).index(fault), "type"),
            f"{system.name} has no feature flags, so feature_flag has nothing to turn on",
            "drop the feature_flag fault, or use a system with flags (r2act systems list)",
        )
    for index, service in enumerate(manifest.services):
        wanted = any(
            manifest.repetitions_for(service, FaultType.FEATURE_FLAG, i) for i in fault.intensities
        )
        if wanted and not system.realizable_flags(service):
            raise ManifestFieldError(
                ("services", index),
                f"no realizable feature flag of {system.name} is a fault of {service!r}",
                "set repetitions: 0 for its feature_flag cell, or plan feature_flag on one "
                f"of: {', '.join(system.flag_services())}",
            )


def _check_named(
    system: System, service: str, fault: FaultType, key: str, loc: tuple[str | int, ...]
) -> None:
    if fault != FaultType.FEATURE_FLAG:
        raise ManifestFieldError(
            loc,
            f"flag {key!r} on a {fault.value} cell: only a feature_flag cell turns a flag on",
            "remove flag, or set fault: feature_flag",
        )
    found = system.flags.get(key)
    own = ", ".join(f.key for f in system.realizable_flags(service)) or "none"
    if found is None:
        raise ManifestFieldError(
            loc,
            f"{system.name} {system.version} has no flag {key!r}",
            f"use one of {service}'s realizable flags: {own}",
        )
    if not found.realizable:
        raise ManifestFieldError(
            loc,
            f"flag {key!r} is not realizable: {gist(found.verdict)}",
            f"name a realizable flag of {service} ({own}) or omit flag",
        )
    if found.service != service:
        readers = ", ".join(found.readers)
        raise ManifestFieldError(
            loc,
            f"flag {key!r} is a fault of {found.service} (read by {readers}), not of {service!r}",
            f"put it on a {found.service} cell, or name a flag of {service} ({own})",
        )


VERDICT_CHARS = 70
"""How much of a flag's verdict an error quotes: a manifest error is one line of at most
``loader.MAX_MESSAGE`` characters, and the fix must survive after it."""


def gist(text: str, limit: int = VERDICT_CHARS) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters (an ellipsis shows a
    cut); the whole verdict is in ``docs/faults.md``'s per-flag table."""
    if len(text) <= limit:
        return text
    return text[: limit - 3].rsplit(" ", 1)[0] + "..."
