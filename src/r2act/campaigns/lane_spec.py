"""What a manifest says about lanes: the extra lanes of a Kubernetes target and their limits.

The manifest's target models use these; turning a target into one single-lane target per
lane is ``campaigns.lanes`` (which reads the manifest's targets, so it sits above them).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, Field

from r2act.campaigns.base import STRICT, DnsName

MAX_LANES = 64
"""More lanes than any cluster r2act was tried on; a bigger number is a typo."""


class KubernetesLane(BaseModel):
    """One more lane of a Kubernetes target: a namespace, on the target's context by default."""

    model_config = STRICT

    namespace: DnsName = Field(description="Namespace running this lane's system under test.")
    context: str | None = Field(
        default=None, min_length=1, description="kubeconfig context; default: the target's."
    )


def duplicate_lane(
    context: str, namespace: str, lanes: Sequence[KubernetesLane]
) -> tuple[int, str] | None:
    """The first extra lane (index into ``lanes``) that repeats a context and namespace,
    lane 1 being the target's own ``context`` and ``namespace``."""
    seen = {(context, namespace)}
    for index, extra in enumerate(lanes):
        key = (extra.context or context, extra.namespace)
        if key in seen:
            return index, f"{key[0]}/{key[1]}"
        seen.add(key)
    return None
