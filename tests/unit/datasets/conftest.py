"""A small audited run and its built dataset, made once per session from synthetic raw data."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "quality_gate"))

from gate_rawfactory import RawSpec, planned, write_raw_incident

from r2act.datasets import build_dataset
from r2act.quality_gate import run_audit

BROKEN = {
    0: RawSpec(injection="failed"),
    5: RawSpec(missing_phase="during"),
    9: RawSpec(effect=False),
}


@pytest.fixture(scope="session")
def audited_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with 16 raw incidents (13 main, 3 in the audit trail), audited."""
    run = tmp_path_factory.mktemp("run")
    for n, incident in enumerate(sorted(planned(run), key=lambda i: i.id)[:16]):
        write_raw_incident(run, incident, BROKEN.get(n, RawSpec(lines_per_service=5 + n)))
    run_audit(run, workers=1)
    return run


@pytest.fixture(scope="session")
def built(audited_run: Path) -> Path:
    """The dataset built from ``audited_run`` (read-only: copy it before tampering)."""
    return build_dataset(audited_run, audited_run / "dataset", workers=1).out


@pytest.fixture
def dataset_copy(built: Path, tmp_path: Path) -> Path:
    """A private copy of the built dataset that a test may damage."""
    return Path(shutil.copytree(built, tmp_path / "dataset"))
