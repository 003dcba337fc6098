"""Vocabulary the manifest models share: strictness, name patterns, located errors.

Kept apart so the fault models and the manifest model use the same rules, and so the
error wording can be imported without importing the models.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

from pydantic import ConfigDict, Field, Strict

from r2act.errors import ManifestError
from r2act.schema import FaultType, Intensity, NoiseLevel

DNS_LABEL = r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
"""A DNS-1123 label: what Kubernetes accepts as a namespace or object-name part."""

IntensityName = Annotated[Intensity, Strict(False)]
FaultTypeName = Annotated[FaultType, Strict(False)]
NoiseLevelName = Annotated[NoiseLevel, Strict(False)]
DnsName = Annotated[str, Field(min_length=1, max_length=63, pattern=DNS_LABEL)]
MEMORY_SIZE = r"^[1-9][0-9]*(KB|MB|GB|KiB|MiB|GiB)$"
DURATION = r"^[0-9]+(\.[0-9]+)?(ns|us|ms|s|m|h)$"
STRICT = ConfigDict(extra="forbid", frozen=True, strict=True)


class ManifestFieldError(ManifestError):
    """A rule that spans several fields failed; ``loc`` points at the offending value.

    Raised from model validators instead of ``ValueError`` so that the location survives
    (pydantic would report a model-level error at the manifest's root)."""

    def __init__(self, loc: tuple[str | int, ...], problem: str, fix: str) -> None:
        self.loc, self.problem, self.fix = loc, problem, fix
        super().__init__(f"{format_loc(loc)}: {problem} ({fix})")


def format_loc(loc: Sequence[str | int]) -> str:
    """``('faults', 1, 'type')`` -> ``faults[1].type``, the way error messages name fields."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text or "(manifest)"
