"""Gold RCA + mapper: the diagnostic control of the paper (section V).

It knows the true root-cause service and fault type and carries them through the fixed
mapper. Its RCA is right by construction, so its recovery validity measures how far a
perfect coarse diagnosis gets under the fixed policy, not an upper bound on recovery:
HTTP routes, DNS names and memory headroom are incident details the mapper cannot know.
"""

from __future__ import annotations

from collections.abc import Iterator

from r2act.baselines.base import Baseline, RunContext, mapped
from r2act.schema import Prediction


def _gold(ctx: RunContext) -> Iterator[Prediction]:
    reader = ctx.reader
    for record in reader.records:
        yield mapped(
            record.incident_id,
            record.action_space,
            reader.topology(record),
            record.labels.service,
            record.labels.fault_type,
            method=ctx.method,
            evidence={"control": "gold rca"},
        )


GOLD_MAPPER = Baseline(
    "gold-mapper",
    "Gold root cause through the fixed mapper (diagnostic control, not an upper bound).",
    _gold,
    observations=False,
)
