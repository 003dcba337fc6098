"""Every text the simulator renders is traceable to the upstream line it reproduces.

Two checks: each template's fixed text occurs in the file (and near the line) it cites
under ``shared/reference`` (texts of software outside the reference folder must be listed
in docs/simulator.md's "Texts and their sources"); and a whole smoke campaign renders no
log line or event message that no template explains.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import re
import sys
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from types import ModuleType

import pytest
import zstandard

from r2act.cluster.sim.texts import TEXTS, Text
from r2act.collector import collect, plan_collection
from r2act.schema import LogLine
from r2act.systems.astronomyshop.topology import COLLECTOR
from textcheck import check_citations
from textcheck import norm as _norm

_EXTERNAL_LISTS = (
    ("simulator.md", "## Texts and their sources"),
    ("systems.md", "### Astronomy Shop texts outside the reference"),
)
"""Where the sources outside shared/reference are listed: the engine's and Online
Boutique's in docs/simulator.md, the Astronomy Shop's beside its system in docs/systems.md."""


def _docs_section(repo_root: Path) -> str:
    sections = []
    for name, heading in _EXTERNAL_LISTS:
        text = (repo_root / "docs" / name).read_text(encoding="utf-8")
        start = text.find(heading)
        assert start >= 0, f"docs/{name} lacks the section {heading.lstrip('# ')!r}"
        level = heading.split(" ", 1)[0]
        end = text.find("\n" + level + " ", start + len(heading))
        sections.append(text[start : end if end > 0 else len(text)])
    return "\n".join(sections)


def test_every_template_cites_a_source_that_holds_its_text(
    reference_dir: Path, repo_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    docs = _norm(_docs_section(repo_root).replace("`", ""))
    found = check_citations(TEXTS.values(), reference_dir, docs)
    covered, external, problems = found.checked, found.external, found.problems
    with capsys.disabled():
        print(
            f"\n{covered} templates checked against shared/reference, "
            f"{external} against the documented list of external sources "
            f"({len(TEXTS)} in all)"
        )
    assert not problems, "\n".join(problems)


# --- every rendered text is explained by a template ------------------------------------


def _regex(text: Text, *, line_level: bool = False) -> str:
    if text.pattern is not None:
        return text.pattern
    parts = re.split(r"(\{err\}|\{\})", text.text)
    out = []
    for part in parts:
        if part == "{}":
            out.append(r".*?" if not line_level else r".*")
        elif part == "{err}":
            out.append(r"(.*)")
        else:
            out.append(re.escape(part))
    body = "".join(out)
    return body + r": (.*)" if text.wrap else body


_WHOLE = [(re.compile(_regex(t), re.S), t) for t in TEXTS.values()]
_LINES = re.compile(
    "|".join(
        f"(?:{re.escape(part) if '{' not in part else _line(part)})"
        for t in TEXTS.values()
        if t.pattern is None
        for part in t.text.split("\n")
        for _line in [lambda p: re.sub(r"\\\{(?:err)?\\\}", ".*", re.escape(p))]
    )
    + "|"
    + "|".join(f"(?:{t.pattern})" for t in TEXTS.values() if t.pattern is not None)
)
"""Any single line of any template (multi-line texts are printed line by line)."""


@lru_cache(maxsize=200_000)
def explained(text: str, depth: int = 0) -> bool:
    """``text`` is some template, with each nested ``{err}`` explained in turn."""
    if depth > 8:
        return False
    for regex, _ in _WHOLE:
        match = regex.fullmatch(text)
        if match and all(explained(g, depth + 1) for g in match.groups()):
            return True
    return False


_LOGRUS_KEYS = {
    "currency",
    "curr.new",
    "curr.old",
    "error",
    "http.req.id",
    "http.req.method",
    "http.req.path",
    "http.resp.bytes",
    "http.resp.status",
    "http.resp.took_ms",
    "id",
    "message",
    "order",
    "product",
    "quantity",
    "session",
    "severity",
    "timestamp",
}
_REDIS = re.compile(r"\d+:[CM] \d{2} \w{3} \d{4} [\d:.]+ [*#] (.*)")
_LOCUST = re.compile(r"\[[\d :,-]+\] [\w-]+/INFO/locust\.main: (.*)")


def _unexplained(line: str) -> Iterator[str]:
    """The parts of a log line no template explains."""
    if line.startswith("{"):
        record = json.loads(line)
        if "http.req.id" in record or ("severity" in record and "timestamp" in record):
            extra = set(record) - _LOGRUS_KEYS - {"name", "pid", "hostname", "time"}
            if extra and "instant" not in record:
                yield f"unknown keys {sorted(extra)}"
        for key in ("message", "error"):
            value = record.get(key)
            if isinstance(value, str) and not explained(value):
                yield value
        return
    for pattern in (_REDIS, _LOCUST):
        match = pattern.fullmatch(line)
        if match:
            if not explained(match.group(1)):
                yield match.group(1)
            return
    if line == "" or _LINES.fullmatch(line) or _LINES.fullmatch(line.strip()):
        return
    yield line


def _records(run: Path, name: str) -> Iterator[dict[str, object]]:
    for path in sorted(run.rglob(name)):
        if name.endswith(".zst"):  # the raw store's logs (issue 26)
            text = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())
            yield from (json.loads(row) for row in text.splitlines())
            continue
        opener = gzip.open if name.endswith(".gz") else open
        with opener(path, "rt", encoding="utf-8") as handle:  # type: ignore[operator]
            for row in handle:
                yield json.loads(row)


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    run = tmp_path_factory.mktemp("smoke") / "run"
    collect(plan_collection(repo_root / "campaigns" / "smoke.yaml"), run)
    return run


def test_a_smoke_campaign_renders_no_log_text_outside_the_templates(smoke_run: Path) -> None:
    lines = [str(r["line"]) for r in _records(smoke_run, "logs.jsonl.zst")]
    assert len(lines) > 10_000
    strays = sorted({part for line in lines for part in _unexplained(line)})
    assert not strays, f"{len(strays)} texts without a template, e.g. {strays[:8]}"


@pytest.fixture(scope="module")
def astronomy_run(tmp_path_factory: pytest.TempPathFactory, repo_root: Path) -> Path:
    run = tmp_path_factory.mktemp("astronomy-smoke") / "run"
    collect(plan_collection(repo_root / "campaigns" / "astronomy-smoke.yaml"), run)
    return run


def _astronomy_frames(repo_root: Path) -> ModuleType:
    """The Astronomy Shop's line frames (.NET console, log4j, Python's correlation format,
    the collector's debug exporter) as its render test unwraps them: one definition,
    ``tests/unit/systems/test_astronomyshop_render.py``."""
    path = repo_root / "tests" / "unit" / "systems" / "test_astronomyshop_render.py"
    spec = importlib.util.spec_from_file_location("_astronomy_frames", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_astronomy_smoke_campaign_renders_no_log_text_outside_the_templates(
    astronomy_run: Path, repo_root: Path
) -> None:
    """The second system's lines too: each pod's through its frame, the engine's own
    (Locust, Valkey) as above, and the collector pod's record blocks, in order."""
    frames = _astronomy_frames(repo_root)
    by_pod: dict[str, list[LogLine]] = {}
    for r in _records(astronomy_run, "logs.jsonl.zst"):
        line = LogLine(float(r["ts"]), str(r["pod"]), "", str(r["service"]), str(r["line"]))
        by_pod.setdefault(line.pod, []).append(line)
    assert sum(len(v) for v in by_pod.values()) > 10_000
    strays: set[str] = set()
    for lines in by_pod.values():
        if lines[0].service == COLLECTOR:
            strays.update(frames.unexplained_collector(lines))
            continue
        for x in lines:
            if list(_unexplained(x.line)) and frames.unexplained_stdout([x]):
                strays.add(x.line)
    assert any(v[0].service == COLLECTOR for v in by_pod.values())
    assert not strays, f"{len(strays)} texts without a template, e.g. {sorted(strays)[:8]}"


def test_the_astronomy_smoke_campaign_records_no_event_text_outside_the_templates(
    astronomy_run: Path,
) -> None:
    events = list(_records(astronomy_run, "events.jsonl"))
    assert events
    strays = sorted({str(e["message"]) for e in events if not explained(str(e["message"]))})
    assert not strays, f"{len(strays)} event texts without a template, e.g. {strays[:8]}"


def test_a_smoke_campaign_records_no_event_text_outside_the_templates(smoke_run: Path) -> None:
    events = list(_records(smoke_run, "events.jsonl"))
    assert events
    strays = sorted({str(e["message"]) for e in events if not explained(str(e["message"]))})
    assert not strays, f"{len(strays)} event texts without a template, e.g. {strays[:8]}"


def test_an_invented_text_is_caught() -> None:
    """The check is not vacuous: texts the simulator used to invent are not explained."""
    for invented in (
        "[PlaceOrder] failed calling cartservice",
        "received conversion request",
        "could not complete request: context canceled",
        "Back-off restarting failed container server",
        "Error when executing service method 'GetCart'.",
    ):
        assert not explained(invented), invented
        assert list(_unexplained(json.dumps({"message": invented})))


def test_probe_cadence_is_the_release_manifests(reference_dir: Path) -> None:
    """Probe periods and delays per app are those of the release manifest (default 10 s)."""
    import yaml

    from r2act.systems import get_system

    probes = get_system("onlineboutique").probes
    manifest = reference_dir / "online-boutique" / "kubernetes-manifests.yaml"
    found: dict[str, tuple[float, float, float]] = {}
    for doc in yaml.safe_load_all(manifest.read_text(encoding="utf-8")):
        if not doc or doc.get("kind") != "Deployment":
            continue
        main = doc["spec"]["template"]["spec"]["containers"][0]
        ready, live = main.get("readinessProbe"), main.get("livenessProbe")
        if ready is None or live is None:
            continue
        found[doc["metadata"]["name"]] = (
            float(ready.get("periodSeconds", 10)),
            float(live.get("periodSeconds", 10)),
            float(ready.get("initialDelaySeconds", 0)),
        )
        assert ready.get("timeoutSeconds", 1) == live.get("timeoutSeconds", 1) == 1
    assert found == probes


def test_deadlines_show_only_where_the_code_sets_one(smoke_run: Path) -> None:
    """Online Boutique sets a per-call deadline only on the frontend's ads call
    (frontend/rpc.go L120): DeadlineExceeded can only appear wrapped as 'failed to get ads'."""
    lines = [str(r["line"]) for r in _records(smoke_run, "logs.jsonl.zst")]
    deadline = [line for line in lines if "DeadlineExceeded" in line]
    assert all("failed to get ads: " in line for line in deadline), deadline[:3]
