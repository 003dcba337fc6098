"""The written site, read as files: links, page weight, escaping, n/a, numbers, errors.

Pure checks of what ``r2act report`` wrote for the demo run (see ``report_support``); the
same pages in a real browser are in ``test_report_browser.py``.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from report_support import HOSTILE, LONG_LINE, DemoRun, r2act

from r2act.datasets import load_records
from r2act.replay import load_outcomes
from r2act.report.observations import MAX_LINE_BYTES, decode_chunk
from r2act.report.site import data_script

PAGE_LIMIT = 5 * 2**20


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, value in attrs:
            if value and (
                (name == "href" and tag in ("a", "link")) or (name == "src" and tag == "script")
            ):
                self.links.append(value)
            if name == "id" and value:
                self.ids.add(value)


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_every_internal_link_resolves_to_a_file_and_anchor(demo: DemoRun) -> None:
    pages = sorted(demo.site.rglob("*.html"))
    incidents = len(load_records(demo.run / "dataset"))
    assert incidents >= 11  # the smoke campaign's main incidents
    # leaderboard, list, audit, one page per incident, trajectories
    assert len(pages) >= 3 + incidents + 3
    ids = {page: _parse(page).ids for page in pages}
    checked = 0
    for page in pages:
        for link in _parse(page).links:
            assert not link.startswith(("http:", "https:", "//")), f"{page}: external {link}"
            path, _, anchor = link.partition("#")
            target = (page.parent / path).resolve() if path else page
            assert target.is_file(), f"{page.relative_to(demo.site)} links to missing {link}"
            if anchor and target.suffix == ".html":
                assert anchor in ids[target], f"{page.name}: no #{anchor} in {path or 'itself'}"
            checked += 1
    assert checked > 100


def test_leaderboard_links_to_trajectories_and_incidents_to_replay(demo: DemoRun) -> None:
    index = (demo.site / "index.html").read_text(encoding="utf-8")
    assert 'href="trajectories/agent/index.html"' in index
    page = (demo.site / "incidents" / f"{demo.agent_incident}.html").read_text(encoding="utf-8")
    assert f"../trajectories/agent/{demo.agent_incident}.html" in page
    assert 'id="replay"' in page and "time to recover" in page


def test_no_page_or_data_file_is_over_5_mb(demo: DemoRun) -> None:
    files = [p for p in demo.site.rglob("*") if p.is_file()]
    largest = max(files, key=lambda p: p.stat().st_size)
    assert largest.stat().st_size < PAGE_LIMIT, largest
    # incident pages load their logs lazily: the page itself carries none of them
    page = demo.site / "incidents" / f"{demo.hostile_incident}.html"
    assert "LONGLINE" not in page.read_text(encoding="utf-8")
    assert page.stat().st_size < 200_000


def test_hostile_strings_are_escaped_in_every_page(demo: DemoRun) -> None:
    for page in demo.site.rglob("*.html"):
        text = page.read_text(encoding="utf-8")
        assert "<script>window.__pwned" not in text, page
        assert "<img src=x" not in text, page
    index = (demo.site / "index.html").read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in index  # the method name, as text
    trajectory = (demo.site / "trajectories" / "agent" / f"{demo.agent_incident}.html").read_text()
    assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in trajectory


def test_embedded_json_cannot_close_its_script_tag() -> None:
    script = data_script("k", {"line": "</script><script>alert(1)</script>", "x": "\u2028"})
    assert "</script" not in script and "<" not in script
    payload = json.loads(script[len('r2actData("k",') : -3])
    assert payload["line"] == "</script><script>alert(1)</script>"


def test_a_missing_metric_reads_n_a_never_zero(demo: DemoRun) -> None:
    index = (demo.site / "index.html").read_text(encoding="utf-8")
    row = re.search(
        r'<tr data-method="&lt;img src=x onerror=alert\(1\)&gt;">(.*?)</tr>', index, re.S
    )
    assert row is not None
    cells = dict(
        re.findall(r'data-metric="(\w+)"><span class="v[^"]*">([^<]*)</span>', row.group(1))
    )
    assert cells["vc"] == "n/a" and cells["ec"] == "n/a"  # no correct diagnosis: undefined
    assert cells["rca_s"] == "0.000"  # a real zero stays a zero


def test_leaderboard_numbers_equal_evaluate(demo: DemoRun) -> None:
    rule = json.loads(demo.evaluation.read_text())["methods"][0]["metrics"]
    index = (demo.site / "index.html").read_text(encoding="utf-8")
    row = re.search(r'<tr data-method="rule">(.*?)</tr>', index, re.S)
    assert row is not None
    shown = dict(
        re.findall(r'data-metric="(\w+)"><span class="v[^"]*">([^<]*)</span>', row.group(1))
    )
    for key in ("rca_s", "rca_t", "valid", "exact", "vc"):
        assert shown[key] == f"{rule[key]['value']:.3f}", key
    low, high = rule["valid"]["ci_low"], rule["valid"]["ci_high"]
    assert f"[{low:.3f}, {high:.3f}]" in row.group(1)


def _chunks(site: Path, incident: str) -> list[dict[str, object]]:
    out = []
    files = sorted((site / "data" / incident).glob("logs-*.js"), key=lambda p: int(p.stem[5:]))
    for path in files:
        text = path.read_text(encoding="utf-8")
        out.append(json.loads(text[text.index(",") + 1 : -3]))
    return out


def test_log_chunks_decode_to_the_dataset_lines_in_time_order(demo: DemoRun) -> None:
    records = {
        json.loads(r)["incident_id"]: json.loads(r)["case_id"]
        for r in pq.read_table(demo.run / "dataset" / "answers" / "incidents.parquet",
                               columns=["record"]).column("record").to_pylist()
    }  # fmt: skip
    case = records[demo.hostile_incident]
    logs = pq.read_table(demo.run / "dataset" / "observations" / "logs.parquet",
                         filters=[("case_id", "==", case)]).to_pandas()  # fmt: skip
    lines: list[str] = []
    for chunk in _chunks(demo.site, demo.hostile_incident):
        decoded = decode_chunk(chunk)
        assert len(decoded["lines"]) == len(decoded["t"]) == int(str(chunk["n"]))
        assert list(decoded["t"]) == sorted(decoded["t"])  # time order within the chunk
        lines += decoded["lines"]
    assert len(lines) == len(logs)
    expected = logs.sort_values("ts", kind="stable")["line"].tolist()
    assert HOSTILE in lines  # kept whole: the page shows it as text
    long = next(line for line in lines if line.startswith("LONGLINE"))
    assert len(long.encode()) < len(LONG_LINE) and f"{len(LONG_LINE)} bytes in the dataset" in long
    assert long.startswith(LONG_LINE[:MAX_LINE_BYTES])
    assert sorted(lines) == sorted(x if len(x) <= MAX_LINE_BYTES else long for x in expected)


def test_audit_page_counts_what_the_gate_kept_out(demo: DemoRun) -> None:
    audit = (demo.site / "audit.html").read_text(encoding="utf-8")
    trail = (demo.run / "audit" / "audit.jsonl").read_text().splitlines()
    verdicts = [json.loads(line) for line in trail]
    excluded = [v for v in verdicts if v["group"] != "main"]
    assert f"Excluded incidents ({len(excluded)})" in audit
    assert f"{len(verdicts)} collected incidents judged" in audit


def test_an_out_dir_that_is_not_a_report_is_never_emptied(demo: DemoRun, tmp_path: Path) -> None:
    keep = tmp_path / "mine"
    keep.mkdir()
    (keep / "thesis.tex").write_text("precious", encoding="utf-8")
    done = r2act("report", str(demo.run), "--out", str(keep), check=False)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "not a report r2act wrote" in done.stderr
    assert (keep / "thesis.tex").read_text(encoding="utf-8") == "precious"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["/nonexistent/run"], "not found"),
        (["{run}", "--compare", "rule,nosuch"], "no method 'nosuch'"),
        (["{run}", "--compare", "rule"], "give two method names"),
        (["{run}", "--predictions", "/nonexistent.jsonl"], "predictions file not found"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    demo: DemoRun, tmp_path: Path, args: list[str], message: str
) -> None:
    argv = [a.replace("{run}", str(demo.run)) for a in args]
    done = r2act("report", *argv, "--out", str(tmp_path / "site"), check=False)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "site").exists()


def test_serve_answers_on_loopback_only(demo: DemoRun, tmp_path: Path) -> None:
    import subprocess
    import sys
    import urllib.request

    site = tmp_path / "served"
    child = subprocess.Popen(
        [sys.executable, "-m", "r2act", "report", str(demo.run), "--out", str(site),
         "--serve", "--port", "0", "--replicates", "200"],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert child.stderr is not None
        url = ""
        for line in child.stderr:
            if line.startswith("serving "):
                url = line.split()[1]
                break
        assert url.startswith("http://127.0.0.1:"), url
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.status == 200 and b"Leaderboard" in answer.read()
    finally:
        child.terminate()
        child.wait(timeout=10)


def test_spans_are_shown_when_the_dataset_has_a_traces_table() -> None:
    import pyarrow as pa

    from r2act.report.observations import span_rows

    spans = pa.table(
        {
            "case_id": ["c", "c"],
            "ts": [105.0, 101.0],
            "service": ["frontend", "cartservice"],
            "name": [HOSTILE, "GetCart"],
            "attributes": [{"k": 1}, {"k": 2}],
        }
    )
    shown = span_rows(spans, 100.0)
    assert shown is not None
    assert shown["columns"] == ["ts", "service", "name", "attributes"]
    assert shown["t"] == [1.0, 5.0] and shown["total"] == 2  # time order, relative to t0
    assert shown["rows"][1][2] == HOSTILE and shown["rows"][0][3] == '{"k": 2}'
    assert span_rows(None, 0.0) is None


def test_replayed_incidents_show_their_health_series_one_bar_per_probe(demo: DemoRun) -> None:
    replays = sorted((demo.run / "replay").glob("*/replay.jsonl"))
    assert replays
    outcomes = load_outcomes(replays[0])
    drawn = 0
    for outcome in outcomes:
        incident = outcome.incident_id
        page = demo.site / "incidents" / f"{incident}.html"
        if not page.is_file():
            continue
        html = page.read_text(encoding="utf-8")
        bars = re.findall(r'<rect class="probe-(ok|bad)"', html)
        assert len(bars) == len(outcome.health), incident
        assert bars.count("bad") == sum(not p.healthy for p in outcome.health), incident
        if outcome.status == "executed":
            assert "plan applied" in html, incident
        drawn += bool(bars)
    assert drawn > 0
