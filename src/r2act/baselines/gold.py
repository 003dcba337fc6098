"""Gold RCA + mapper: the diagnostic control of the paper (section V).

It knows the true root-cause service and fault type and carries them through the mapper
under the policy each record was labelled with. Its RCA is right by construction, so its
recovery validity measures how far a perfect coarse diagnosis gets under that policy: under
``r2act-mechanics/3`` the caller holding a broken DNS address is an incident detail the pair
does not tell (the mapper repairs the primary caller), under ``paper-table-ii/1`` the HTTP
route is one the mapper can only guess.
"""

from __future__ import annotations

from collections.abc import Iterator

from r2act.baselines.base import Baseline, RunContext, mapped, policy_of
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
            policy=policy_of(record),
        )


GOLD_MAPPER = Baseline(
    "gold-mapper",
    "Gold root cause through the policy's mapper (diagnostic control, not an upper bound).",
    _gold,
    observations=False,
)
