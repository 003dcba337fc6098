"""Keyword matching: log keywords name the fault type, the loudest service is the culprit.

Deliberately naive, as in the paper's Keyword baseline. Each log line of the during window
votes for the first keyword group it matches (specific groups first: "OOMKilled" before
"unavailable"), votes are turned into a per-second rise over the pre window, and the group
with the largest rise is the fault type. The service is the one whose error lines rose
most. Because symptoms show at callers (the entry point reports every backend's failure),
this often blames a caller rather than the root cause, which is the point of the floor.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np
import pandas as pd

from r2act.baselines.base import Baseline, RunContext, mapped, policy_of
from r2act.baselines.signals import contains, error_rate_increase, span_s, window
from r2act.schema import FaultType, Prediction

KEYWORDS: tuple[tuple[FaultType, str], ...] = (
    (FaultType.MEMORY_PRESSURE, r"oomkill|out of memory|\bmemory\b"),
    (
        FaultType.DNS_FAULT,
        r"no such host|\blookup\b|name resol|failed to resolve|zero addresses|dns",
    ),
    (FaultType.HTTP_ABORT, r"connection reset|abort|canceled|cancelled|remotedisconnected"),
    (FaultType.NETWORK_DELAY, r"deadline ?exceeded|deadline_exceeded|timeout|timed out"),
    (FaultType.CPU_SATURATION, r"throttl|\bcpu\b"),
    (FaultType.HTTP_ERROR, r"\b50[0-4]\b"),
    (FaultType.POD_FAILURE, r"unavailable|refused|crashloop|back-off"),
)
"""Fault type -> keywords, most specific first; a line votes for its first match."""

_ANY = "|".join(pattern for _, pattern in KEYWORDS)
DEFAULT_FAULT = FaultType.POD_FAILURE
"""Answer when no keyword rose: the commonest-sense guess, 'it is down'."""


def keyword_votes(lines: pd.Series) -> Counter[FaultType]:
    """How many lines vote for each fault type (a line votes for its first match)."""
    votes: Counter[FaultType] = Counter()
    lines = lines[contains(lines, _ANY)]  # one pass over all; the groups see few lines
    undecided = np.ones(len(lines), dtype=bool)
    for fault, pattern in KEYWORDS:
        hit = contains(lines, pattern) & undecided
        votes[fault] = int(hit.sum())
        undecided &= ~hit
    return votes


def fault_by_keywords(logs: pd.DataFrame) -> tuple[FaultType, dict[str, float]]:
    """The fault type whose keywords rose most (per second, during over pre)."""
    during = keyword_votes(window(logs, "during")["line"])
    before = keyword_votes(window(logs, "pre")["line"])
    d_s, p_s = span_s(logs, "during"), span_s(logs, "pre")
    rise = {f.value: during[f] / d_s - before[f] / p_s for f, _ in KEYWORDS}
    best = max(KEYWORDS, key=lambda item: rise[item[0].value])[0]
    return (best if rise[best.value] > 0 else DEFAULT_FAULT), rise


def loudest_service(logs: pd.DataFrame, targets: list[str], fallback: str) -> str:
    """The target service whose error lines rose most; ``fallback`` when none rose.

    Only action-space targets count: the load generator is loud when users see errors,
    but it is never a root cause a plan could act on."""
    rise = {s: v for s, v in error_rate_increase(logs).items() if s in targets}
    if not rise:
        return fallback
    return min(rise, key=lambda s: (-rise[s], s))


def _keyword(ctx: RunContext) -> Iterator[Prediction]:
    for record in ctx.reader.records:
        case = ctx.reader.case(record)
        fault, rise = fault_by_keywords(case.logs)
        service = loudest_service(case.logs, case.action_space.targets, case.topology.entrypoint)
        yield mapped(
            case.case_id,
            case.action_space,
            case.topology,
            service,
            fault,
            method=ctx.method,
            policy=policy_of(record),
            evidence={"keyword_rise_per_s": {k: round(v, 4) for k, v in rise.items() if v > 0}},
        )


KEYWORD = Baseline(
    "keyword",
    "Log keywords -> fault type; the service with the most new error lines.",
    _keyword,
)
