"""Fixtures of the collector tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from collector_helpers import write_campaign


@pytest.fixture
def tiny_campaign(tmp_path: Path) -> Path:
    """Two incidents on cartservice."""
    return write_campaign(tmp_path)
