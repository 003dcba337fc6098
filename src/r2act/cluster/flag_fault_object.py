"""The FlagFault object: which flag of a flag service to flip, where it lives, the new file.

A rendered FlagFault (``r2act.io/v1alpha1``, kind ``FlagFault``) names one flag of a flag
service's file and the variant to make its ``defaultVariant``; the ConfigMap and data key that
hold the file; and the Deployment whose restart makes the flag service read it again. All
three are the system's own facts (the Astronomy Shop's are in
``systems/astronomyshop/runtime.py``, from its chart), so the object names them and the
injector assumes none.

Pure: parsing and rendering only, checked before anything is sent, so a malformed object
or an unknown flag or variant is refused with one line naming it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from r2act.cluster.base import INCIDENT_LABEL, RUN_LABEL
from r2act.errors import PermanentClusterError
from r2act.schema import CONFIG_FAULT_API_VERSION, CONFIG_FAULT_RUN_ANNOTATION, FaultSpec
from r2act.schema.faults import FLAG_FAULT_KIND
from r2act.systems.flags import FlagStore

API_VERSION: Final = CONFIG_FAULT_API_VERSION


@dataclass(frozen=True)
class FlagChange:
    """What a FlagFault changes: one flag's default variant, and where the flag service reads it."""

    flag: str
    """The flag key in the file's ``flags`` map, e.g. ``paymentFailure``."""
    variant: str
    """The variant to make the flag's ``defaultVariant``, e.g. ``100%``."""
    config_map: str
    """The ConfigMap holding the flag file."""
    key: str
    """The ConfigMap data key of the flag file."""
    deployment: str
    """The flag-serving Deployment, restarted so its pods read the file again."""


@dataclass(frozen=True)
class FlagFaultSpec:
    """A parsed FlagFault: its name, owner and the change."""

    name: str
    change: FlagChange
    run_id: str | None
    incident_id: str | None


def change_of(fault: FaultSpec, store: FlagStore) -> FlagChange:
    """The change a planned ``feature_flag`` fault makes: its ``flag`` and ``variant``
    parameters, on the system's flag file ``store`` (what ``campaigns.chaos`` renders too)."""
    flag, variant = fault.parameters.get("flag"), fault.parameters.get("variant")
    if fault.chaos_kind != FLAG_FAULT_KIND or not isinstance(flag, str) or not flag:
        raise PermanentClusterError(
            f"a {fault.type.value} fault is no FlagFault (a feature_flag fault names its flag)"
        )
    if not isinstance(variant, str) or not variant:
        raise PermanentClusterError(f"feature_flag fault on {flag!r} names no variant")
    return FlagChange(
        flag=flag,
        variant=variant,
        config_map=store.config_map,
        key=store.key,
        deployment=store.deployment,
    )


def rejected(name: str, what: str) -> PermanentClusterError:
    """The one-line error for a FlagFault that cannot be applied as written."""
    return PermanentClusterError(f"FlagFault {name!r} rejected: {what}")


def render(
    name: str, namespace: str, change: FlagChange, labels: Mapping[str, str] | None = None
) -> dict[str, Any]:
    """The FlagFault object for ``change`` (what a campaign renders and the collector sends)."""
    spec: dict[str, Any] = {
        "flag": change.flag,
        "variant": change.variant,
        "configMap": change.config_map,
        "key": change.key,
        "deployment": change.deployment,
    }
    return {
        "apiVersion": API_VERSION,
        "kind": FLAG_FAULT_KIND,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
        "spec": spec,
    }


def parse(obj: Mapping[str, Any]) -> FlagFaultSpec:
    """The typed spec of a FlagFault; PermanentClusterError naming what is wrong."""
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name") or "")
    spec = obj.get("spec") or {}
    if obj.get("apiVersion") != API_VERSION or obj.get("kind") != FLAG_FAULT_KIND:
        raise rejected(name, f"apiVersion/kind must be {API_VERSION}/{FLAG_FAULT_KIND}")
    if not name:
        raise rejected(name, "metadata.name is missing")
    fields = {"flag", "variant", "configMap", "key", "deployment"}
    if not isinstance(spec, Mapping) or set(spec) - fields - {"duration"}:
        extra = sorted(set(spec) - fields - {"duration"}) if isinstance(spec, Mapping) else spec
        raise rejected(name, f"spec has unknown fields {extra} (allowed: {sorted(fields)})")
    for field in ("flag", "variant", "configMap", "key", "deployment"):
        if not isinstance(spec.get(field), str) or not spec[field]:
            raise rejected(name, f"spec.{field} must be a non-empty string")
    change = FlagChange(
        flag=spec["flag"],
        variant=spec["variant"],
        config_map=spec["configMap"],
        key=spec["key"],
        deployment=spec["deployment"],
    )
    labels = metadata.get("labels") or {}
    annotations = metadata.get("annotations") or {}
    run = labels.get(RUN_LABEL) or annotations.get(CONFIG_FAULT_RUN_ANNOTATION)
    incident = annotations.get("r2act.io/incident-id") or labels.get(INCIDENT_LABEL)
    return FlagFaultSpec(
        name=name,
        change=change,
        run_id=None if run is None else str(run),
        incident_id=None if incident is None else str(incident),
    )


def _flags(text: str, where: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """(document, its ``flags`` map); PermanentClusterError when the file is not a flag file."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise PermanentClusterError(f"{where}: is not JSON ({exc}); r2act changes nothing") from exc
    flags = document.get("flags") if isinstance(document, dict) else None
    if not isinstance(flags, dict):
        raise PermanentClusterError(f"{where}: has no 'flags' map; it is not a flag file")
    return document, flags


def default_variants(text: str, where: str) -> dict[str, str | None]:
    """Each flag's current ``defaultVariant`` (None when a flag has none)."""
    _document, flags = _flags(text, where)
    return {
        str(key): (None if not isinstance(f, dict) else f.get("defaultVariant"))
        for key, f in flags.items()
    }


def with_default_variants(
    text: str, variants: Mapping[str, str], where: str, name: str = ""
) -> str:
    """The flag file with exactly these flags' ``defaultVariant`` set, nothing else changed.

    Refuses a flag the file does not have, or a variant a flag does not offer, naming both
    and what exists. The file is written back in the flag service's own layout (two-space JSON and a
    final newline, which round-trips the chart's ``demo.flagd.json`` byte for byte),
    keeping key order.
    """
    document, flags = _flags(text, where)
    for flag, variant in variants.items():
        found = flags.get(flag)
        if not isinstance(found, dict):
            raise rejected(name, f"{where} has no flag {flag!r} (has: {', '.join(sorted(flags))})")
        offered = found.get("variants")
        if not isinstance(offered, dict) or variant not in offered:
            names = ", ".join(map(repr, offered or {})) if isinstance(offered, dict) else "none"
            raise rejected(
                name, f"flag {flag!r} in {where} has no variant {variant!r} (has: {names})"
            )
        found["defaultVariant"] = variant
    ending = "\n" if text.endswith("\n") else ""
    return json.dumps(document, indent=2, ensure_ascii=False) + ending
