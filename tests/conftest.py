"""Shared test options and fixtures.

``--with-e2e`` enables tests that need a kind cluster made by ``deploy/kind/up.sh``.
``reference_dir`` is ``../shared/reference`` (upstream Chaos Mesh CRDs and Online Boutique
manifests); tests that need it skip with a reason when it is absent.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--with-e2e",
        action="store_true",
        default=False,
        help="run end-to-end tests against a kind cluster made by deploy/kind/up.sh",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--with-e2e"):
        return
    skip = pytest.mark.skip(reason="needs a kind cluster; run with --with-e2e")
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)


def _reference_dir() -> Path | None:
    candidates = [os.environ.get("R2ACT_REFERENCE_DIR"), str(REPO.parent / "shared" / "reference")]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """The upstream reference artifacts; skips the test when they are not available."""
    found = _reference_dir()
    if found is None:
        pytest.skip("../shared/reference is not available (set R2ACT_REFERENCE_DIR)")
    return found


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root."""
    return REPO
