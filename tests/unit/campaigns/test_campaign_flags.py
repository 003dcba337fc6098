"""feature_flag cells: the manifest's flag is checked against the catalogue, the planner's
choice is seeded and deterministic, and the rendered FlagFault is what the adapter parses."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import load_manifest, plan_incidents
from r2act.campaigns.chaos import render_chaos
from r2act.cluster import flag_fault_object
from r2act.errors import ManifestError
from r2act.schema import FaultType, Intensity, PlannedIncident
from r2act.systems import System

SHOP = """\
name: flags
system: astronomyshop
target:
  kind: sim
  seed: 1
services: [ad, payment]
faults:
  - type: feature_flag
repetitions: 12
seed: 7
phases:
  pre_s: 10
  during_s: 20
  post_s: 10
"""
"""A valid feature-flag campaign on the Astronomy Shop; cases add one line each."""


def _plan(write_manifest: Callable[[str], Path], text: str = SHOP) -> list[PlannedIncident]:
    return plan_incidents(load_manifest(write_manifest(text)))


def _error(write_manifest: Callable[[str], Path], text: str) -> str:
    path = write_manifest(text)
    with pytest.raises(ManifestError) as raised:
        load_manifest(path)
    message = str(raised.value)
    assert "\n" not in message and message.startswith(f"{path}:"), message
    assert re.search(r"\(.+\)$", message), f"no fix in parentheses: {message}"
    return message


def _cell(flag: str, service: str = "ad", fault: str = "feature_flag") -> str:
    return (
        SHOP + f"cells:\n  - {{service: {service}, fault: {fault}, flag: {flag}, repetitions: 2}}\n"
    )


@pytest.mark.usefixtures("flag_shop")
def test_an_unknown_flag_is_refused_naming_the_known_ones(
    write_manifest: Callable[[str], Path],
) -> None:
    message = _error(write_manifest, _cell("adFailur"))
    assert ":16: cells[0].flag: astronomyshop 2.2.0 has no flag 'adFailur'" in message
    assert "use one of ad's realizable flags: adManualGc, adHighCpu, adFailure" in message


@pytest.mark.usefixtures("flag_shop")
def test_an_unrealizable_flag_is_refused_with_its_verdict(
    write_manifest: Callable[[str], Path], flag_shop: System
) -> None:
    text = _cell("failedReadinessProbe", service="cart").replace("[ad, payment]", "[cart]")
    message = _error(write_manifest, text)
    verdict = flag_shop.flags["failedReadinessProbe"].verdict
    assert "cells[0].flag: flag 'failedReadinessProbe' is not realizable: " in message
    assert verdict[:50] in message
    assert "name a realizable flag of cart (cartFailure) or omit flag" in message


@pytest.mark.usefixtures("flag_shop")
def test_a_flag_of_another_service_is_refused(write_manifest: Callable[[str], Path]) -> None:
    message = _error(write_manifest, _cell("paymentFailure"))
    assert "flag 'paymentFailure' is a fault of payment (read by payment), not of 'ad'" in message
    assert "name a flag of ad (adManualGc, adHighCpu, adFailure)" in message


@pytest.mark.usefixtures("flag_shop")
def test_a_flag_on_a_chaos_mesh_cell_is_refused(write_manifest: Callable[[str], Path]) -> None:
    text = SHOP.replace(
        "  - type: feature_flag\n", "  - type: feature_flag\n  - type: pod_failure\n"
    )
    text += "cells:\n  - {service: ad, fault: pod_failure, flag: adFailure, repetitions: 1}\n"
    message = _error(write_manifest, text)
    assert "cells[0].flag: flag 'adFailure' on a pod_failure cell" in message


@pytest.mark.usefixtures("flag_shop")
def test_a_service_without_realizable_flags_is_refused(
    write_manifest: Callable[[str], Path],
) -> None:
    message = _error(write_manifest, SHOP.replace("[ad, payment]", "[ad, currency]"))
    assert "services[1]: no realizable feature flag of astronomyshop is a fault of" in message
    assert "product-reviews, product-catalog, recommendation, ad, cart, payment" in message


def test_a_system_without_flags_refuses_feature_flag(
    write_manifest: Callable[[str], Path],
) -> None:
    text = SHOP.replace("system: astronomyshop", "system: onlineboutique").replace(
        "[ad, payment]", "[cartservice]"
    )
    message = _error(write_manifest, text)
    assert ":8: faults[0].type: onlineboutique has no feature flags" in message


@pytest.mark.usefixtures("flag_shop")
def test_the_planner_draws_among_the_services_realizable_flags_deterministically(
    write_manifest: Callable[[str], Path], flag_shop: System
) -> None:
    first = _plan(write_manifest)
    again = _plan(write_manifest)
    assert [i.fault.parameters for i in first] == [i.fault.parameters for i in again]
    drawn: dict[str, Counter[str]] = {"ad": Counter(), "payment": Counter()}
    for incident in first:
        flag = flag_shop.flags[str(incident.fault.parameters["flag"])]
        assert flag.realizable and flag.service == incident.service
        assert incident.fault.parameters["variant"] == flag.variant(incident.fault.intensity).name
        drawn[incident.service][flag.key] += 1
    assert set(drawn["ad"]) == {"adManualGc", "adHighCpu", "adFailure"}  # 24 draws, 3 flags
    assert set(drawn["payment"]) == {"paymentFailure"}
    reseeded = _plan(write_manifest, SHOP.replace("seed: 7", "seed: 8"))
    assert [i.id for i in reseeded] == [i.id for i in first]
    assert [i.fault.parameters for i in reseeded] != [i.fault.parameters for i in first]


@pytest.mark.usefixtures("flag_shop")
def test_the_intensity_picks_the_flags_variant(write_manifest: Callable[[str], Path]) -> None:
    variants = {
        i.fault.intensity: i.fault.parameters["variant"]
        for i in _plan(write_manifest)
        if i.service == "payment"
    }
    assert variants == {Intensity.MODERATE: "50%", Intensity.SEVERE: "100%"}


@pytest.mark.usefixtures("flag_shop")
def test_a_named_flag_is_every_incidents_and_an_intensity_cell_wins(
    write_manifest: Callable[[str], Path],
) -> None:
    text = _cell("adHighCpu") + (
        "  - {service: ad, fault: feature_flag, intensity: severe, flag: adFailure, "
        "repetitions: 3}\n"
    )
    ad = [i for i in _plan(write_manifest, text) if i.service == "ad"]
    flags = {(i.fault.intensity, i.fault.parameters["flag"]) for i in ad}
    assert flags == {(Intensity.MODERATE, "adHighCpu"), (Intensity.SEVERE, "adFailure")}
    assert Counter(i.fault.intensity for i in ad) == {Intensity.MODERATE: 2, Intensity.SEVERE: 3}


@pytest.mark.usefixtures("flag_shop")
def test_the_rendered_flagfault_is_what_the_adapter_parses(
    write_manifest: Callable[[str], Path], flag_shop: System
) -> None:
    incident = next(i for i in _plan(write_manifest) if i.service == "payment")
    assert incident.fault.type == FaultType.FEATURE_FLAG
    obj = render_chaos(incident, "shop", flag_shop.topology)
    assert obj["kind"] == "FlagFault" and obj["apiVersion"] == "r2act.io/v1alpha1"
    parsed = flag_fault_object.parse(obj)
    assert parsed.change == flag_fault_object.FlagChange(
        flag="paymentFailure",
        variant="50%",
        config_map="flagd-config",
        key="demo.flagd.json",
        deployment="flagd",
    )
    assert parsed.incident_id == incident.id
    assert obj["metadata"]["name"].startswith("r2act-flag-")
    assert obj["spec"]["duration"] == f"{incident.fault.duration_s}s"


@pytest.mark.usefixtures("flag_shop")
def test_the_campaigns_flagfault_is_the_cluster_layers_rendering_of_the_fault(
    write_manifest: Callable[[str], Path], flag_shop: System
) -> None:
    store = flag_shop.flag_store
    assert store is not None
    for incident in _plan(write_manifest):
        obj = render_chaos(incident, "shop", flag_shop.topology)
        change = flag_fault_object.change_of(incident.fault, store)
        rendered = flag_fault_object.render(obj["metadata"]["name"], "shop", change)
        assert {**rendered["spec"], "duration": obj["spec"]["duration"]} == {
            **{k: obj["spec"][k] for k in ("flag", "variant", "duration")},
            "configMap": "flagd-config",
            "key": "demo.flagd.json",
            "deployment": "flagd",
        }
        assert flag_fault_object.parse(rendered).change == flag_fault_object.parse(obj).change


def test_a_chaos_mesh_fault_is_no_flag_change() -> None:
    from r2act.errors import PermanentClusterError
    from r2act.schema import FaultSpec
    from r2act.systems.flags import FlagStore

    fault = FaultSpec(
        type=FaultType.POD_FAILURE, intensity=Intensity.SEVERE, service="ad", duration_s=10
    )
    store = FlagStore(config_map="flags", key="flags.json", deployment="flag-service")
    with pytest.raises(PermanentClusterError, match="pod_failure fault is no FlagFault"):
        flag_fault_object.change_of(fault, store)
