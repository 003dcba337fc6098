"""Datasets made by the real pipeline (campaign -> collect -> audit -> build), once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from agent_support import REPO, make_dataset, sample_manifest


@pytest.fixture(scope="session")
def smoke_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The smoke campaign's dataset (12 incidents on the simulator)."""
    return make_dataset(tmp_path_factory.mktemp("smoke"), REPO / "campaigns" / "smoke.yaml")


@pytest.fixture(scope="session")
def sample_dataset(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One incident per realizable cell and intensity of the paper campaign (gate-admitted)."""
    root = tmp_path_factory.mktemp("sample")
    return make_dataset(root, sample_manifest(root / "sample.yaml"))
