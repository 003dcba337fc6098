"""The campaign's ``noise`` key: default realistic, three levels, refused on a real cluster."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import load_manifest
from r2act.errors import ManifestError
from r2act.schema import NoiseLevel

from .conftest import BASE_MANIFEST

KUBE = BASE_MANIFEST.replace(
    "  kind: sim\n  seed: 1", "  kind: kubernetes\n  context: kind-r2act\n  namespace: shop"
)


def test_noise_defaults_to_realistic(write_manifest: Callable[[str], Path]) -> None:
    assert load_manifest(write_manifest(BASE_MANIFEST)).noise is NoiseLevel.REALISTIC


@pytest.mark.parametrize("level", ["none", "realistic", "heavy"])
def test_each_level_is_read(write_manifest: Callable[[str], Path], level: str) -> None:
    manifest = load_manifest(write_manifest(BASE_MANIFEST + f"noise: {level}\n"))
    assert manifest.noise == NoiseLevel(level)


def test_an_unknown_level_names_the_field_and_the_levels(
    write_manifest: Callable[[str], Path],
) -> None:
    with pytest.raises(ManifestError) as caught:
        load_manifest(write_manifest(BASE_MANIFEST + "noise: loud\n"))
    message = str(caught.value)
    assert "noise" in message and "realistic" in message


def test_a_real_cluster_accepts_only_its_own_background(
    write_manifest: Callable[[str], Path],
) -> None:
    assert load_manifest(write_manifest(KUBE)).noise is NoiseLevel.REALISTIC
    with pytest.raises(ManifestError) as caught:
        load_manifest(write_manifest(KUBE + "noise: none\n"))
    assert "simulated target" in str(caught.value) and "noise" in str(caught.value)
