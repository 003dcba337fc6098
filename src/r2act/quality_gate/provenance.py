"""What a method may see versus what only tells how the incident was made.

Chaos Mesh objects, their status and every event about them are provenance: they name the
fault. ``is_provenance_event`` draws that line for Kubernetes events; ``leak_terms`` lists
the strings whose appearance anywhere in method-visible data would hand a method the
answer (the chaos object name, the incident id, the fault-type label, the words 'chaos' and
'r2act'). Both the gate (to refuse an incident) and the dataset builder (to route events)
use these, so the two can never disagree.
"""

from __future__ import annotations

import re
from typing import Final

from r2act.schema import KubeEvent

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
    }
)
"""Kinds whose events are provenance (the chaos-mesh.org API group, and r2act's ConfigFault;
the rollout a ConfigFault causes is the Deployment's, which operators see, so not these)."""


def is_provenance_event(event: KubeEvent, chaos_name: str) -> bool:
    """True for an event about a chaos object (by kind, name or reporting component)."""
    if event.object_kind in CHAOS_KINDS:
        return True
    if chaos_name and event.object_name == chaos_name:
        return True
    return "chaos" in event.source.lower()


def leak_terms(*, incident_id: str, chaos_name: str, fault_type: str, namespace: str) -> list[str]:
    """Strings that must not appear in method-visible observations of this incident.

    'r2act' is left out when the namespace itself contains it (a kubernetes target may be
    called ``r2act-demo``; its name in pod events is not a leak).
    """
    terms = ["chaos", fault_type, fault_type.replace("_", "-"), incident_id]
    if chaos_name:
        terms.append(chaos_name)
    if "r2act" not in namespace.lower():
        terms.append("r2act")
    return list(dict.fromkeys(t for t in terms if t))


def leak_regex(terms: list[str]) -> str:
    """One case-insensitive RE2/Python pattern matching any of ``terms``."""
    return "(?i)" + "|".join(re.escape(t) for t in terms)
