"""FlagFault on a real cluster: flip one flag in its ConfigMap, restart the flag service, undo.

Path ``configmap+restart`` (``FLAG_FAULT_INJECTION_PATH``): the flag service serves a copy of the
ConfigMap that an init container made at pod start, so an edit goes live only when the
flag-serving Deployment rolls (``kubectl.kubernetes.io/restartedAt`` on its pod template,
as ``kubectl rollout restart`` does). A restart of the flag service alone therefore does not clear
the fault: the restarted pod reads the faulted ConfigMap again.

Inject, in this order, so a SIGKILL between any two writes leaves something cleanup finds:

1. the Deployment gets the annotation ``r2act.io/flag-fault`` (name, run, incident and the
   ConfigMap): leftovers are found by listing Deployments, as ConfigFaults are;
2. the ConfigMap's flag file gets the new ``defaultVariant`` and the same annotation with
   the original variant of exactly the flags r2act changed (one JSON Patch whose first
   operation tests the file r2act read, so a concurrent edit is refused, not overwritten);
3. the Deployment rolls.

Undo restores a flag only while it still holds the variant r2act set; a flag someone else
changed since is left as it is and reported. Then the ConfigMap annotation goes, and the
Deployment drops its annotation and rolls again, in one patch. A ConfigMap or Deployment
already carrying another FlagFault (another run's included) is never changed.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from r2act.cluster.base import MANAGED_BY, MANAGED_BY_LABEL, RUN_LABEL, Clock, foreign_reason
from r2act.cluster.flag_fault_object import (
    FlagFaultSpec,
    default_variants,
    parse,
    rejected,
    with_default_variants,
)
from r2act.cluster.kube.api import JSON_PATCH, KubeApi
from r2act.cluster.kube.parse import (
    RESTARTED_AT,
    annotation_record,
    format_time,
    parse_time,
    selected_pods,
)
from r2act.errors import ConflictError, ForeignObjectError, NotFoundError, SafetyError
from r2act.schema import ChaosRecord, ChaosRef, ChaosStatus
from r2act.schema.faults import FLAG_FAULT_ANNOTATION, FLAG_FAULT_INJECTION_PATH, FLAG_FAULT_KIND

KIND: Final = FLAG_FAULT_KIND
ANNOTATION: Final = FLAG_FAULT_ANNOTATION
PATH: Final = FLAG_FAULT_INJECTION_PATH

Json = Mapping[str, Any]


def _escape(text: str) -> str:
    return text.replace("~", "~0").replace("/", "~1")


_ANNOTATION_POINTER: Final = "/metadata/annotations/" + _escape(ANNOTATION)
_RESTART_POINTER: Final = "/spec/template/metadata/annotations/" + _escape(RESTARTED_AT)


def _annotations(obj: Json) -> Mapping[str, Any]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def bookkeeping(obj: Json) -> dict[str, Any] | None:
    """The parsed ``r2act.io/flag-fault`` annotation of a ConfigMap or Deployment; None when
    it has none. Garbage counts as someone else's (name None), never as nothing."""
    return annotation_record(obj, ANNOTATION)


def owner_labels(book: Json) -> dict[str, str]:
    """The labels the fault would carry as an object: what the ownership guard checks."""
    labels = {MANAGED_BY_LABEL: MANAGED_BY} if book.get("name") else {}
    if book.get("runId"):
        labels[RUN_LABEL] = str(book["runId"])
    return labels


def _add_annotation(obj: Json, value: str) -> list[dict[str, Any]]:
    ops: list[dict[str, Any]] = []
    if (obj.get("metadata") or {}).get("annotations") is None:
        ops.append({"op": "add", "path": "/metadata/annotations", "value": {}})
    ops.append({"op": "add", "path": _ANNOTATION_POINTER, "value": value})
    return ops


def _restart_ops(deployment: Json, stamp: str) -> list[dict[str, Any]]:
    template = (deployment.get("spec") or {}).get("template") or {}
    ops: list[dict[str, Any]] = []
    if (template.get("metadata") or {}).get("annotations") is None:
        if template.get("metadata") is None:
            ops.append({"op": "add", "path": "/spec/template/metadata", "value": {}})
        ops.append({"op": "add", "path": "/spec/template/metadata/annotations", "value": {}})
    ops.append({"op": "add", "path": _RESTART_POINTER, "value": stamp})
    return ops


def _restarted_at(deployment: Json) -> str | None:
    template = (deployment.get("spec") or {}).get("template") or {}
    value = ((template.get("metadata") or {}).get("annotations") or {}).get(RESTARTED_AT)
    return None if value is None else str(value)


def _mounts(deployment: Json, config_map: str) -> bool:
    spec = ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}
    return any(
        ((v or {}).get("configMap") or {}).get("name") == config_map
        for v in spec.get("volumes") or []
    )


def _text(configmap: Json, key: str, where: str, name: str) -> str:
    value = (configmap.get("data") or {}).get(key)
    if not isinstance(value, str):
        raise rejected(name, f"{where} is missing (the ConfigMap has no data key {key!r})")
    return value


def _ref(book: Json, namespace: str) -> ChaosRef:
    incident, run = book.get("incidentId"), book.get("runId")
    return ChaosRef(
        kind=KIND,
        name=str(book.get("name")),
        namespace=namespace,
        incident_id=None if incident is None else str(incident),
        run_id=None if run is None else str(run),
    )


def status(name: str, namespace: str, configmap: Json | None, pods: Sequence[Json]) -> ChaosStatus:
    """Exists while the ConfigMap's annotation names the fault; a pod is Injected once it was
    created from the template r2act restarted (its ``restartedAt`` is the one r2act set), so
    its init container copied the faulted file. Every live pod of the flag service must be."""
    book = None if configmap is None else bookkeeping(configmap)
    if book is None or book.get("name") != name:
        return ChaosStatus(kind=KIND, name=name, exists=False)
    stamp = book.get("restartedAt")
    records = []
    for p in pods:
        meta = p.get("metadata") or {}
        if meta.get("deletionTimestamp"):
            continue
        ok = stamp is not None and (meta.get("annotations") or {}).get(RESTARTED_AT) == stamp
        records.append(
            ChaosRecord(
                id=f"{namespace}/{meta.get('name')}",
                phase="Injected" if ok else "Not Injected",
                injected_count=int(ok),
            )
        )
    done = bool(records) and all(r.phase == "Injected" for r in records)
    return ChaosStatus(
        kind=KIND,
        name=name,
        conditions={
            "Selected": bool(records),
            "AllInjected": done,
            "AllRecovered": False,
            "Paused": False,
        },
        desired_phase="Run",
        records=records,
    )


class FlagFaults:
    """Inject, inspect and undo FlagFaults in one namespace (``KubeCluster`` dispatches here).

    ``ensure_writable`` guards every inject (context and opt-in); ``may_revert`` every undo
    (context only: r2act's own change stays removable after the opt-in was withdrawn, which
    ``note_unopted`` then says). ``notices`` collects what the user must hear.
    """

    def __init__(
        self,
        api: KubeApi,
        *,
        clock: Clock,
        notices: list[str],
        ensure_writable: Callable[[], None],
        may_revert: Callable[[], bool],
        note_unopted: Callable[[str], None],
    ) -> None:
        self._api = api
        self._clock = clock
        self._notices = notices
        self._ensure_writable = ensure_writable
        self._may_revert = may_revert
        self._note_unopted = note_unopted

    @property
    def namespace(self) -> str:
        """The one namespace this acts in."""
        return self._api.namespace

    def _stamp(self, deployment: Json) -> str:
        """Now, as kubectl writes it, but never the stamp already there (that would be no
        rollout at all when inject and undo fall in the same second)."""
        now = self._clock.now()
        current = _restarted_at(deployment)
        stamp = format_time(now)
        if current is not None and stamp <= current:
            with contextlib.suppress(ValueError):  # a hand-written stamp: just use now
                stamp = format_time(parse_time(current) + 1)
        return stamp

    # -- inject ------------------------------------------------------------------------------

    def inject(self, obj: Json) -> ChaosRef:
        """Apply the fault (ConflictError when another FlagFault holds the Deployment or the
        ConfigMap); a retried inject that already landed finishes what is missing."""
        spec = parse(obj)
        meta = obj.get("metadata") or {}
        if meta.get("namespace", self.namespace) != self.namespace:
            raise SafetyError(
                f"FlagFault {spec.name} targets namespace {meta.get('namespace')!r}; r2act only "
                f"acts in {self.namespace!r}"
            )
        self._ensure_writable()
        change = spec.change
        deployment = self._api.deployment(change.deployment)
        if not _mounts(deployment, change.config_map):
            raise rejected(
                spec.name,
                f"deployment {change.deployment} mounts no ConfigMap {change.config_map}, so "
                "restarting it would not take the flag live (fix spec.deployment/configMap)",
            )
        configmap = self._api.configmap(change.config_map)
        self._refuse_others(spec, bookkeeping(deployment), f"deployment {change.deployment}")
        held = bookkeeping(configmap)
        self._refuse_others(spec, held, f"configmap {change.config_map}")
        where = f"configmap {change.config_map} key {change.key}"
        text = _text(configmap, change.key, where, spec.name)
        stamp = held.get("restartedAt") if held else None
        new_text = with_default_variants(text, {change.flag: change.variant}, where, spec.name)
        pointer = {
            "name": spec.name,
            "runId": spec.run_id,
            "incidentId": spec.incident_id,
            "configMap": change.config_map,
            "path": PATH,
        }
        if bookkeeping(deployment) is None:
            ops = _add_annotation(deployment, json.dumps(pointer, sort_keys=True))
            self._api.patch_deployment(change.deployment, ops, JSON_PATCH, "mark")
        if held is None:
            stamp = self._stamp(deployment)
            original = default_variants(text, where)[change.flag]
            book = {
                **pointer,
                "key": change.key,
                "deployment": change.deployment,
                "flags": {change.flag: {"original": original, "applied": change.variant}},
                "restartedAt": stamp,
            }
            ops = [
                {"op": "test", "path": f"/data/{_escape(change.key)}", "value": text},
                {"op": "add", "path": f"/data/{_escape(change.key)}", "value": new_text},
                *_add_annotation(configmap, json.dumps(book, sort_keys=True)),
            ]
            self._api.patch_configmap(change.config_map, ops, "set a flag in")
        if stamp is not None and _restarted_at(deployment) != stamp:
            ops = _restart_ops(deployment, str(stamp))
            self._api.patch_deployment(change.deployment, ops, JSON_PATCH, "restart")
        return _ref(pointer, self.namespace)

    @staticmethod
    def _refuse_others(spec: FlagFaultSpec, book: Json | None, where: str) -> None:
        if book is None:
            return
        if book.get("name") == spec.name and book.get("runId") == spec.run_id:
            return  # this very fault: a retried inject
        raise ConflictError(
            f"{where} already carries FlagFault {book.get('name')!r} of run "
            f"{book.get('runId') or 'unknown'} ({ANNOTATION}); r2act never changes another "
            "fault's flags (if it is a leftover: r2act cleanup)"
        )

    # -- reads -------------------------------------------------------------------------------

    def _marked(self, name: str) -> dict[str, Any] | None:
        """The Deployment whose annotation names the FlagFault ``name``."""
        for deployment in self._api.deployments():
            book = bookkeeping(deployment)
            if book is not None and book.get("name") == name:
                return deployment
        return None

    def _pods(self, deployment: Json) -> list[dict[str, Any]]:
        return selected_pods(deployment, self._api.pods())

    def status(self, ref: ChaosRef) -> ChaosStatus:
        """The fault's status: gone once no Deployment's annotation names it."""
        deployment = self._marked(ref.name)
        if deployment is None:
            return ChaosStatus(kind=KIND, name=ref.name, exists=False)
        pointer = bookkeeping(deployment) or {}
        try:
            configmap = self._api.configmap(str(pointer.get("configMap")))
        except NotFoundError:
            configmap = None
        return status(ref.name, self.namespace, configmap, self._pods(deployment))

    def leftovers(self, deployments: Sequence[Json]) -> list[ChaosRef]:
        """Every FlagFault a Deployment's annotation names (r2act's and other runs')."""
        found = []
        for deployment in deployments:
            book = bookkeeping(deployment)
            if book is not None and book.get("name"):
                found.append(_ref(book, self.namespace))
        return found

    # -- undo --------------------------------------------------------------------------------

    def remove(self, ref: ChaosRef) -> None:
        """Restore the flags r2act changed (those still as it set them), drop both
        annotations and roll the flag service; ForeignObjectError when the fault is another
        run's."""
        opted_in = self._may_revert()
        deployment = self._marked(ref.name)
        if deployment is None:
            return  # nothing names it: never injected, or already undone
        pointer = bookkeeping(deployment) or {}
        reason = foreign_reason(owner_labels(pointer), ref)
        if reason is not None:
            raise ForeignObjectError(f"{reason}; r2act leaves it alone")
        config_map = str(pointer.get("configMap"))
        try:
            configmap: dict[str, Any] | None = self._api.configmap(config_map)
        except NotFoundError:
            configmap = None
            self._notices.append(
                f"FlagFault {ref.name}: configmap {config_map} is gone; nothing to restore"
            )
        if configmap is not None:
            self._restore(ref, configmap, pointer)
        target = str((deployment.get("metadata") or {}).get("name"))
        raw = _annotations(deployment)[ANNOTATION]
        ops = [
            {"op": "test", "path": _ANNOTATION_POINTER, "value": raw},
            *_restart_ops(deployment, self._stamp(deployment)),
            {"op": "remove", "path": _ANNOTATION_POINTER},
        ]
        self._api.patch_deployment(target, ops, JSON_PATCH, "restart (flag restored)")
        if not opted_in:
            self._note_unopted(f"restored r2act's own FlagFault {ref.name}")

    def _restore(self, ref: ChaosRef, configmap: Json, pointer: Json) -> None:
        """Put back each flag r2act changed that still holds r2act's variant; report others."""
        book = bookkeeping(configmap)
        config_map = str(pointer.get("configMap"))
        if book is None or book.get("name") != ref.name:
            if book is not None:  # another fault holds the file: its flags are not ours
                self._notices.append(
                    f"FlagFault {ref.name}: configmap {config_map} carries FlagFault "
                    f"{book.get('name')!r}, not this one; r2act left its flags alone"
                )
            return  # stopped before its flags were written: nothing of ours in the file
        reason = foreign_reason(owner_labels(book), ref)
        if reason is not None:
            raise ForeignObjectError(f"{reason}; r2act leaves it alone")
        key = str(book.get("key"))
        where = f"configmap {config_map} key {key}"
        text = _text(configmap, key, where, ref.name)
        current = default_variants(text, where)
        restore: dict[str, str] = {}
        for flag, entry in (book.get("flags") or {}).items():
            original, applied = (entry or {}).get("original"), (entry or {}).get("applied")
            if flag in current and current[flag] == applied and isinstance(original, str):
                restore[flag] = original
            else:
                self._notices.append(
                    f"FlagFault {ref.name}: flag {flag!r} in {where} is now "
                    f"{current.get(flag)!r}, not the {applied!r} r2act set; someone changed it "
                    f"since, so r2act left it (its value before the fault was {original!r})"
                )
        raw = _annotations(configmap)[ANNOTATION]
        ops: list[dict[str, Any]] = [{"op": "test", "path": _ANNOTATION_POINTER, "value": raw}]
        if restore:
            data = f"/data/{_escape(key)}"
            ops.append({"op": "test", "path": data, "value": text})
            ops.append(
                {"op": "add", "path": data, "value": with_default_variants(text, restore, where)}
            )
        ops.append({"op": "remove", "path": _ANNOTATION_POINTER})
        self._api.patch_configmap(config_map, ops, "restore a flag in")
