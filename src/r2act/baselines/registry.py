"""The baselines by name, in the order ``r2act baseline --list`` shows them."""

from __future__ import annotations

from r2act.baselines.base import Baseline
from r2act.baselines.floors import MAJORITY, RANDOM
from r2act.baselines.gold import GOLD_MAPPER
from r2act.baselines.keyword import KEYWORD
from r2act.baselines.nb import NB
from r2act.baselines.rule import RULE
from r2act.baselines.tracerank import TRACERANK
from r2act.errors import DataError

BASELINES: dict[str, Baseline] = {
    b.name: b for b in (RANDOM, MAJORITY, KEYWORD, RULE, NB, TRACERANK, GOLD_MAPPER)
}
"""Every registered baseline by name."""


def get_baseline(name: str) -> Baseline:
    """The baseline called ``name``; DataError listing the known names otherwise."""
    try:
        return BASELINES[name]
    except KeyError:
        raise DataError(
            f"baseline {name!r}: unknown (use one of {', '.join(BASELINES)}; see --list)"
        ) from None
