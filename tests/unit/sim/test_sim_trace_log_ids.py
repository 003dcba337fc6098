"""The Astronomy Shop's log lines carry the trace context of the stored spans (issue 24, 2).

A small campaign is collected on the simulator with traces on; each phase's log file is
read back from the raw store with its span file. A line whose trace id is a stored trace's
must name that trace's span of the line's own service (the load generator's: the task's
span), an error line an error span, an answered request's line a span that is not one;
a line whose id the sampler keeps must name a stored trace, and is written while that span
runs; and the share of such lines is near the sample rate for the frequent kinds, below it
for all lines (a rare kind's bucket piece often holds no kept request of it).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml
import zstandard

from r2act.collector import collect, plan_collection
from r2act.schema import PHASES
from r2act.schema.rawstore import LOGS, TRACES
from r2act.schema.traces import keeps_trace
from r2act.systems.astronomyshop.tracing import NESTED_TASK, TASK_SPANS

REPO = Path(__file__).resolve().parents[3]
SAMPLE = 0.25
ONLY = (
    "astronomyshop_product-catalog_pod_failure_severe_r01",
    "astronomyshop_product-catalog_feature_flag_severe_r01",
    "astronomyshop_cart_cpu_saturation_severe_r01",
)
"""Failed requests (the catalog down, its flag on) and a healthy-looking one."""
_STDOUT_IDS = re.compile(r"trace_id=([0-9a-f]{32}) span_id=([0-9a-f]{16})")
_STATUS = re.compile(r'HTTP/1\.1" (\d{3}) ')
EXPORT_SLACK_S = 0.3
"""The collector's export delay (``render_collector.debug_lines``: 0.2 s) and a record's
offsets after its first line (a checkout's own line: 0.05 s after its rounds)."""


@dataclass
class Line:
    """One log record's trace context, as the raw store holds it."""

    service: str
    level: str
    """``ERROR``, ``INFO`` or ``OK`` (an answered request's access record)."""
    trace_id: str
    span_id: str
    function: str
    """The record's ``code.function`` (load-generator records), else empty."""
    ts: float
    """When the line was written (the collector's: when it printed the record)."""


def _read(path: Path) -> list[dict[str, object]]:
    with path.open("rb") as handle:
        text = zstandard.ZstdDecompressor().stream_reader(handle).read().decode()
    return [json.loads(line) for line in text.splitlines()]


def _lines(rows: list[dict[str, object]]) -> list[Line]:
    """Every record with a trace context: the collector's debug records (framed by
    ``ResourceLog``) and the stdout formats that print the ids."""
    found: list[Line] = []
    record: dict[str, str] = {}
    for row in rows:
        text, service = str(row["line"]), str(row["service"])
        if not service.startswith("otel-collector"):
            match = _STDOUT_IDS.search(text)
            if match:
                level = "ERROR" if " ERROR " in text else "INFO"
                found.append(Line(service, level, match[1], match[2], "", float(str(row["ts"]))))
            continue
        if "\tResourceLog #" in text:
            record = {}
        elif text.startswith("     -> k8s.deployment.name: Str("):
            record["service"] = text.split("Str(", 1)[1][:-1]
        elif text.startswith("     -> code.function: Str("):
            record["function"] = text.split("Str(", 1)[1][:-1]
        elif text.startswith("SeverityText: "):
            record["level"] = "ERROR" if text[14:].lower().startswith(("err", "fail")) else ""
        elif text.startswith("Body: Str([") and (status := _STATUS.search(text)):
            record["level"] = "ERROR" if status[1][0] == "5" else "OK"
        elif text.startswith("Trace ID: "):
            record["trace"] = text[10:]
        elif text.startswith("Span ID: ") and record.get("trace"):
            level = record.get("level") or "INFO"
            function, at = record.get("function", ""), float(str(row["ts"]))
            found.append(Line(record["service"], level, record["trace"], text[9:], function, at))
    return found


@dataclass
class Phase:
    lines: list[Line]
    spans: dict[tuple[str, str], dict[str, object]]
    traces: set[str]


@pytest.fixture(scope="module")
def phases(tmp_path_factory: pytest.TempPathFactory) -> list[Phase]:
    base = tmp_path_factory.mktemp("ids")
    document = yaml.safe_load((REPO / "campaigns" / "astronomy-smoke.yaml").read_text())
    document["traces"] = {"sample": SAMPLE}
    manifest = base / "traced.yaml"
    manifest.write_text(yaml.safe_dump(document, sort_keys=False))
    summary = collect(plan_collection(manifest, ONLY), base / "run")
    assert summary.failed == 0 and summary.completed == len(ONLY)
    found = []
    for incident in ONLY:
        for phase in PHASES:
            directory = base / "run" / "raw" / incident / phase
            spans = {(str(s["trace_id"]), str(s["span_id"])): s for s in _read(directory / TRACES)}
            lines = _lines(_read(directory / LOGS))
            found.append(Phase(lines, spans, {t for t, _ in spans}))
    return found


def test_a_line_of_a_stored_trace_names_its_services_span_with_a_consistent_status(
    phases: list[Phase],
) -> None:
    named, errors, answered = 0, 0, 0
    for phase in phases:
        for line in phase.lines:
            if line.trace_id not in phase.traces:
                continue
            span = phase.spans.get((line.trace_id, line.span_id))
            assert span is not None, line
            assert span["service"] == line.service, (line, span)
            named += 1
            if line.level == "ERROR":
                errors += 1
                assert span["status"] == "error", (line, span)
            elif line.level == "OK":
                answered += 1
                assert span["status"] != "error", (line, span)
    assert named > 300 and errors > 0 and answered > 50


def test_a_line_of_a_stored_trace_is_written_while_its_span_runs(phases: list[Phase]) -> None:
    """The line moves to its span (its middle; a checkout's own line a little after its
    rounds), and the collector prints a record up to ``EXPORT_SLACK_S`` after its time."""
    named = 0
    for phase in phases:
        for line in phase.lines:
            span = phase.spans.get((line.trace_id, line.span_id))
            if span is None:
                continue
            start = float(str(span["start"]))
            end = start + float(str(span["duration_s"]))
            assert start - 1e-6 <= line.ts <= end + EXPORT_SLACK_S, (line, span)
            named += 1
    assert named > 300


def test_the_load_generators_lines_name_their_tasks_span(phases: list[Phase]) -> None:
    nested = TASK_SPANS[NESTED_TASK]
    seen = set()
    for phase in phases:
        for line in phase.lines:
            if line.service != "load-generator" or line.trace_id not in phase.traces:
                continue
            span = phase.spans[line.trace_id, line.span_id]
            assert span["operation"] == TASK_SPANS[line.function], (line, span)
            if span["operation"] == nested and span["parent_id"]:
                parent = phase.spans[line.trace_id, str(span["parent_id"])]
                assert parent["operation"] in (TASK_SPANS["checkout"], TASK_SPANS["checkout_multi"])
            seen.add(span["operation"])
    assert len(seen) >= 5


def test_a_line_the_sampler_keeps_names_a_stored_trace(phases: list[Phase]) -> None:
    kept = [(p, x) for p in phases for x in p.lines if keeps_trace(x.trace_id, SAMPLE)]
    assert len(kept) > 300
    assert all(x.trace_id in p.traces for p, x in kept)


def test_the_kept_share_of_lines_is_about_the_sample_rate(phases: list[Phase]) -> None:
    """A line names a kept trace as often as the sampler keeps one, unless no kept request
    of its kind starts in its own bucket piece (it must be written while that span runs):
    the frequent kinds (the catalog's lookups) are near the rate, all kinds together
    below it."""
    lines = [x for p in phases for x in p.lines]
    catalog = [x for x in lines if x.service == "product-catalog" and x.level == "INFO"]
    assert len(lines) > 3000 and len(catalog) > 500

    def share(of: list[Line]) -> float:
        return sum(keeps_trace(x.trace_id, SAMPLE) for x in of) / len(of)

    # measured here: the catalog's 0.75 of the rate, all lines 0.50
    assert 0.6 * SAMPLE < share(catalog) < 1.2 * SAMPLE
    assert 0.35 * SAMPLE < share(lines) < 1.1 * SAMPLE
