"""The report tests share one demo run and its report, made once per session."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from report_support import DemoRun, make_demo_run


@pytest.fixture(scope="session")
def demo(tmp_path_factory: pytest.TempPathFactory) -> DemoRun:
    """The smoke run with baselines, a replay, trajectories, hostile inputs, and its report."""
    return make_demo_run(tmp_path_factory.mktemp("report"))
