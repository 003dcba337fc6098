"""Every config of the card loads with the real Hugging Face ``datasets`` library (issue 15 #1).

``datasets`` reads the card's YAML ``configs``, picks one builder per config from the file
format and casts every file to the first file's schema; a config that mixes formats or
columns fails. Every table is Parquet and its own config, so each must load with the rows
and columns the Parquet file holds.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

datasets = pytest.importorskip("datasets")


def _configs(root: Path) -> dict[str, str]:
    header = yaml.safe_load((root / "README.md").read_text().split("---\n")[1])
    return {c["config_name"]: c["data_files"][0]["path"] for c in header["configs"]}


def test_every_config_loads_with_load_dataset(
    built: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    copy = Path(shutil.copytree(built, tmp_path / "dataset"))  # the library writes no cache here
    configs = _configs(copy)
    assert {"cases", "logs", "events", "metrics", "state", "answers_incidents"} <= set(configs)
    cache = tmp_path / "cache"
    for name, path in configs.items():
        loaded = datasets.load_dataset(str(copy), name, cache_dir=str(cache))
        table = pq.read_table(copy / path)
        split = loaded["test"]
        assert split.num_rows == table.num_rows, name
        assert split.column_names == table.schema.names, name
        if table.num_rows:
            assert split[0] == table.slice(0, 1).to_pylist()[0], name


def test_the_default_config_is_the_method_visible_cases_table(built: Path) -> None:
    header = yaml.safe_load((built / "README.md").read_text().split("---\n")[1])
    defaults = [c["config_name"] for c in header["configs"] if c.get("default")]
    assert defaults == ["cases"]
