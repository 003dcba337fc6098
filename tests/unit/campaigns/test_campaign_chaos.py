"""Rendered Chaos Mesh objects: valid against the real CRDs, safely named and labelled."""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from r2act.campaigns import incident_label, load_manifest, plan_incidents, render_chaos
from r2act.schema import FaultType, Intensity, PlannedIncident
from r2act.systems import ONLINE_BOUTIQUE

REPO = Path(__file__).resolve().parents[3]
CAMPAIGNS = ["smoke.yaml", "r2act-302.yaml"]
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


def _structural(schema: Any) -> Any:
    """An OpenAPI v3 CRD schema as JSON Schema, closed the way the API server prunes.

    ``x-kubernetes-*`` keys are dropped; objects that list properties and neither allow
    additional ones nor preserve unknown fields get ``additionalProperties: false``, because
    the API server would silently drop a misspelt field and the fault would not happen."""
    if isinstance(schema, list):
        return [_structural(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _structural(v) for k, v in schema.items() if not k.startswith("x-kubernetes-")}
    preserve = schema.get("x-kubernetes-preserve-unknown-fields", False)
    if "properties" in schema and "additionalProperties" not in schema and not preserve:
        out["additionalProperties"] = False
    return out


@pytest.fixture(scope="module")
def crd_validators(reference_dir: Path) -> dict[str, jsonschema.Draft7Validator]:
    validators = {}
    for path in (reference_dir / "chaos-mesh-crds").glob("*.yaml"):
        crd = yaml.safe_load(path.read_text())
        version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1alpha1")
        schema = _structural(version["schema"]["openAPIV3Schema"])
        schema.pop("additionalProperties", None)  # apiVersion/kind/metadata live at the top
        validators[crd["spec"]["names"]["kind"]] = jsonschema.Draft7Validator(schema)
    return validators


def test_every_rendered_object_validates_against_its_crd(
    crd_validators: dict[str, jsonschema.Draft7Validator],
) -> None:
    objects = _all_objects()
    assert len(objects) > 302
    for obj in objects:
        errors = list(crd_validators[obj["kind"]].iter_errors(obj))
        assert not errors, (obj["metadata"]["name"], [e.message for e in errors])


def test_crd_check_rejects_a_misspelt_field(
    crd_validators: dict[str, jsonschema.Draft7Validator],
) -> None:
    obj = render_chaos(_incidents("smoke.yaml")[1], "default", ONLINE_BOUTIQUE)
    obj["spec"]["stressors"]["cpu"]["worker"] = 1
    assert list(crd_validators["StressChaos"].iter_errors(obj))


def test_both_campaigns_cover_every_fault_type_and_intensity() -> None:
    seen = {(i.fault.type, i.fault.intensity) for name in CAMPAIGNS for i in _incidents(name)}
    assert seen == {(f, i) for f in FaultType for i in Intensity}


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
    return next(
        i
        for i in _incidents("r2act-302.yaml")
        if i.fault.type == fault and i.fault.intensity == intensity
    )


@pytest.mark.parametrize("intensity", list(Intensity))
@pytest.mark.parametrize("fault", list(FaultType))
def test_spec_selects_the_right_pods_for_the_duration(
    fault: FaultType, intensity: Intensity
) -> None:
    incident = _first(fault, intensity)
    spec = render_chaos(incident, "default", ONLINE_BOUTIQUE)["spec"]
    assert spec["mode"] == "all"
    assert spec["duration"] == "120s"
    assert spec["selector"]["namespaces"] == ["default"]
    if fault in {FaultType.HTTP_ERROR, FaultType.HTTP_ABORT}:
        assert spec["selector"]["labelSelectors"] == {"app": "frontend"}
        assert spec["port"] == 8080 and spec["path"] not in {"*", "/*"}
    elif fault in {FaultType.DNS_FAULT, FaultType.DNS_RANDOM}:
        (expression,) = spec["selector"]["expressionSelectors"]
        assert expression["values"] == ONLINE_BOUTIQUE.callers(incident.service)
        assert spec["patterns"] == [incident.service, f"{incident.service}.*"]
    else:
        assert spec["selector"]["labelSelectors"] == {"app": incident.service}


@pytest.mark.parametrize(
    ("fault", "intensity", "expected"),
    [
        (FaultType.CPU_SATURATION, Intensity.MODERATE, {"cpu": {"workers": 1, "load": 80}}),
        (FaultType.CPU_SATURATION, Intensity.SEVERE, {"cpu": {"workers": 2, "load": 100}}),
        (FaultType.MEMORY_PRESSURE, Intensity.MODERATE, {"memory": {"workers": 1, "size": "24MB"}}),
        (FaultType.MEMORY_PRESSURE, Intensity.SEVERE, {"memory": {"workers": 1, "size": "160MB"}}),
    ],
)
def test_stress_intensities_follow_the_contract(
    fault: FaultType, intensity: Intensity, expected: dict[str, Any]
) -> None:
    spec = render_chaos(_first(fault, intensity), "default", ONLINE_BOUTIQUE)["spec"]
    assert spec["stressors"] == expected
    assert spec["containerNames"] == ["server"]


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
    assert spec(FaultType.HTTP_ERROR, Intensity.MODERATE)["replace"] == {"code": 500}
    assert spec(FaultType.HTTP_ERROR, Intensity.SEVERE)["target"] == "Response"
    abort = spec(FaultType.HTTP_ABORT, Intensity.SEVERE)
    assert (abort["target"], abort["abort"]) == ("Request", True)
    assert spec(FaultType.DNS_FAULT, Intensity.MODERATE)["action"] == "error"
    assert spec(FaultType.DNS_RANDOM, Intensity.MODERATE)["action"] == "random"
