"""load() refuses ids it does not have; the card's "How to load" snippet runs as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from r2act.datasets import layout, load
from r2act.errors import DataError


def test_load_names_incident_ids_the_dataset_lacks(built: Path) -> None:
    with pytest.raises(DataError, match="1 id\\(s\\) not in the dataset: no_such_id"):
        load(built, view="logs", incidents=["no_such_id"])


def test_card_snippet_runs_and_warns_about_memory(built: Path) -> None:
    card = (built / layout.README).read_text("utf-8")
    section = card.split("## How to load", 1)[1].split("\n## ", 1)[0]
    snippet = re.search(r"```python\n(.*?)```", section, re.S)
    assert snippet is not None
    code = snippet.group(1).replace('"path/to/dataset"', repr(str(built)))
    scope: dict[str, object] = {}
    exec(compile(code, "card-snippet", "exec"), scope)
    logs = scope["ds"].logs  # type: ignore[attr-defined]
    assert set(logs.case_id) == set(scope["one"])  # type: ignore[call-overload]
    assert "incident_id" not in logs.columns
    assert "into memory" in section and "DatasetReader" in section
