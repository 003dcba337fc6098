"""Small manifests for campaign tests, written to tmp files so errors can name lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

BASE_MANIFEST = """\
name: tiny
system: onlineboutique
target:
  kind: sim
  seed: 1
services: [cartservice, paymentservice]
faults:
  - type: cpu_saturation
    parameters:
      severe: {load: 90}
  - type: network_delay
    intensities: [moderate]
repetitions: 2
phases:
  pre_s: 10
  during_s: 20
  post_s: 10
"""
"""A valid manifest; each malformed case edits one line of it."""


@pytest.fixture
def write_manifest(tmp_path: Path) -> Callable[[str], Path]:
    """Write manifest text to a fresh file and return its path."""
    counter = iter(range(10**6))

    def write(text: str) -> Path:
        path = tmp_path / f"manifest{next(counter)}.yaml"
        path.write_text(text, encoding="utf-8")
        return path

    return write


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
