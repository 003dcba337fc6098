"""The Astronomy Shop's texts and log sinks are traceable to the pinned sources.

The same checks the engine's conformance test makes for Online Boutique
(``tests/unit/sim/test_sim_texts.py``), on this system's table: each text's fixed
fragments occur in the file it cites under ``shared/reference/opentelemetry-demo-2.2.0``
(the first within three lines of the cited line); texts of software outside the reference
are listed in docs/systems.md with their repository path and text; each service's log
sink cites the set-up lines that decide it, and every deployment has one. Skips with a
reason when the reference folder is absent.
"""

from __future__ import annotations

import re
from pathlib import Path

from r2act.systems.astronomyshop.logsinks import COLLECTOR, SINKS, STDOUT, to_collector, to_stdout
from r2act.systems.astronomyshop.texts import TEXTS
from r2act.systems.astronomyshop.topology import ASTRONOMY_SHOP
from textcheck import NEAR, check_citations
from textcheck import norm as _norm

DOCS_SECTION = "### Astronomy Shop texts outside the reference"


def _docs_table(repo_root: Path) -> str:
    text = (repo_root / "docs" / "systems.md").read_text(encoding="utf-8")
    start = text.find(DOCS_SECTION)
    assert start >= 0, f"docs/systems.md lacks the section {DOCS_SECTION!r}"
    end = text.find("\n## ", start + 3)
    return _norm(text[start : end if end > 0 else len(text)].replace("`", ""))


def test_keys_are_unique_and_prefixed() -> None:
    keys = [t.key for t in TEXTS]
    assert len(keys) == len(set(keys))
    assert all(k.startswith("as.") for k in keys), [k for k in keys if not k.startswith("as.")]


def test_every_text_cites_a_source_that_holds_it(reference_dir: Path, repo_root: Path) -> None:
    docs = _docs_table(repo_root)
    found = check_citations(TEXTS, reference_dir, docs)
    problems, checked = found.problems, found.checked
    assert not problems, "\n".join(problems)
    assert checked >= 60, checked


def test_a_wrong_citation_is_caught(reference_dir: Path) -> None:
    """The check is not vacuous: a text moved off its line is not near it."""
    text = next(t for t in TEXTS if t.key == "as.co.place_order")
    lines = (reference_dir / text.source).read_text(encoding="utf-8").split("\n")
    far = _norm("\n".join(lines[max(0, text.line + 40 - 1 - NEAR) : text.line + 40 + NEAR]))
    assert _norm(text.fixed()[0]) not in far


def test_every_deployment_has_a_sink() -> None:
    names = {d.name for d in ASTRONOMY_SHOP.deployments}
    assert set(SINKS) == names
    assert all(row.sinks <= {STDOUT, COLLECTOR} and row.sinks for row in SINKS.values())


def test_sinks_follow_the_logging_set_ups() -> None:
    """The services whose only logger is an OTLP bridge print nothing on their pod."""
    for service in ("checkout", "product-catalog", "currency", "shipping", "quote"):
        assert to_collector(service) and not to_stdout(service), service
    for service in ("cart", "ad", "recommendation", "email", "payment"):
        assert to_collector(service) and to_stdout(service), service
    assert to_stdout("frontend") and not to_collector("frontend")
    assert not to_stdout("no-such-service") and not to_collector("no-such-service")


def test_every_sink_cites_lines_that_hold_its_set_up(reference_dir: Path) -> None:
    problems = []
    for service, row in SINKS.items():
        assert row.evidence and row.why, service
        for e in row.evidence:
            path = reference_dir / e.path
            if not path.is_file():
                problems.append(f"{service}: {e.path} does not exist")
                continue
            lines = path.read_text(encoding="utf-8").split("\n")
            if not 0 < e.line <= len(lines) or e.fragment not in lines[e.line - 1]:
                problems.append(f"{service}: {e.fragment!r} not on {e.path}:{e.line}")
    assert not problems, "\n".join(problems)


def test_the_access_log_body_has_the_templates_fields(reference_dir: Path) -> None:
    """Envoy's body, as rendered, has one field per operator of envoy.tmpl.yaml L90."""
    from r2act.systems.astronomyshop.render_formats import envoy_access_body

    line = (
        (reference_dir / "opentelemetry-demo-2.2.0/src/frontend-proxy/envoy.tmpl.yaml")
        .read_text(encoding="utf-8")
        .split("\n")[89]
    )
    template = line.split("string_value: ", 1)[1].strip().strip('"').replace("\\n", "")
    operators = re.findall(r"%[A-Z_]+(?:\([^)]*\))?%", template)
    body = envoy_access_body(
        (0.0, "GET", "/", 200),
        ("-", "via_upstream", "-"),
        (0, 10, 3, "2"),
        ("ua", "id"),
        ("10.0.0.1:8080", "frontend", "10.0.0.2:1", "10.0.0.2:8080", "10.0.0.3:2"),
    )
    # the first operator is the bracketed time; the quoted request line holds three
    fields = re.findall(r'"[^"]*"|\S+', body)
    assert len(fields) == len(operators) - 2
    pattern = next(t.pattern for t in TEXTS if t.key == "as.fp.access")
    assert pattern is not None and re.fullmatch(pattern, body)


def test_error_steps_blame_the_innermost_callee() -> None:
    """Each step of checkout's chain names the service it called, and cites real lines."""
    from r2act.systems.astronomyshop.errors import checkout_chain
    from r2act.systems.astronomyshop.steps import ERROR_STEPS

    names = {d.name for d in ASTRONOMY_SHOP.deployments}
    assert all(step.service in names for step in ERROR_STEPS)
    for root, blamed in (
        ("valkey-cart", "valkey-cart"),
        ("cart", "cart"),
        ("currency", "currency"),
        ("product-catalog", "product-catalog"),
        ("shipping", "shipping"),
        ("payment", "payment"),
    ):
        chain = checkout_chain("unavailable", root)
        hits = [(m.start(), s.service) for s in ERROR_STEPS for m in s.pattern.finditer(chain)]
        assert hits, chain
        assert max(hits)[1] == blamed, (root, chain)


def test_error_step_citations_hold_their_phrases(reference_dir: Path) -> None:
    from r2act.systems.astronomyshop.steps import ERROR_STEPS

    base = reference_dir / "opentelemetry-demo-2.2.0" / "src"
    for step in ERROR_STEPS:
        for cite in step.source.split("; "):
            path, lines = cite.split(" ", 1)
            text = (base / path).read_text(encoding="utf-8").split("\n")
            for number in re.findall(r"L(\d+)", lines):
                # the line as printed: %q quotes, %+v of a url.Error starts 'Post "'
                line = text[int(number) - 1].replace("%q", '"').replace("%+v", 'Post "')
                assert step.pattern.search(line), (
                    step.service,
                    path,
                    number,
                )
