"""``r2act dataset export --format hf-public`` (issue 27 item 25): answers held back.

The copy must hold every method-visible file byte for byte, nothing of ``answers/``, no
incident id anywhere (they name the root cause), a card whose configs all load with the
real ``datasets`` library, Croissant metadata without the answer files, and a SHA256SUMS
that checks the copy.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from r2act.datasets.checksums import read_sums
from r2act.datasets.tables import read_records

datasets = pytest.importorskip("datasets")


def _export(dataset: Path, out: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "r2act",
            "dataset",
            "export",
            str(dataset),
            "--format",
            "hf-public",
            "--out",
            str(out),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_public_copy_holds_back_every_answer(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = tmp_path / "public"
    done = _export(built, out)
    assert done.returncode == 0, done.stderr
    assert not (out / "answers").exists()
    original = read_sums(built)
    copied = read_sums(out)
    assert set(copied) == {n for n in original if not n.startswith("answers/")}
    for name, digest in copied.items():  # SHA256SUMS checks the copy
        assert hashlib.sha256((out / name).read_bytes()).hexdigest() == digest, name
        if name not in {"README.md", "croissant.json"}:
            assert digest == original[name], name  # method-visible files byte for byte
    ids = {r.incident_id for r in read_records(built / "answers" / "incidents.parquet")}
    for path in out.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not [i for i in ids if i.encode() in data], path
    croissant = json.loads((out / "croissant.json").read_text())
    assert not [d for d in croissant["distribution"] if "answers" in d["contentUrl"]]
    assert {r["@id"] for r in croissant["recordSet"]} >= {"cases", "logs", "metrics"}
    assert not [r for r in croissant["recordSet"] if r["@id"].startswith("answers")]
    card = (out / "README.md").read_text()
    header = yaml.safe_load(card.split("---\n")[1])
    names = {c["config_name"] for c in header["configs"]}
    assert "cases" in names and not [n for n in names if n.startswith("answers")]
    assert "## Answers held back" in card

    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    loaded = datasets.load_dataset(str(out), "cases", cache_dir=str(tmp_path / "cache"))
    assert loaded["test"].num_rows == len(ids)

    again = _export(built, out)
    assert again.returncode == 2 and "not empty" in again.stderr


def test_public_copy_refuses_a_dataset_that_fails_its_checksums(
    built: Path, tmp_path: Path
) -> None:
    copy = Path(shutil.copytree(built, tmp_path / "dataset"))
    with (copy / "cases.parquet").open("ab") as handle:
        handle.write(b"x")
    done = _export(copy, tmp_path / "public")
    assert done.returncode == 2 and "does not match SHA256SUMS" in done.stderr
    assert "Traceback" not in done.stderr
    assert not (tmp_path / "public").exists()
