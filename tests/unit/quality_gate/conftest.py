"""Fixtures for quality-gate tests: a tmp run directory and the planned incidents."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from gate_rawfactory import planned

from r2act.schema import PlannedIncident


@pytest.fixture(scope="session")
def incidents(tmp_path_factory: pytest.TempPathFactory) -> dict[str, PlannedIncident]:
    """The gate test campaign's incidents by id."""
    return {i.id: i for i in planned(tmp_path_factory.mktemp("manifest"))}
