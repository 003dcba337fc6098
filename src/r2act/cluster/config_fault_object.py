"""The ConfigFault object's form, checked once for both adapters (CONTRACTS "ConfigFault object").

A rendered ConfigFault names one Deployment, its main container and exactly one change:
``env`` (variables to set) or ``resources.limits.memory``. The simulator and the Kubernetes
adapter both refuse a malformed one here, with the same words, before touching anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from r2act.errors import PermanentClusterError
from r2act.schema import CONFIG_FAULT_API_VERSION, memory_bytes


def rejected(name: str, what: str) -> PermanentClusterError:
    """The one-line error for a ConfigFault that cannot be applied as written."""
    return PermanentClusterError(f"ConfigFault {name!r} rejected: {what}")


def parse(obj: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """(name, spec) of a ConfigFault; PermanentClusterError naming what is wrong."""
    metadata = obj.get("metadata") or {}
    name = str(metadata.get("name") or "")
    spec = dict(obj.get("spec") or {})
    if obj.get("apiVersion") != CONFIG_FAULT_API_VERSION:
        raise rejected(name, f"apiVersion must be {CONFIG_FAULT_API_VERSION}")
    if not name:
        raise rejected(name, "metadata.name is missing")
    if not isinstance(spec.get("deployment"), str) or not isinstance(spec.get("container"), str):
        raise rejected(name, "spec needs deployment and container names")
    env, resources = spec.get("env"), spec.get("resources")
    if (env is None) == (resources is None):
        raise rejected(name, "spec needs exactly one of env and resources")
    if env is not None and (not isinstance(env, Mapping) or not env):
        raise rejected(name, "spec.env must map variable names to values")
    if resources is not None:
        limits = (resources or {}).get("limits") if isinstance(resources, Mapping) else None
        if (
            not isinstance(limits, Mapping)
            or set(limits) != {"memory"}
            or set(resources) != {"limits"}
        ):
            raise rejected(name, "spec.resources must be {limits: {memory: <quantity>}}")
        try:
            memory_bytes(str(limits["memory"]))
        except ValueError as exc:
            raise rejected(name, f"memory limit {limits['memory']!r}: {exc}") from exc
    return name, spec
