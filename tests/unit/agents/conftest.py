"""Datasets made by the real pipeline (campaign -> collect -> audit -> build), once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_support import REPO, SAMPLE, make_dataset


@pytest.fixture(scope="session")
def smoke_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke campaign's dataset (12 incidents on the simulator)."""
    return make_dataset(tmp_path_factory.mktemp("smoke"), REPO / "campaigns" / "smoke.yaml")


@pytest.fixture(scope="session")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Every service x fault x intensity of the paper's design once (what the gate admits)."""
    root = tmp_path_factory.mktemp("sample")
    manifest = root / "sample.yaml"
    manifest.write_text(SAMPLE, encoding="utf-8")
    return make_dataset(root, manifest)
