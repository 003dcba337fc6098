"""The report in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

Opens the demo run's leaderboard, an incident page and a trajectory page straight from the
file system, as a reader does, and checks what they see: no console errors, a missing
metric reads "n/a", hostile log lines and agent output stay text, every internal link
opens, sorting and log search work. No browser is downloaded: Playwright is pointed at the
system's Chromium (``R2ACT_CHROMIUM`` or ``chromium`` on PATH) and the tests skip, saying
how to install it, when there is none.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_support import HOSTILE, DemoRun

CHROMIUM = os.environ.get("R2ACT_CHROMIUM") or shutil.which("chromium")
playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="chromium not installed: Playwright for Python is missing"
)
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="chromium not installed (Debian package 'chromium'; ./scripts/test installs it "
    "when run as root, or set R2ACT_CHROMIUM)",
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with playwright_api.sync_playwright() as driver:
        chromium = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield chromium
        chromium.close()


class Tab:
    """A page with every console error and uncaught exception recorded."""

    def __init__(self, browser: Any) -> None:
        self.page = browser.new_page(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))

    def open(self, path: Path) -> Any:
        self.page.goto(path.resolve().as_uri())
        self.page.wait_for_load_state("load")
        return self.page


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    opened = Tab(browser)
    yield opened
    opened.page.close()


def _column(page: Any, table: str, index: int) -> list[str]:
    """The text of column ``index`` (its value only, where a cell also holds an interval)."""
    return page.eval_on_selector_all(
        f"#{table} tbody tr",
        f"rows => rows.map(r => {{ const c = r.children[{index}];"
        " return (c.querySelector('.v') || c).textContent.trim(); })",
    )


def test_leaderboard_sorts_and_shows_n_a(demo: DemoRun, tab: Tab) -> None:
    page = tab.open(demo.site / "index.html")
    hostile = page.locator('#leaderboard tr[data-method="<img src=x onerror=alert(1)>"]')
    assert hostile.locator("th").inner_text().strip() == "<img src=x onerror=alert(1)>"
    assert hostile.locator('td[data-metric="vc"] .v').inner_text() == "n/a"
    assert hostile.locator('td[data-metric="ec"] .v').inner_text() == "n/a"
    heads = page.eval_on_selector_all("#leaderboard thead th", "hs => hs.map(h => h.textContent)")
    valid = next(i for i, h in enumerate(heads) if h.strip().startswith("Valid"))
    page.locator("#leaderboard thead th").nth(valid).click()
    values = [float(v) for v in _column(page, "leaderboard", valid)]
    assert values == sorted(values, reverse=True) and len(set(values)) > 1
    page.locator("#leaderboard thead th").nth(valid).click()
    values = [float(v) for v in _column(page, "leaderboard", valid)]
    assert values == sorted(values)
    vc = next(i for i, h in enumerate(heads) if h.strip().startswith("VC"))
    page.locator("#leaderboard thead th").nth(vc).click()
    assert _column(page, "leaderboard", vc)[-1].startswith("n/a")  # missing sorts last, not as 0
    assert page.locator("svg.fig2 g.point").count() == 5
    assert page.evaluate("window.__pwned") is None
    assert tab.errors == []


def _internal_links(page: Any) -> list[str]:
    return page.eval_on_selector_all(
        "a[href]", "as => as.map(a => a.href).filter(h => h.startsWith('file:'))"
    )


def test_every_internal_link_opens(demo: DemoRun, tab: Tab, browser: Any) -> None:
    starts = [
        demo.site / "index.html",
        demo.site / "incidents" / f"{demo.agent_incident}.html",
        demo.site / "trajectories" / "agent" / f"{demo.agent_incident}.html",
    ]
    targets: set[str] = set()
    for start in starts:
        targets.update(_internal_links(tab.open(start)))
    assert len(targets) > 10
    checker = Tab(browser)
    for url in sorted(targets):
        page = checker.page
        response = page.goto(url.split("#")[0])
        assert response is not None and response.ok, url
        if "#" in url:
            anchor = url.split("#", 1)[1]
            assert page.locator(f"[id='{anchor}']").count() == 1, url
    assert checker.errors == [] and tab.errors == []
    checker.page.close()


def test_incident_page_log_search_shows_hostile_lines_as_text(demo: DemoRun, tab: Tab) -> None:
    page = tab.open(demo.site / "incidents" / f"{demo.hostile_incident}.html")
    page.wait_for_selector("#log-rows tr")
    assert page.locator("#log-rows tr").count() == 100
    page.wait_for_selector("svg.tl")  # the timeline came from its lazily loaded data
    assert page.locator("svg.tl g.svc").count() > 3
    page.fill("#log-search", "window.__pwned")
    page.wait_for_function("document.getElementById('log-status').textContent.includes('match')")
    assert page.inner_text("#log-status") == "1 matching line"
    assert page.locator("#log-rows td.line").first.text_content() == HOSTILE
    assert page.locator("#log-table img").count() == 0
    assert page.locator("#log-table script").count() == 0
    assert page.evaluate("window.__pwned") is None
    page.fill("#log-search", "LONGLINE")
    first_line = "document.querySelector('#log-rows td.line').textContent"
    page.wait_for_function(f"{first_line}.startsWith('LONGLINE')")
    assert page.inner_text("#log-status") == "1 matching line"
    cell = page.locator("#log-rows td.line").first
    assert "bytes in the dataset]" in (cell.text_content() or "")
    table = page.locator("#log-table").bounding_box()
    box = cell.bounding_box()
    assert box["x"] + box["width"] <= table["x"] + table["width"] + 1  # wrapped, not overflowing
    page.fill("#log-search", "")
    page.select_option("#log-phase", label="during")
    page.wait_for_function(
        "[...document.querySelectorAll('#log-rows tr')].every(r => r.children[1].textContent"
        " === 'during') && document.querySelectorAll('#log-rows tr').length === 100"
        " && document.getElementById('log-status').textContent.includes('matching')"
    )
    phases = set(_column(page, "log-table", 1))
    assert phases == {"during"}
    page.click("#log-next")
    page.wait_for_function(
        "document.getElementById('log-page').textContent.startsWith('lines 101')"
    )
    assert tab.errors == []


def test_a_search_still_waiting_for_its_pause_does_not_undo_a_later_page_turn(
    demo: DemoRun, tab: Tab
) -> None:
    """Typing starts a 200 ms pause before the search runs; a phase chosen meanwhile runs
    the search at once, and the page turned after it stays turned when the pause ends."""
    tab.page.clock.install(time=0)
    page = tab.open(demo.site / "incidents" / f"{demo.hostile_incident}.html")
    page.wait_for_selector("#log-rows tr")
    page.clock.pause_at(1000)
    page.fill("#log-search", "a")  # its search waits for a 200 ms pause on the page's clock
    page.select_option("#log-phase", label="during")
    page.wait_for_function("document.getElementById('log-status').textContent.includes('match')")
    page.click("#log-next")
    label = "document.getElementById('log-page').textContent"
    page.wait_for_function(f"{label}.startsWith('lines 101')")
    page.clock.run_for(1000)  # the typed search's pause ends
    page.wait_for_timeout(100)
    assert page.evaluate(label).startswith("lines 101")
    phases = set(_column(page, "log-table", 1))
    assert phases == {"during"}
    assert tab.errors == []


def test_trajectory_page_shows_agent_output_as_text(demo: DemoRun, tab: Tab) -> None:
    page = tab.open(demo.site / "trajectories" / "agent" / f"{demo.agent_incident}.html")
    steps = page.locator("li.step")
    assert steps.count() >= 4
    agent = page.locator("li.step.agent").first
    assert HOSTILE in agent.inner_text()
    assert page.locator("ol.steps img").count() == 0 and page.evaluate("window.__pwned") is None
    assert page.locator(".call code").first.inner_text() == "logs"
    system = page.locator("li.step.system details.text").first
    system.locator("summary").click()
    assert system.evaluate("d => d.open")
    assert "Operations" in system.inner_text()
    assert tab.errors == []
