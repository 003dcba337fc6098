"""Recovery plans on the real cluster: apply, read the preimage, undo.

Rollout restart = the ``kubectl.kubernetes.io/restartedAt`` annotation; scale = the scale
subresource; rollback = kubectl's ReplicaSet-template JSON patch; memory = a container
resources patch; rollback_config / repair_dependency = remove the injected rule (the chaos
object or ConfigFault is the broken configuration in this testbed). ``PlanOps`` is mixed
into ``KubeCluster``, whose safety checks and chaos-object calls it uses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from r2act.cluster.base import (
    INCIDENT_LABEL,
    MANAGED_BY,
    MANAGED_BY_LABEL,
    Clock,
)
from r2act.cluster.kube import config_fault
from r2act.cluster.kube.api import (
    JSON_PATCH,
    STRATEGIC_MERGE,
    KubeApi,
)
from r2act.cluster.kube.parse import (
    CHAOS_PLURALS,
    RESTARTED_AT,
    Json,
    chaos_ref,
    format_time,
    http_scope,
    rollback_source,
    same_template,
    selected_app,
    strip_server_fields,
)
from r2act.errors import (
    PermanentClusterError,
)
from r2act.schema import (
    Change,
    ChaosRef,
    IncreaseMemoryLimit,
    NoAction,
    PlanEffect,
    RecoveryPlan,
    RepairDependency,
    RestartService,
    RollbackConfig,
    RollbackDeployment,
    ScaleOut,
    Topology,
)
from r2act.systems import system_of


class PlanOps:
    """The plan half of ``KubeCluster`` (state and checks come from the cluster)."""

    _api: KubeApi
    _clock: Clock
    _topology: Topology
    _plan_removal_timeout: float
    run_id: str | None

    if TYPE_CHECKING:  # provided by KubeCluster

        def ensure_writable(self) -> None: ...
        def may_revert(self) -> bool: ...
        def remove(self, ref: ChaosRef, timeout_s: float = 60.0) -> None: ...
        def _note_unopted(self, did: str) -> None: ...
        def _list_chaos(self, plural: str, selector: str) -> list[dict[str, Any]]: ...

    def _main_container(self, deployment: Json) -> str:
        name = str((deployment.get("metadata") or {}).get("name", ""))
        containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get(
            "containers"
        ) or []
        names = [str(c.get("name")) for c in containers]
        try:
            wanted = self._topology.deployment(name).main.name
        except KeyError:
            wanted = names[0] if names else ""
        if wanted not in names:
            raise PermanentClusterError(f"deployment {name} has no container {wanted!r}")
        return wanted

    @staticmethod
    def _memory_patch(container: str, memory: str | None) -> dict[str, Any]:
        limits = {"memory": memory}  # None deletes the key under strategic merge
        return {
            "spec": {
                "template": {
                    "spec": {"containers": [{"name": container, "resources": {"limits": limits}}]}
                }
            }
        }

    def _restart(self, target: str) -> PlanEffect:
        deployment = self._api.deployment(target)
        template_meta = ((deployment.get("spec") or {}).get("template") or {}).get("metadata")
        before = ((template_meta or {}).get("annotations") or {}).get(RESTARTED_AT)
        stamp = format_time(self._clock.now())
        patch = {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}}
        self._api.patch_deployment(target, patch, STRATEGIC_MERGE, "restart")
        return PlanEffect(
            operation="restart_service",
            changes=[Change(kind="restart", deployment=target, before=before, after=stamp)],
        )

    def _replicas(self, target: str) -> int:
        """The deployment's desired replicas, from its scale subresource."""
        return int((self._api.scale(target).get("spec") or {}).get("replicas") or 0)

    def _memory_limit(self, target: str) -> dict[str, Any]:
        """The main container and its memory limit (None when it has none), as undo takes it."""
        deployment = self._api.deployment(target)
        container = self._main_container(deployment)
        containers = deployment["spec"]["template"]["spec"]["containers"]
        current = next(c for c in containers if c.get("name") == container)
        memory = ((current.get("resources") or {}).get("limits") or {}).get("memory")
        return {"container": container, "memory": memory}

    def _scale(self, target: str, replicas: int) -> PlanEffect:
        before = self._replicas(target)
        self._api.patch_scale(target, replicas)
        return PlanEffect(
            operation="scale_out",
            changes=[Change(kind="replicas", deployment=target, before=before, after=replicas)],
        )

    def _memory(self, target: str, limit: str) -> PlanEffect:
        before = self._memory_limit(target)
        container = before["container"]
        self._api.patch_deployment(
            target, self._memory_patch(container, limit), STRATEGIC_MERGE, "raise memory limit of"
        )
        return PlanEffect(
            operation="increase_memory_limit",
            changes=[
                Change(
                    kind="memory_limit",
                    deployment=target,
                    before=before,
                    after={"container": container, "memory": limit},
                )
            ],
        )

    def _rollback(self, target: str) -> PlanEffect:
        deployment = self._api.deployment(target)
        spec = deployment.get("spec") or {}
        if spec.get("paused"):
            raise PermanentClusterError(f"deployment {target} is paused; resume it to roll back")
        match_labels = (spec.get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(match_labels.items()))
        replicasets = self._api.replicasets(selector)
        source = rollback_source(deployment, replicasets)
        if source is None:  # nothing to roll back to: the plan changes nothing (as in the sim)
            return PlanEffect(operation="rollback_deployment", changes=[])
        _revision, template, annotations = source
        current_template = spec.get("template") or {}
        if same_template(current_template, template):
            return PlanEffect(operation="rollback_deployment", changes=[])
        before_annotations = (deployment.get("metadata") or {}).get("annotations") or {}
        if config_fault.ANNOTATION in before_annotations:
            # r2act's bookkeeping of a ConfigFault survives the rollback: removal then finds
            # the originals in place and changes nothing.
            annotations = {
                **(annotations or {}),
                config_fault.ANNOTATION: before_annotations[config_fault.ANNOTATION],
            }
        self._api.patch_deployment(
            target, self._template_patch(template, annotations), JSON_PATCH, "roll back"
        )
        return PlanEffect(
            operation="rollback_deployment",
            changes=[
                Change(
                    kind="template",
                    deployment=target,
                    before={"template": current_template, "annotations": before_annotations},
                    after={"template": template, "annotations": annotations},
                )
            ],
        )

    @staticmethod
    def _template_patch(template: Any, annotations: Any) -> list[dict[str, Any]]:
        """kubectl's rollback: replace the pod template and the deployment's annotations."""
        return [
            {"op": "replace", "path": "/spec/template", "value": template},
            {"op": "replace", "path": "/metadata/annotations", "value": annotations},
        ]

    def _remove_matching(
        self, operation: str, plural: str, matches: Callable[[dict[str, Any]], bool]
    ) -> PlanEffect:
        """Delete the injected rule a plan names; nothing matches -> nothing changes."""
        changes = []
        for obj in self._list_chaos(plural, f"{MANAGED_BY_LABEL}={MANAGED_BY}"):
            if not matches(obj):
                continue
            ref = chaos_ref(obj, INCIDENT_LABEL)
            if self.run_id is not None and ref.run_id != self.run_id:
                continue  # another run's fault: a plan never removes it
            self.remove(ref, timeout_s=self._plan_removal_timeout)
            changes.append(Change(kind="chaos_removed", before=strip_server_fields(obj)))
        return PlanEffect(operation=operation, changes=changes)

    def _repair(self, target: str, dependency: str) -> PlanEffect:
        """Set the target's address variable for ``dependency`` back to the release
        manifest's value (a template change, hence a rollout); nothing when it already is."""
        try:
            manifest = self._topology.deployment(target).env
        except KeyError:
            manifest = {}
        variable = next((k for k, v in manifest.items() if v == dependency), None)
        if variable is None:
            return PlanEffect(operation="repair_dependency", changes=[])
        deployment = self._api.deployment(target)
        container = self._main_container(deployment)
        template = (deployment.get("spec") or {}).get("template") or {}
        containers = (template.get("spec") or {}).get("containers") or []
        index = next(i for i, c in enumerate(containers) if c.get("name") == container)
        env = list(containers[index].get("env") or [])
        current = next((e.get("value") for e in env if e.get("name") == variable), None)
        if current == dependency:
            return PlanEffect(operation="repair_dependency", changes=[])
        fixed = [e for e in env if e.get("name") != variable] + [
            {"name": variable, "value": dependency}
        ]
        if any(e.get("name") == variable for e in env):
            fixed = [
                {"name": variable, "value": dependency} if e.get("name") == variable else e
                for e in env
            ]
        path = f"/spec/template/spec/containers/{index}/env"
        annotations = (deployment.get("metadata") or {}).get("annotations")
        self._api.patch_deployment(
            target, [{"op": "add", "path": path, "value": fixed}], JSON_PATCH, "repair"
        )
        return PlanEffect(
            operation="repair_dependency",
            changes=[
                Change(
                    kind="template",
                    deployment=target,
                    before={"template": template, "annotations": annotations},
                    after={"variable": variable, "value": dependency},
                )
            ],
        )

    def _on_route(self, target: str, scope: str) -> bool:
        """The scope names a route whose requests reach ``target`` (as the simulator rules)."""
        method, _, path = scope.partition(" ")
        try:
            routes = self._topology.routes_of(target)
        except KeyError:
            return False
        return any(r.path == path and method in ("ANY", r.method) for r in routes)

    def apply_plan(self, plan: RecoveryPlan) -> PlanEffect:
        """Execute a typed plan in the namespace; the effect records what to undo."""
        if isinstance(plan, NoAction):
            return PlanEffect(operation="no_action", changes=[])
        self.ensure_writable()
        if isinstance(plan, RestartService):
            return self._restart(plan.target)
        if isinstance(plan, ScaleOut):
            return self._scale(plan.target, plan.replicas)
        if isinstance(plan, IncreaseMemoryLimit):
            return self._memory(plan.target, plan.memory_limit)
        if isinstance(plan, RollbackDeployment):
            return self._rollback(plan.target)
        if isinstance(plan, RollbackConfig):
            scope = plan.scope
            if not self._on_route(plan.target, scope):
                return PlanEffect(operation="rollback_config", changes=[])
            target = plan.target  # the rule lives on the pods it selects, not on a backend
            label = system_of(self._topology).workload_label
            return self._remove_matching(
                "rollback_config",
                CHAOS_PLURALS["HTTPChaos"],
                lambda o: http_scope(o) == scope and selected_app(o, label) == target,
            )
        if isinstance(plan, RepairDependency):
            return self._repair(plan.target, plan.dependency)
        raise PermanentClusterError(
            f"unknown plan operation {plan.operation!r}"
        )  # pragma: no cover

    def preimage(self, plan: RecoveryPlan) -> PlanEffect:
        """The target's replicas, memory limit or template as they are now (reads only)."""
        target = getattr(plan, "target", None)
        if target is None:
            return PlanEffect(operation=plan.operation, changes=[])
        if isinstance(plan, ScaleOut):
            change = Change(kind="replicas", deployment=target, before=self._replicas(target))
        elif isinstance(plan, IncreaseMemoryLimit):
            before = self._memory_limit(target)
            change = Change(kind="memory_limit", deployment=target, before=before)
        elif isinstance(plan, (RollbackDeployment, RepairDependency)):
            deployment = self._api.deployment(target)
            template = (deployment.get("spec") or {}).get("template") or {}
            annotations = (deployment.get("metadata") or {}).get("annotations") or {}
            before = {"template": template, "annotations": annotations}
            change = Change(kind="template", deployment=target, before=before)
        else:
            return PlanEffect(operation=plan.operation, changes=[])
        return PlanEffect(operation=plan.operation, changes=[change])

    def undo(self, effect: PlanEffect) -> None:
        """Put back replicas, memory limits and templates, newest change first.

        A restart cannot be undone (the old pods are gone) and a removed fault is not
        re-injected: replay removes the fault anyway, so both are skipped.
        """
        changes = [
            c
            for c in reversed(effect.changes)
            if c.kind in ("replicas", "memory_limit", "template")
        ]
        if not changes:
            return
        if not self.may_revert():
            self._note_unopted(f"undid r2act's plan ({effect.operation})")
        for change in changes:
            target = change.deployment
            if target is None:
                continue
            if change.kind == "replicas" and isinstance(change.before, int):
                self._api.patch_scale(target, change.before)
            elif change.kind == "memory_limit" and isinstance(change.before, dict):
                container = str(change.before.get("container"))
                memory = change.before.get("memory")
                self._api.patch_deployment(
                    target,
                    self._memory_patch(container, None if memory is None else str(memory)),
                    STRATEGIC_MERGE,
                    "restore memory limit of",
                )
            elif change.kind == "template" and isinstance(change.before, dict):
                self._api.patch_deployment(
                    target,
                    self._template_patch(
                        change.before.get("template"), change.before.get("annotations")
                    ),
                    JSON_PATCH,
                    "restore template of",
                )
