"""Small manifests for campaign tests, written to tmp files so errors can name lines."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

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
