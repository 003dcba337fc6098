"""The part of PromQL the simulated Prometheus understands: a query's metric, its label
matchers, whether it asks for a rate, and an outer ``sum by``.

Kept apart from the series themselves (``metrics``): this is what a query says, that is
what the cluster shows; neither needs the other's internals.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

Sample = tuple[dict[str, str], float]
"""One series' labels and its value at one step."""
LabelKey = tuple[tuple[str, str], ...]
"""A label set as sorted (name, value) pairs: a series' identity."""

_NAME = re.compile(r"\b((?:container|kube)_[a-z_]+)\b")
_MATCHER = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"([^"]*)"')
_SUM_BY = re.compile(r"^\s*sum\s*(?:by\s*\(([^)]*)\))?\s*\(")


@dataclass(frozen=True)
class Query:
    """What the simulator understood of a PromQL query."""

    metric: str
    rate: bool
    matchers: tuple[tuple[str, str, str], ...]
    group: tuple[str, ...] | None
    """Labels of an outer ``sum by``; ``()`` for a plain ``sum``; None when not summed."""


def parse_query(promql: str) -> Query | None:
    """The metric, rate-ness, matchers and grouping of ``promql``; None if no known metric."""
    match = _NAME.search(promql)
    if match is None:
        return None
    metric = match.group(1)
    rate = bool(re.search(r"\b(?:i?rate|increase)\s*\(", promql))
    braces = promql[match.end() :]
    body = braces[1 : braces.find("}")] if braces.startswith("{") else ""
    matchers = tuple(_MATCHER.findall(body))
    summed = _SUM_BY.match(promql)
    group = None
    if summed is not None:
        group = tuple(x.strip() for x in (summed.group(1) or "").split(",") if x.strip())
    return Query(metric, rate, matchers, group)


def matches(labels: Mapping[str, str], matchers: tuple[tuple[str, str, str], ...]) -> bool:
    """Whether a series with ``labels`` passes every label matcher of a query (a missing
    label reads as "", as in PromQL)."""
    for key, op, value in matchers:
        actual = labels.get(key, "")
        if op == "=" and actual != value:
            return False
        if op == "!=" and actual == value:
            return False
        if op == "=~" and re.fullmatch(value, actual) is None:
            return False
        if op == "!~" and re.fullmatch(value, actual) is not None:
            return False
    return True


class SumBy:
    """An outer ``sum by (group)`` over the steps of one range query.

    The samples' labels are the same dicts at every step (a pod's, cached per query), so
    each one's group key is built once and kept by the dict's id (the entry holds the dict,
    so the id stays its own); each group's sorted label key is built once, not per step."""

    __slots__ = ("_group", "_keys", "_sorted")

    def __init__(self, group: tuple[str, ...]) -> None:
        self._group = group
        self._keys: dict[int, tuple[dict[str, str], LabelKey]] = {}
        self._sorted: dict[LabelKey, LabelKey] = {}

    def totals(self, samples: list[Sample]) -> list[tuple[LabelKey, float]]:
        """Each group's sum of ``samples`` (added in their order), first-seen group first,
        keyed by the sorted items of the group's labels."""
        totals: dict[LabelKey, float] = {}
        keys = self._keys
        for labels, value in samples:
            known = keys.get(id(labels))
            if known is None or known[0] is not labels:
                known = keys[id(labels)] = (labels, _group_key(labels, self._group))
            key = known[1]
            totals[key] = totals.get(key, 0.0) + value
        out: list[tuple[LabelKey, float]] = []
        for key, value in totals.items():
            found = self._sorted.get(key)
            if found is None:
                found = self._sorted[key] = tuple(sorted(dict(key).items()))
            out.append((found, value))
        return out


def _group_key(labels: Mapping[str, str], group: tuple[str, ...]) -> LabelKey:
    """The ``sum by`` key of a sample: its value of each grouping label ("" if none)."""
    return tuple((k, labels.get(k, "")) for k in group)
