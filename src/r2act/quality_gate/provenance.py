"""What a method may see versus what only tells how the incident was made.

Chaos Mesh objects, their status and every event about them are provenance: they name the
fault. ``is_provenance_event`` draws that line for Kubernetes events; ``leak_terms`` lists
the strings whose appearance anywhere in method-visible data would hand a method the
answer (the chaos object name, the incident id, the fault-type label, the word 'chaos' and
the marks of r2act's own objects). Both the gate (to refuse an incident) and the dataset
builder (to route events) use these, so the two can never disagree.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import Final

from r2act.campaigns.chaos import OWN_NAME_PREFIXES
from r2act.schema import CONFIG_FAULT_KIND, FLAG_FAULT_INJECTION_PATH, FLAG_FAULT_KIND, KubeEvent

CHAOS_KINDS: Final = frozenset(
    {
        "PodChaos",
        "StressChaos",
        "NetworkChaos",
        "HTTPChaos",
        "DNSChaos",
        "IOChaos",
        "TimeChaos",
        "KernelChaos",
        "PodNetworkChaos",
        "PodHttpChaos",
        "PodIOChaos",
        "Schedule",
        "Workflow",
        "ConfigFault",
        FLAG_FAULT_KIND,
    }
)
"""Kinds whose events are provenance (the chaos-mesh.org API group, and r2act's ConfigFault
and FlagFault; the rollout a ConfigFault causes is the Deployment's, and the flag
service's restart after a FlagFault is that Deployment's, which operators see, so not these)."""

INJECTION_PATHS: Final = MappingProxyType(
    {CONFIG_FAULT_KIND: "deployment-patch", FLAG_FAULT_KIND: FLAG_FAULT_INJECTION_PATH}
)
"""How each r2act-made kind reaches the cluster, as provenance records it: a ConfigFault
patches one Deployment's pod template; a FlagFault edits the flag ConfigMap and restarts
the flag-serving Deployment (``configmap+restart``: the flag service's own write API is
the other path, and a restart of the flag service undoes only that one, so the path must be
known)."""


def injection_path(kind: str) -> str:
    """The path an object of ``kind`` takes into the cluster: r2act's own kinds by
    ``INJECTION_PATHS``, every Chaos Mesh kind through the Chaos Mesh controller."""
    return INJECTION_PATHS.get(kind, "chaos-mesh")


def is_provenance_event(event: KubeEvent, chaos_name: str) -> bool:
    """True for an event about a chaos object (by kind, name or reporting component)."""
    if event.object_kind in CHAOS_KINDS:
        return True
    if chaos_name and event.object_name == chaos_name:
        return True
    return "chaos" in event.source.lower()


def leak_terms(*, incident_id: str, chaos_name: str, fault_type: str, namespace: str) -> list[str]:
    """Strings that must not appear in method-visible observations of this incident.

    r2act's objects are known by what r2act puts on them (``R2ACT_MARKS``: its label and
    annotation keys, the way it names its chaos objects), not by the word 'r2act': a kind
    cluster called ``r2act`` names its nodes ``r2act-worker``, ``r2act-worker2``, and every
    pod's scheduling event and the chart's collector agents (a DaemonSet pod per node, whose
    log records carry their node's name) would hit it in every phase of every incident. A
    mark the namespace itself contains is left out (a target may be called ``r2act-flag-x``;
    its name in pod events is not a leak).
    """
    terms = ["chaos", fault_type, fault_type.replace("_", "-"), incident_id]
    if chaos_name:
        terms.append(chaos_name)
    terms += [mark for mark in R2ACT_MARKS if mark not in namespace.lower()]
    return list(dict.fromkeys(t for t in terms if t))


R2ACT_MARKS: Final = ("r2act.io/", *OWN_NAME_PREFIXES)
"""What marks an object r2act made: the ``r2act.io/`` prefix of its labels and annotations
(every object r2act creates or patches carries one beside ``app.kubernetes.io/managed-by``)
and the prefixes of its chaos objects' names (``campaigns.chaos.chaos_name``)."""


def leak_regex(terms: list[str]) -> str:
    """One case-insensitive RE2/Python pattern matching any of ``terms``."""
    return "(?i)" + "|".join(re.escape(t) for t in terms)
