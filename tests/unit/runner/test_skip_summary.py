"""The end of a test run names the groups that skipped and how to enable each.

Runs a tiny suite under the project's own conftest (pytester), with no kind cluster and no
reference files, as on a plain clone.
"""

from __future__ import annotations

from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parents[2] / "conftest.py"

SUITE = """
import pytest

@pytest.mark.e2e
def test_cluster_one():
    pass

@pytest.mark.e2e
def test_cluster_two():
    pass

def test_needs_reference(reference_dir):
    pass

def test_skips_for_its_own_reason():
    pytest.skip("no GPU here")

def test_runs():
    pass
"""


@pytest.fixture
def plain_clone(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    monkeypatch.delenv("R2ACT_REFERENCE_DIR", raising=False)
    pytester.makeconftest(CONFTEST.read_text())
    pytester.makeini(
        "[pytest]\nasyncio_default_fixture_loop_scope = function\n"
        "markers =\n    e2e: needs a kind cluster\n"
    )
    pytester.makepyfile(test_suite=SUITE)
    return pytester


def _section(lines: list[str]) -> list[str]:
    start = next(i for i, line in enumerate(lines) if "skipped groups" in line)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("=")), len(lines))
    return [line for line in lines[start + 1 : end] if line.strip()]


def test_a_plain_clone_run_ends_with_each_skipped_group_and_how_to_enable_it(
    plain_clone: pytest.Pytester,
) -> None:
    result = plain_clone.runpytest()
    result.assert_outcomes(passed=1, skipped=4)
    section = _section(result.outlines)
    assert section == [
        "e2e (kind cluster): 2 tests skipped; to run them: create the cluster with "
        "deploy/kind/up.sh, then run ./scripts/test --with-e2e",
        "upstream reference files: 1 test skipped; to run them: "
        "R2ACT_REFERENCE_DIR=/path/to/reference ./scripts/test (a directory holding "
        "online-boutique/kubernetes-manifests.yaml of v0.10.6 and chaos-mesh-crds/ of 2.8.3)",
        "no GPU here: 1 test skipped",
    ]
    # The section closes the report: only pytest's own short summary and tallies follow.
    assert result.outlines[-1].strip("= ").startswith("1 passed, 4 skipped")


def test_each_group_leaves_the_section_once_enabled(
    plain_clone: pytest.Pytester, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = plain_clone.runpytest("--with-e2e", "-k", "not own_reason")
    result.assert_outcomes(passed=3, skipped=1)
    assert [line.split(":")[0] for line in _section(result.outlines)] == [
        "upstream reference files"
    ]
    reference = tmp_path / "reference"
    reference.mkdir()
    monkeypatch.setenv("R2ACT_REFERENCE_DIR", str(reference))
    result = plain_clone.runpytest("--with-e2e", "-k", "not own_reason")
    result.assert_outcomes(passed=4)
    assert not any("skipped groups" in line for line in result.outlines)
