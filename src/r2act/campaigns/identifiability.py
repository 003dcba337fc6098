"""Are root-cause labels identifiable from the fault definition alone?

A fault definition is what the injector receives about *what* to break: the object's kind
and spec (selector included), without its name, labels and annotations, which only say
which incident it belongs to. If two incidents with the same definition carried different
root-cause services, no method could tell them apart, however good its telemetry reading.

``oracle_rca_s`` is the best RCA-S an oracle that sees only the definition can reach: per
group of identical definitions it answers the group's most common label. It is 1.0
exactly when no group mixes labels.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any


def definition_key(obj: Mapping[str, Any]) -> str:
    """The injected object's kind and spec as one canonical string."""
    return json.dumps({"kind": obj.get("kind"), "spec": obj.get("spec")}, sort_keys=True)


def conflicts(rows: Iterable[tuple[str, str]]) -> dict[str, list[str]]:
    """Definitions (keys of ``(definition, label)`` rows) that carry more than one label."""
    labels: defaultdict[str, set[str]] = defaultdict(set)
    for key, label in rows:
        labels[key].add(label)
    return {key: sorted(found) for key, found in labels.items() if len(found) > 1}


def oracle_rca_s(rows: Iterable[tuple[str, str]]) -> float:
    """The best RCA-S reachable from definitions alone (1.0 when labels are identifiable)."""
    groups: defaultdict[str, Counter[str]] = defaultdict(Counter)
    total = 0
    for key, label in rows:
        groups[key][label] += 1
        total += 1
    if total == 0:
        return 1.0
    return sum(max(group.values()) for group in groups.values()) / total
