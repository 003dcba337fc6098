"""``validate(quick=True)``: what scoring needs is still checked; observations are not re-read."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from r2act.datasets import validate


def _codes(root: Path, *, quick: bool) -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for problem in validate(root, quick=quick):
        found.setdefault(problem.code, set()).add(problem.where)
    return found


def test_quick_validation_of_a_clean_dataset_never_opens_an_observation_table_or_renders(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = sys.modules["r2act.datasets.validation"]
    read_table = module.pq.read_table
    big = ("logs.parquet", "events.parquet", "metrics.parquet")

    def guarded(path: object, *args: object, **kwargs: object) -> object:
        if str(path).endswith(big):
            raise AssertionError("quick validation re-read observations")
        return read_table(path, *args, **kwargs)

    def forbidden(*_args: object, **_kwargs: object) -> object:
        raise AssertionError("quick validation re-read observations or figures")

    monkeypatch.setattr(module.pq, "read_table", guarded)
    monkeypatch.setattr(module.pq, "read_schema", forbidden)
    monkeypatch.setattr(module.figures, "render", forbidden)
    assert validate(built, quick=True) == []


def test_quick_validation_still_catches_a_tampered_observation_file(dataset_copy: Path) -> None:
    path = dataset_copy / "observations" / "logs.parquet"
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert "observations/logs.parquet" in _codes(dataset_copy, quick=True)["CHECKSUM_MISMATCH"]


def test_quick_validation_skips_only_the_observation_and_card_checks(dataset_copy: Path) -> None:
    path = dataset_copy / "answers" / "incidents.parquet"
    pq.write_table(pq.read_table(path).slice(1), path)
    full, quick = _codes(dataset_copy, quick=False), _codes(dataset_copy, quick=True)
    assert {"ORPHAN_OBSERVATIONS", "CARD_MISMATCH"} <= full.keys()
    assert {"CHECKSUM_MISMATCH", "FOLDS_NOT_PARTITION"} <= quick.keys()
    # the card's label composition is cheap and guards scoring (issue 13 item 10): kept
    assert "CARD_MISMATCH" in quick
    assert quick["ORPHAN_OBSERVATIONS"] == {"observations/state.parquet"}  # cheap: checked


def test_validation_hashes_each_file_once_and_still_checks_both_digest_lists(
    dataset_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """SHA256SUMS and Croissant list the same files: each is read once per validation (the
    MCP server's start-up pays for it), and each list is still compared on its own."""
    module = sys.modules["r2act.datasets.validation"]
    hashed: list[Path] = []
    real = module.sha256_file

    def counting(path: Path) -> str:
        hashed.append(path)
        return str(real(path))

    monkeypatch.setattr(module, "sha256_file", counting)
    assert validate(dataset_copy, quick=True) == []
    assert hashed and len(hashed) == len(set(hashed))
    croissant = dataset_copy / "croissant.json"
    text = croissant.read_text("utf-8")
    digest = real(dataset_copy / "observations" / "logs.parquet")
    croissant.write_text(text.replace(digest, "0" * 64), "utf-8")
    codes = _codes(dataset_copy, quick=True)
    assert "CROISSANT_MISMATCH" in codes  # the Croissant list is checked, not assumed equal
    assert codes["CHECKSUM_MISMATCH"] == {"croissant.json"}  # its own bytes changed
