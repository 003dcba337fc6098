"""A baseline's fault-type label space is its system's: a fault type only another system
has (feature_flag) never enters Online Boutique's draws, whose order stays the paper's."""

from __future__ import annotations

from r2act.baselines.base import fault_types
from r2act.schema import FaultType
from r2act.systems import ONLINE_BOUTIQUE, System


def test_online_boutiques_label_space_is_the_papers_eight_in_schema_order() -> None:
    eight = [f for f in FaultType if f != FaultType.FEATURE_FLAG]
    assert list(fault_types(ONLINE_BOUTIQUE)) == eight


def test_a_system_with_flags_has_feature_flag_in_its_label_space(flag_shop: System) -> None:
    assert FaultType.FEATURE_FLAG in fault_types(flag_shop.topology)
    assert fault_types(flag_shop.topology)[-1] == FaultType.FEATURE_FLAG
