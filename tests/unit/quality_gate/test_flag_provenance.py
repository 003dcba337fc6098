"""A FlagFault is provenance like every chaos object, and the path it took is recorded."""

from __future__ import annotations

from r2act.quality_gate.provenance import injection_path, is_provenance_event
from r2act.schema import CHAOS_KIND, FLAG_FAULT_INJECTION_PATH, FaultType, KubeEvent


def _event(kind: str, name: str, source: str = "r2act") -> KubeEvent:
    return KubeEvent.model_validate(
        {
            "ts": 1.0,
            "type": "Normal",
            "reason": "Applied",
            "object_kind": kind,
            "object_name": name,
            "message": "flag file changed",
            "source": source,
            "count": 1,
        }
    )


def test_an_event_about_a_flagfault_is_provenance() -> None:
    assert is_provenance_event(_event("FlagFault", "r2act-flag-0123456789"), "")
    assert not is_provenance_event(_event("Deployment", "flagd", "deployment-controller"), "")


def test_each_kind_says_the_path_it_took_into_the_cluster() -> None:
    flag = CHAOS_KIND[FaultType.FEATURE_FLAG]
    assert injection_path(flag) == FLAG_FAULT_INJECTION_PATH == "configmap+restart"
    assert injection_path(CHAOS_KIND[FaultType.DNS_FAULT]) == "deployment-patch"
    assert injection_path(CHAOS_KIND[FaultType.POD_FAILURE]) == "chaos-mesh"
