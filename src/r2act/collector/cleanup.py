"""``r2act cleanup``: revert what a stopped command left on its cluster.

Collection and replay remove what they inject, even on signals; cleanup is for what only a
SIGKILL, a power loss or a lost connection can leave behind. It reads the output
directory's ledger (``collector.ledger``), reopens the very cluster the stopped command
used (a replay's simulated cluster lives in the replay's directory, not the campaign's),
undoes every plan side effect the ledger lists, then removes every fault it lists, then
sweeps objects labelled ``app.kubernetes.io/managed-by=r2act`` *of this run* that the
ledger missed (a run label that other runs' objects do not carry); objects of other runs
are only listed, unless ``any_run`` is set.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from r2act.campaigns import KubernetesTarget, SimTarget
from r2act.cluster.base import Cluster
from r2act.collector import ledger as ledger_module
from r2act.collector.retrying import RetryPolicy, call_with_retry
from r2act.errors import ClusterError, ForeignObjectError
from r2act.schema import ChaosRef


def remover(
    cluster: Cluster, policy: RetryPolicy, timeout_s: float, sleep: Callable[[float], None] | None
) -> Callable[[ChaosRef], None]:
    """A function removing one object with bounded retries (used by the guard and sweep)."""

    def remove(ref: ChaosRef) -> None:
        call_with_retry(
            lambda: cluster.remove(ref, timeout_s),
            policy=policy,
            sleep=sleep or cluster.clock.sleep,
            on_retry=lambda _attempt, _error: None,
        )

    return remove


def sweep(
    cluster: Cluster,
    policy: RetryPolicy | None = None,
    timeout_s: float = 60.0,
    sleep: Callable[[float], None] | None = None,
) -> list[ChaosRef]:
    """Remove every leftover r2act chaos object; returns what was removed."""
    policy = policy or RetryPolicy()
    found = call_with_retry(
        cluster.leftovers,
        policy=policy,
        sleep=sleep or cluster.clock.sleep,
        on_retry=lambda _attempt, _error: None,
    )
    remove = remover(cluster, policy, timeout_s, sleep)
    for ref in found:
        remove(ref)
    return found


def notices(cluster: Cluster) -> list[str]:
    """What the adapter asks the user to hear (e.g. a removal made without the opt-in)."""
    found = getattr(cluster, "notices", None)
    return list(found) if isinstance(found, list) else []


def describe_target(
    target: SimTarget | KubernetesTarget, cluster: Cluster, workspace: Path
) -> dict[str, Any]:
    """How to reopen this cluster later (kept in the ledger for cleanup)."""
    described: dict[str, Any] = target.model_dump(mode="json")
    described["namespace"] = cluster.namespace
    described["fingerprint"] = cluster.fingerprint
    if isinstance(target, SimTarget):
        described["workspace"] = str(workspace.resolve())
    return described


def reopen(described: dict[str, Any]) -> Cluster | None:
    """The cluster a ledger's ``begin`` entry describes; never creates a simulated one.

    None when that simulated cluster no longer exists (its directory was removed): nothing
    can be left on a cluster that is gone.
    """
    from r2act.cluster.connect import connect

    namespace = str(described.get("namespace", "default"))
    fields = {k: v for k, v in described.items() if k not in {"namespace", "fingerprint"}}
    if described.get("kind") == "sim":
        from r2act.cluster.sim.state import state_path

        workspace = Path(str(fields.pop("workspace")))
        sim = SimTarget.model_validate(fields)
        if not state_path(workspace, sim.name).is_file():
            return None
        return connect(sim, namespace=namespace, workspace=workspace)
    # ``describe_target`` wrote the cluster's namespace over the target's own (same key)
    kube = KubernetesTarget.model_validate({**fields, "namespace": namespace})
    return connect(kube, namespace=namespace, workspace=Path("."), reverting=True)


@dataclass
class CleanupReport:
    """What cleanup did and what it left."""

    fingerprint: str
    undone: list[str] = field(default_factory=list)
    removed: list[ChaosRef] = field(default_factory=list)
    left_alone: list[str] = field(default_factory=list)
    others: list[ChaosRef] = field(default_factory=list)
    """r2act objects of other runs (not removed without ``any_run``)."""
    warnings: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def revert(
    out: Path,
    cluster: Cluster,
    pending: ledger_module.Pending,
    *,
    any_run: bool = False,
    policy: RetryPolicy | None = None,
    sleep: Callable[[float], None] | None = None,
) -> CleanupReport:
    """Undo plan side effects, then remove faults, each written to the ledger as it goes."""
    policy = policy or RetryPolicy()
    report = CleanupReport(cluster.fingerprint)
    remove = remover(cluster, policy, 60.0, sleep)
    ledger = ledger_module.Ledger(out, "cleanup", pending.target, pending.run_id)
    try:
        for incident, effect in pending.effects.items():
            try:
                cluster.undo(effect)
            except ClusterError as error:
                report.failed.append(f"undo of {incident}'s plan failed: {error}")
                continue
            ledger.undone(incident)
            report.undone.append(f"{effect.operation} of {incident}")
        for incident, plan in pending.intents.items():
            what = f"{plan.get('operation', '?')} {plan.get('target', '')}".strip()
            before = pending.preimages.get(incident)
            if before is None:  # a ledger written before plans carried their preimage
                report.warnings.append(
                    f"a plan for {incident} ({what}) may have been applied when the command "
                    "stopped; compare that deployment with the release manifest"
                )
            else:
                try:
                    cluster.undo(before)
                except ClusterError as error:
                    report.failed.append(f"restoring {incident}'s plan target failed: {error}")
                    continue
                report.undone.append(
                    f"{what} of {incident} (sent when the command stopped; its target is back "
                    "as it was before)"
                )
            ledger.undone(incident)
        for ref in list(pending.faults.values()):
            if _remove_one(remove, ref, report):
                ledger.fault_removed(ref)
        for ref in call_with_retry(
            cluster.leftovers,
            policy=policy,
            sleep=sleep or cluster.clock.sleep,
            on_retry=lambda _attempt, _error: None,
        ):
            if any_run or (pending.run_id and ref.run_id == pending.run_id):
                _remove_one(remove, ref, report)
            else:
                report.others.append(ref)
        if not report.failed:
            ledger.clean()
    finally:
        ledger.close()
    report.warnings += notices(cluster)
    return report


def _remove_one(remove: Callable[[ChaosRef], None], ref: ChaosRef, report: CleanupReport) -> bool:
    """Remove ``ref``; True when it is gone (or was never ours), False when it failed."""
    try:
        remove(ref)
    except ForeignObjectError as error:
        report.left_alone.append(str(error))
    except ClusterError as error:
        report.failed.append(f"{ref.kind}/{ref.name}: {error}")
        return False
    else:
        report.removed.append(ref)
    return True
