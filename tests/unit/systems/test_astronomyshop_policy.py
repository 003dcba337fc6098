"""The Astronomy Shop's flag cells follow its flag catalogue, and its recovery rules cover
every cell: a flag is reverted (the flag as the scope), the Chaos Mesh cells as Online
Boutique's wherever the mechanics are the same."""

from __future__ import annotations

from r2act.schema import FaultType, Operation
from r2act.schema.rules import ScopeKind
from r2act.systems import System
from r2act.systems.astronomyshop.catalogue import CELLS, FLAG_SERVICES
from r2act.systems.astronomyshop.flags import FLAGS, FLAGS_2_2_0
from r2act.systems.astronomyshop.policy import MECHANICS_V2, MECHANICS_V3, RULES
from r2act.systems.onlineboutique.policy import MECHANICS_V3 as BOUTIQUE_V3


def test_the_flag_mapping_is_the_versions_flags_in_file_order() -> None:
    assert list(FLAGS_2_2_0) == [f.key for f in FLAGS["2.2.0"]]
    assert all(FLAGS_2_2_0[f.key] is f for f in FLAGS["2.2.0"])


def test_one_flag_cell_per_service_a_realizable_flag_is_a_fault_of() -> None:
    cells = [c.service for c in CELLS if c.fault_type == FaultType.FEATURE_FLAG]
    owners = {f.service for f in FLAGS_2_2_0.values() if f.realizable}
    assert cells == list(FLAG_SERVICES) and set(cells) == owners
    assert len(cells) == len(set(cells))
    unrealizable_only = {f.service for f in FLAGS_2_2_0.values()} - owners
    assert unrealizable_only == {"llm", "fraud-detection", "load-generator", "frontend"}


def test_the_systems_flag_helpers_read_the_catalogue(flag_shop: System) -> None:
    assert [f.key for f in flag_shop.realizable_flags("ad")] == [
        "adManualGc",
        "adHighCpu",
        "adFailure",
    ]
    assert [f.key for f in flag_shop.realizable_flags("cart")] == ["cartFailure"]
    assert flag_shop.realizable_flags("currency") == ()
    assert flag_shop.flags_read_by("cart") == ("cartFailure", "failedReadinessProbe")
    assert flag_shop.flag_services() == FLAG_SERVICES
    assert FaultType.FEATURE_FLAG in flag_shop.fault_types
    assert flag_shop.fault_families["FlagFault"] == (FaultType.FEATURE_FLAG,)


def test_a_flag_is_reverted_with_its_key_as_scope_and_never_restarted() -> None:
    for table in (MECHANICS_V2, MECHANICS_V3):
        (rule,) = table[FaultType.FEATURE_FLAG]
        assert (rule.operation, rule.scope) == (Operation.ROLLBACK_CONFIG, ScopeKind.FLAG)


def test_every_cell_has_rules_and_the_shared_mechanics_are_online_boutiques() -> None:
    for name in ("r2act-mechanics/3", "r2act-mechanics/2"):
        table = RULES.table(name)
        assert table is not None
        assert {c.fault_type for c in CELLS} <= set(table), name
    for fault, rules in BOUTIQUE_V3.items():
        assert MECHANICS_V3[fault] == rules, fault
