"""A campaign's ``traces`` section adds a span file per phase and changes nothing else.

Traces are the fourth modality of issue 24: collected only when the manifest asks, at the
manifest's rate (recorded in ``incident.json``), from a seeded stream of their own, so the
events, metrics and state of the same campaign are byte-identical with and without them,
and so are the logs but for the lines that carry a trace context (with traces, a line of a
kept request names its span and is written while that span runs, so its ids and its time
change: ``cluster/sim/tracebook``); every pod writes as many lines in each phase either way.
The quality gate admits incidents of both kinds.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from pathlib import Path

import pytest
import yaml
import zstandard
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.collector import collect, layout, plan_collection
from r2act.schema import PHASES
from r2act.schema.rawstore import EVENTS, LOGS, METRICS, STATE, TRACES
from r2act.schema.traces import Span, keeps_trace

REPO = Path(__file__).resolve().parents[3]
SMOKES = ("smoke.yaml", "astronomy-smoke.yaml")
"""One campaign per system (the Astronomy Shop's ships a traces section, taken out here)."""
SAMPLE = 0.25

_register_commands()


_CONTEXT = re.compile(r"(Trace ID: |Span ID: |trace_id=|span_id=)[0-9a-f]+")
"""A trace context's ids, as the collector's debug exporter and the stdout formats print them."""


def _contents(raw: Path) -> dict[str, str]:
    """Digest of every phase's events, metrics and state, and of how many lines each pod
    logged in it, by incident and phase."""
    found = {}
    for path in sorted(raw.glob("*/*/*")):
        if path.name in (EVENTS, METRICS, STATE):
            found[path.relative_to(raw).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
        elif path.name == LOGS:
            counts = Counter(str(row["pod"]) for row in _read(path))
            found[path.relative_to(raw).as_posix()] = json.dumps(sorted(counts.items()))
    return found


def _without_context(raw: Path) -> dict[str, list[str]]:
    """Every phase's log lines that carry no trace context, but for the collector's (it
    prints each record with a frame stamped at the record's time, which moves with it)."""
    return {
        path.relative_to(raw).as_posix(): [
            str(row["line"])
            for row in _read(path)
            if not _CONTEXT.search(str(row["line"]))
            and not str(row["service"]).startswith("otel-collector")
        ]
        for path in sorted(raw.glob(f"*/*/{LOGS}"))
    }


def _logs(raw: Path) -> dict[str, bytes]:
    return {p.relative_to(raw).as_posix(): p.read_bytes() for p in sorted(raw.glob(f"*/*/{LOGS}"))}


@pytest.fixture(scope="module", params=SMOKES)
def runs(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path]:
    """A smoke campaign collected without and with a traces section."""
    base = tmp_path_factory.mktemp("traces")
    document = yaml.safe_load((REPO / "campaigns" / request.param).read_text())
    document.pop("traces", None)
    (base / "plain.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    document["traces"] = {"sample": SAMPLE}
    (base / "traced.yaml").write_text(yaml.safe_dump(document, sort_keys=False))
    for name in ("plain", "traced"):
        summary = collect(plan_collection(base / f"{name}.yaml"), base / name)
        assert summary.failed == 0
    return base / "plain", base / "traced"


def test_traces_change_no_other_file(runs: tuple[Path, Path]) -> None:
    plain, traced = runs
    before, after = _contents(plain / "raw"), _contents(traced / "raw")
    assert before and before == after
    assert not list((plain / "raw").glob(f"*/*/{TRACES}"))
    # the services' own lines that carry no context do not move: only those that do may
    plain_lines, traced_lines = _without_context(plain / "raw"), _without_context(traced / "raw")
    for phase, lines in plain_lines.items():
        assert Counter(lines) == Counter(traced_lines[phase]), phase
    if not any("astronomyshop" in p.name for p in (plain / "raw").iterdir()):
        # Online Boutique's lines carry no trace context: its logs are byte-identical
        assert _logs(plain / "raw") == _logs(traced / "raw")


def _read(path: Path) -> list[dict[str, object]]:
    with path.open("rb") as handle:
        text = zstandard.ZstdDecompressor().stream_reader(handle).read().decode()
    return [json.loads(line) for line in text.splitlines()]


def test_every_phase_has_its_kept_spans_and_the_rate_is_in_provenance(
    runs: tuple[Path, Path],
) -> None:
    _, traced = runs
    incidents = sorted(p for p in (traced / "raw").iterdir() if p.is_dir() and p.name[0] != ".")
    assert incidents
    total = 0
    for directory in incidents:
        document = json.loads((directory / layout.INCIDENT_JSON).read_text())
        assert document["traces"] == {"sample": SAMPLE}
        assert document["formats"]["traces"] == "jsonl+zstd"
        windows = document["windows"]
        for phase in PHASES:
            rows = _read(directory / phase / TRACES)
            total += len(rows)
            start, end = windows[phase]
            for row in rows:
                assert list(row) == list(Span._fields)
                assert keeps_trace(str(row["trace_id"]), SAMPLE)
                assert start <= float(str(row["start"])) <= end
    assert total > 100


def test_an_incident_without_traces_records_no_rate(runs: tuple[Path, Path]) -> None:
    plain, _ = runs
    for path in (plain / "raw").glob(f"*/{layout.INCIDENT_JSON}"):
        document = json.loads(path.read_text())
        assert "traces" not in document and "traces" not in document["formats"]


def test_the_gate_admits_incidents_with_and_without_traces(runs: tuple[Path, Path]) -> None:
    for run in runs:
        result = CliRunner().invoke(app, ["audit", str(run), "-q"])
        assert result.exit_code == 0, result.output
        verdicts = [
            json.loads(line) for line in (run / "audit" / "audit.jsonl").read_text().splitlines()
        ]
        assert verdicts and all(v["group"] == "main" for v in verdicts), verdicts
