"""Rendered injecting objects: Chaos Mesh ones valid against the real CRDs, ConfigFaults per
the contract, all safely named and labelled, and no fault definition with two labels."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from r2act.campaigns import incident_label, load_manifest, plan_incidents, render_chaos
from r2act.campaigns.identifiability import conflicts, definition_key, oracle_rca_s
from r2act.schema import FaultType, Intensity, PlannedIncident
from r2act.systems import ONLINE_BOUTIQUE, get_system

_OB_FAULTS = get_system("onlineboutique").fault_types

REPO = Path(__file__).resolve().parents[3]
CAMPAIGNS = ["smoke.yaml", "r2act-302.yaml", "kind-demo.yaml"]
DNS_1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")


@functools.cache
def _incidents(name: str) -> list[PlannedIncident]:
    return plan_incidents(load_manifest(REPO / "campaigns" / name))


def _all_objects() -> list[dict[str, Any]]:
    return [
        render_chaos(incident, "default", ONLINE_BOUTIQUE)
        for name in CAMPAIGNS
        for incident in _incidents(name)
    ]


def test_every_rendered_chaos_mesh_object_validates_against_its_crd(
    crd_validators: dict[str, jsonschema.Draft7Validator],
) -> None:
    objects = _all_objects()
    assert len(objects) > 302
    chaos = [obj for obj in objects if obj["kind"] != "ConfigFault"]
    assert {obj["kind"] for obj in chaos} == {
        "PodChaos",
        "StressChaos",
        "NetworkChaos",
        "HTTPChaos",
    }
    for obj in chaos:
        errors = list(crd_validators[obj["kind"]].iter_errors(obj))
        assert not errors, (obj["metadata"]["name"], [e.message for e in errors])


def test_config_faults_follow_the_contract_format() -> None:
    configs = [obj for obj in _all_objects() if obj["kind"] == "ConfigFault"]
    assert configs
    for obj in configs:
        assert obj["apiVersion"] == "r2act.io/v1alpha1"
        spec = obj["spec"]
        assert set(spec) in (
            {"deployment", "container", "env", "duration"},
            {"deployment", "container", "resources", "duration"},
        )
        assert spec["container"] == ONLINE_BOUTIQUE.deployment(spec["deployment"]).main.name
        assert spec["duration"] in {"60s", "120s"}  # smoke, r2act-302


@pytest.mark.parametrize("campaign", CAMPAIGNS)
def test_no_two_incidents_with_one_fault_definition_carry_different_root_causes(
    campaign: str,
) -> None:
    rows = [
        (definition_key(render_chaos(i, "default", ONLINE_BOUTIQUE)), i.service)
        for i in _incidents(campaign)
    ]
    assert conflicts(rows) == {}
    assert oracle_rca_s(rows) == 1.0


def test_the_definition_oracle_scores_mixed_groups_by_their_majority() -> None:
    rows = [("a", "cart"), ("a", "cart"), ("a", "payment"), ("b", "frontend")]
    assert conflicts(rows) == {"a": ["cart", "payment"]}
    assert oracle_rca_s(rows) == 0.75


def test_crd_check_rejects_a_misspelt_field(
    crd_validators: dict[str, jsonschema.Draft7Validator],
) -> None:
    cpu = next(i for i in _incidents("smoke.yaml") if i.fault.type == FaultType.CPU_SATURATION)
    obj = render_chaos(cpu, "default", ONLINE_BOUTIQUE)
    obj["spec"]["stressors"]["cpu"]["worker"] = 1
    assert list(crd_validators["StressChaos"].iter_errors(obj))


def test_the_campaigns_cover_every_fault_type_and_intensity() -> None:
    seen = {(i.fault.type, i.fault.intensity) for name in CAMPAIGNS for i in _incidents(name)}
    assert seen == {(f, i) for f in _OB_FAULTS for i in Intensity}
    paper = {(i.fault.type, i.fault.intensity) for i in _incidents("r2act-302.yaml")}
    assert paper == seen
    http = {FaultType.HTTP_ERROR, FaultType.HTTP_ABORT}
    assert {i.service for i in _incidents("r2act-302.yaml") if i.fault.type in http} == {"frontend"}


def test_names_are_unique_dns_labels_of_at_most_57_chars() -> None:
    names = [obj["metadata"]["name"] for obj in _all_objects()]
    assert len(set(names)) == len({i.id for name in CAMPAIGNS for i in _incidents(name)})
    for name in names:
        assert len(name) <= 57 and DNS_1123.fullmatch(name), name


def test_labels_fit_kubernetes_and_annotations_keep_the_full_id() -> None:
    for name in CAMPAIGNS:
        for incident in _incidents(name):
            meta = render_chaos(incident, "shop", ONLINE_BOUTIQUE)["metadata"]
            assert meta["namespace"] == "shop"
            assert meta["labels"]["app.kubernetes.io/managed-by"] == "r2act"
            label = meta["labels"]["r2act.io/incident"]
            assert len(label) <= 63 and LABEL_VALUE.fullmatch(label), label
            assert meta["annotations"]["r2act.io/incident-id"] == incident.id


def test_long_ids_get_a_hashed_label_that_stays_distinct() -> None:
    long_a = "onlineboutique_recommendationservice_memory_pressure_moderate_r01"
    long_b = "onlineboutique_recommendationservice_memory_pressure_moderate_r02"
    assert len(long_a) > 63
    assert incident_label(long_a) != incident_label(long_b)
    assert len(incident_label(long_a)) == 63
    assert incident_label("short_id") == "short_id"


def _first(fault: FaultType, intensity: Intensity) -> PlannedIncident:
    """The first such incident of r2act-302, else of smoke (HTTP faults), else any intensity."""
    candidates = [
        i
        for name in ("r2act-302.yaml", "smoke.yaml")
        for i in _incidents(name)
        if i.fault.type == fault
    ]
    return next((i for i in candidates if i.fault.intensity == intensity), candidates[0])


@pytest.mark.parametrize("intensity", list(Intensity))
@pytest.mark.parametrize("fault", list(_OB_FAULTS))
def test_spec_selects_the_right_pods_for_the_duration(
    fault: FaultType, intensity: Intensity
) -> None:
    incident = _first(fault, intensity)
    spec = render_chaos(incident, "default", ONLINE_BOUTIQUE)["spec"]
    assert spec["duration"] == f"{incident.fault.duration_s}s"
    if fault in {FaultType.DNS_FAULT, FaultType.DNS_RANDOM}:
        caller = incident.fault.parameters["caller"]
        assert isinstance(caller, str)
        assert caller in ONLINE_BOUTIQUE.address_holders(incident.service)
        assert spec["deployment"] == caller
        (variable,) = spec["env"]
        assert ONLINE_BOUTIQUE.deployment(caller).env[variable].startswith(incident.service)
        return
    if fault == FaultType.MEMORY_PRESSURE:
        assert spec["deployment"] == incident.service
        return
    assert spec["mode"] == "all"
    assert spec["selector"]["namespaces"] == ["default"]
    if fault in {FaultType.HTTP_ERROR, FaultType.HTTP_ABORT}:
        assert incident.service == "frontend"
        assert spec["selector"]["labelSelectors"] == {"app": "frontend"}
        assert spec["port"] == 8080 and spec["path"] not in {"*", "/*"}
    else:
        assert spec["selector"]["labelSelectors"] == {"app": incident.service}


@pytest.mark.parametrize(
    ("intensity", "expected"),
    [
        (Intensity.MODERATE, {"cpu": {"workers": 1, "load": 80}}),
        (Intensity.SEVERE, {"cpu": {"workers": 2, "load": 100}}),
    ],
)
def test_stress_intensities_follow_the_contract(
    intensity: Intensity, expected: dict[str, Any]
) -> None:
    spec = render_chaos(_first(FaultType.CPU_SATURATION, intensity), "default", ONLINE_BOUTIQUE)[
        "spec"
    ]
    assert spec["stressors"] == expected
    assert spec["containerNames"] == ["server"]


def test_memory_pressure_lowers_the_limit_below_the_request() -> None:
    def limit(intensity: Intensity) -> str:
        spec = render_chaos(
            _first(FaultType.MEMORY_PRESSURE, intensity), "default", ONLINE_BOUTIQUE
        )["spec"]
        assert spec["container"] == "server"
        return str(spec["resources"]["limits"]["memory"])

    # frontend: request 64Mi; moderate 70-85% of it, severe 55-68%, drawn per incident
    moderate, severe = limit(Intensity.MODERATE), limit(Intensity.SEVERE)
    assert 44 <= int(moderate.removesuffix("Mi")) <= 54
    assert 35 <= int(severe.removesuffix("Mi")) <= 43


def test_kind_specific_fields_follow_the_contract() -> None:
    def spec(fault: FaultType, intensity: Intensity) -> dict[str, Any]:
        return render_chaos(_first(fault, intensity), "default", ONLINE_BOUTIQUE)["spec"]

    assert spec(FaultType.POD_FAILURE, Intensity.SEVERE)["action"] == "pod-failure"
    assert spec(FaultType.NETWORK_DELAY, Intensity.SEVERE)["delay"] == {
        "latency": "1200ms",
        "jitter": "200ms",
        "correlation": "25",
    }
    assert spec(FaultType.NETWORK_DELAY, Intensity.MODERATE)["delay"]["latency"] == "200ms"
    assert spec(FaultType.HTTP_ERROR, Intensity.SEVERE)["replace"] == {"code": 503}
    assert spec(FaultType.HTTP_ERROR, Intensity.SEVERE)["target"] == "Response"
    abort = spec(FaultType.HTTP_ABORT, Intensity.MODERATE)
    assert (abort["target"], abort["abort"]) == ("Request", True)
    # cartservice is the first DNS cell: its primary caller is the frontend
    assert spec(FaultType.DNS_FAULT, Intensity.MODERATE)["env"] == {
        "CART_SERVICE_ADDR": "cartservice.invalid:7070"
    }
    (value,) = spec(FaultType.DNS_RANDOM, Intensity.MODERATE)["env"].values()
    host, port = value.split(":")
    assert port == "7070"
    assert all(0 <= int(octet) <= 254 for octet in host.split("."))
