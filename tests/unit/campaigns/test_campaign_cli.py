"""``r2act campaign`` and ``r2act schema`` commands, run in-process through ``main``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest
import yaml

from r2act.campaigns.json_schemas import COMMITTED_DIR, render_schema, schema_documents
from r2act.cli import main
from r2act.schema import INCIDENT_ID_PATTERN

REPO = Path(__file__).resolve().parents[3]
SMOKE = str(REPO / "campaigns" / "smoke.yaml")
DESIGN = str(REPO / "campaigns" / "r2act-302.yaml")


def _run(monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.setattr(sys, "argv", ["r2act", *args])
    try:
        main()
    except SystemExit as exited:
        return int(exited.code or 0)
    return 0


def test_plan_json_prints_one_object_per_incident(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "campaign", "plan", DESIGN, "--json") == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    assert sum(not r["spare"] for r in rows) == 302
    assert set(rows[0]) == {"id", "service", "fault_type", "intensity", "repetition", "spare"}
    assert all(re.fullmatch(INCIDENT_ID_PATTERN, r["id"]) for r in rows)


def test_plan_table_summarises_cells(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "campaign", "plan", DESIGN) == 0
    out = capsys.readouterr().out
    assert (
        "302 incidents in 25 non-empty cells (moderate 129, severe 173) + 161 spares"
        in " ".join(out.split())
    )


def test_plan_stats_gives_the_mapper_per_policy_and_the_definition_oracle(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "campaign", "plan", DESIGN, "--json", "--stats") == 0
    captured = capsys.readouterr()
    assert len(captured.out.splitlines()) == 463  # stats go to stderr with --json
    err = " ".join(captured.err.split())
    found = {
        m.group(1): (int(m.group(2)), int(m.group(3)), int(m.group(4)))
        for m in re.finditer(
            r"([a-z0-9-]+/\d): gold RCA \+ mapper valid for (\d+)/302 \(\S+\); "
            r"gold plans valid for (\d+)/302; (\d+) invalid plans",
            err,
        )
    }
    assert found["r2act-mechanics/2"] == (302, 302, 604)
    # version 3: the pair does not say which caller holds a broken DNS address
    mapped, gold, invalid = found["r2act-mechanics/3"]
    assert (gold, invalid) == (302, 604) and 302 - 96 < mapped < 302
    # Table II's only HTTP plan is rollback_config, whose route the pair cannot tell: the
    # mapper guesses the most-trafficked route, right for the HTTP incidents on it only
    assert found["paper-table-ii/1"] == (302 - 87 + 15, 302, 604)
    assert "fault-definition oracle RCA-S 1.000 (0 definitions" in err


def test_validate_reports_the_incident_count(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "campaign", "validate", SMOKE) == 0
    assert "plans 12 incidents" in capsys.readouterr().out


def test_render_writes_one_chaos_object_per_incident(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _run(monkeypatch, "campaign", "render", SMOKE, "--out", str(tmp_path / "out")) == 0
    files = sorted((tmp_path / "out").glob("*.yaml"))
    assert len(files) == 12
    obj = yaml.safe_load(files[0].read_text())
    assert obj["apiVersion"] == "chaos-mesh.org/v1alpha1"
    assert obj["metadata"]["annotations"]["r2act.io/incident-id"] == files[0].stem


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["campaign", "--help"],
        ["campaign", "plan", "--help"],
        ["schema", "export", "--help"],
    ],
)
def test_help_explains_with_examples(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert _run(monkeypatch, *args) == 0
    out = capsys.readouterr().out
    assert "Usage" in out
    if args[0] != "--help":
        assert "Example" in out


def test_schema_export_writes_what_the_models_generate(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert _run(monkeypatch, "schema", "export", str(tmp_path)) == 0
    documents = schema_documents()
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"{stem}.schema.json" for stem in documents
    )
    for stem, document in documents.items():
        assert json.loads((tmp_path / f"{stem}.schema.json").read_text()) == document


@pytest.mark.parametrize("stem", sorted(schema_documents()))
def test_committed_schema_equals_the_generated_one(stem: str) -> None:
    committed = COMMITTED_DIR / f"{stem}.schema.json"
    assert committed.read_text(encoding="utf-8") == render_schema(schema_documents()[stem]), (
        f"{committed} is stale; run: r2act schema export src/r2act/schema/json"
    )
