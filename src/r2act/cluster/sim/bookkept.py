"""r2act's own injectors' bookkeeping on the Deployments they change, read back.

A ConfigFault and a FlagFault each leave a JSON annotation on the Deployment they changed
(the originals to restore, the object's name, run and incident), as their real-cluster
twins do. Finding leftovers after a crash means reading those annotations, the same way
for both kinds: this module is that one reading, keyed by the annotation and the kind.
"""

from __future__ import annotations

import json
from typing import Any

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL
from r2act.cluster.sim.state import SimState
from r2act.schema import ChaosRef


def bookkeeping(state: SimState, deployment: str, annotation: str) -> dict[str, Any] | None:
    """The parsed ``annotation`` of a deployment, if it has one."""
    dep = state.deployments.get(deployment)
    raw = None if dep is None else dep.annotations.get(annotation)
    if raw is None:
        return None
    found = json.loads(raw)
    return found if isinstance(found, dict) else None


def leftovers(state: SimState, kind: str, annotation: str) -> list[ChaosRef]:
    """Objects of ``kind`` found through the deployments' ``annotation``: every one r2act
    made (or whose record is gone), never one another manager owns."""
    found = []
    for name in sorted(state.deployments):
        book = bookkeeping(state, name, annotation)
        if book is None:
            continue
        rec = state.live_chaos(kind, str(book.get("name")))
        if rec is not None and rec.labels.get(MANAGED_BY_LABEL) not in (None, MANAGED_BY):
            continue
        found.append(
            ChaosRef(
                kind=kind,
                name=str(book.get("name")),
                namespace=state.namespace,
                incident_id=None if book.get("incidentId") is None else str(book["incidentId"]),
                run_id=None if book.get("runId") is None else str(book["runId"]),
            )
        )
    return found
