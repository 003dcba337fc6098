"""Shared test options and fixtures, and the end-of-run note on what was skipped.

``--with-e2e`` enables tests that need a kind cluster made by ``deploy/kind/up.sh``.
``reference_dir`` is ``../shared/reference`` (upstream Chaos Mesh CRDs and Online Boutique
manifests) or ``R2ACT_REFERENCE_DIR``; tests that need it skip with a reason when it is
absent. A plain clone has neither, so a run ends with a section that counts the skipped
tests per group and says how to enable each group: otherwise a green run on a plain clone
reads as if every check had run.
"""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent

pytest_plugins = ("pytester",)  # for the test of the skip summary below


@dataclass(frozen=True)
class SkipGroup:
    """Skipped tests recognised by a phrase of their skip reason, and how to enable them."""

    name: str
    phrase: str
    enable: str


E2E_REASON = "needs a kind cluster; run with --with-e2e"
REFERENCE_REASON = (
    "the upstream reference files (../shared/reference) are not available; set R2ACT_REFERENCE_DIR"
)
SKIP_GROUPS = (
    SkipGroup(
        "e2e (kind cluster)",
        "--with-e2e",
        "create the cluster with deploy/kind/up.sh, then run ./scripts/test --with-e2e",
    ),
    SkipGroup(
        "upstream reference files",
        "R2ACT_REFERENCE_DIR",
        "R2ACT_REFERENCE_DIR=/path/to/reference ./scripts/test (a directory holding "
        "online-boutique/kubernetes-manifests.yaml of v0.10.6 and chaos-mesh-crds/ of 2.8.3)",
    ),
    SkipGroup(
        "Prometheus server",
        "prometheus/promtool not installed",
        "install the prometheus and promtool binaries (Debian package 'prometheus'; "
        "./scripts/test installs it when run as root)",
    ),
    SkipGroup(
        "Locust",
        "Locust not installed",
        "run ./scripts/test (it installs Locust 2.43.0 into .venv-locust) or set R2ACT_LOCUST",
    ),
    SkipGroup(
        "Chromium (report browser tests)",
        "chromium not installed",
        "install Debian's 'chromium' package (./scripts/test installs it when run as root) "
        "or set R2ACT_CHROMIUM to a Chromium executable",
    ),
    SkipGroup(
        "shellcheck",
        "shellcheck not installed",
        "install shellcheck (Debian package 'shellcheck')",
    ),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--with-e2e",
        action="store_true",
        default=False,
        help="run end-to-end tests against a kind cluster made by deploy/kind/up.sh",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The longest tests go first (a stable sort keeps the rest in order): started last, one
    # of them would leave a worker alone at the end for as long as it runs.
    items.sort(key=lambda item: "slow" not in item.keywords)
    if config.getoption("--with-e2e"):
        return
    skip = pytest.mark.skip(reason=E2E_REASON)
    for item in items:
        if "e2e" in item.keywords:
            item.add_marker(skip)


def _skip_reason(report: pytest.TestReport) -> str:
    """The reason of a skipped report; pytest stores it as (path, line, 'Skipped: why')."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def skipped_groups(reports: list[pytest.TestReport]) -> list[tuple[str, int, str | None]]:
    """(group, skipped tests, how to enable) per group with skips; other reasons as they are."""
    counts: Counter[str] = Counter()
    hints: dict[str, str | None] = {}
    for report in reports:
        reason = _skip_reason(report)
        group = next((g for g in SKIP_GROUPS if g.phrase in reason), None)
        name = group.name if group else reason
        counts[name] += 1
        hints[name] = group.enable if group else None
    order = [g.name for g in SKIP_GROUPS]
    names = sorted(counts, key=lambda n: (order.index(n) if n in order else len(order), n))
    return [(name, counts[name], hints[name]) for name in names]


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """Say which groups of tests did not run and how to run them."""
    reports = [r for r in terminalreporter.stats.get("skipped", []) if r.skipped]
    groups = skipped_groups(reports)
    if not groups:
        return
    terminalreporter.section("skipped groups")
    for name, count, enable in groups:
        tests = "test" if count == 1 else "tests"
        how = f"; to run them: {enable}" if enable else ""
        terminalreporter.write_line(f"{name}: {count} {tests} skipped{how}")


def _reference_dir() -> Path | None:
    candidates = [os.environ.get("R2ACT_REFERENCE_DIR"), str(REPO.parent / "shared" / "reference")]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """The upstream reference artifacts; skips the test when they are not available."""
    found = _reference_dir()
    if found is None:
        pytest.skip(REFERENCE_REASON)
    return found


@pytest.fixture(scope="session")
def repo_root() -> Path:
    """The repository root."""
    return REPO


_STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture(autouse=True)
def _restore_stop_signals() -> Iterator[None]:
    """Each test starts with the process's stop-signal handlers as they were.

    A collection stopped by a signal ignores later ones on its way out (the CLI exits right
    after); run in-process by a test, that would leave the test worker ignoring SIGTERM,
    and every later test's subprocess or pool worker would inherit it."""
    saved = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    yield
    for signum, handler in saved.items():
        if handler is not None:
            signal.signal(signum, handler)


@pytest.fixture
def flag_shop(monkeypatch: pytest.MonkeyPatch) -> object:
    """The Astronomy Shop 2.2.0 with its feature flags, installed for one test.

    The registered system when it is installed (with its flags and rules filled in if it
    lacks them), else one built from its package's topology, catalogue, flags and policy:
    what a feature-flag campaign, its labels and its mapper read (``System.flags``)."""
    import dataclasses

    from r2act import systems
    from r2act.systems.astronomyshop import ASTRONOMY_SHOP, VERSION
    from r2act.systems.astronomyshop.catalogue import CELLS
    from r2act.systems.astronomyshop.flags import FLAGS_2_2_0
    from r2act.systems.astronomyshop.policy import RULES

    installed = systems.INSTALLED.get(ASTRONOMY_SHOP.system)
    if installed is None:
        shop = systems.System(
            name=ASTRONOMY_SHOP.system,
            title="Astronomy Shop",
            version=VERSION,
            topology=ASTRONOMY_SHOP,
            upstream=(),
            deploy_dir="deploy/astronomyshop/",
            cells=CELLS,
            think_s=5.5,
            flags=FLAGS_2_2_0,
            recovery_rules=RULES,
        )
    else:
        shop = dataclasses.replace(
            installed,
            flags=installed.flags or FLAGS_2_2_0,
            recovery_rules=installed.recovery_rules or RULES,
        )
    monkeypatch.setitem(systems.INSTALLED, shop.name, shop)
    monkeypatch.setitem(systems.SYSTEMS, shop.name, shop.topology)
    return shop


def _r2act_cli(*args: str) -> None:
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "r2act", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"r2act {' '.join(args)} failed: {done.stderr[-2000:]}")


@dataclass(frozen=True)
class SimRuns:
    """Audited simulator runs of the two systems' smoke campaigns, and their datasets."""

    boutique: Path
    astronomy: Path
    astronomy_dataset: Path


@pytest.fixture(scope="session")
def sim_runs(tmp_path_factory: pytest.TempPathFactory) -> SimRuns:
    """Online Boutique's smoke and the Astronomy Shop's smoke, collected and audited once
    per session through the command line (seconds each on the virtual clock); the Astronomy
    Shop run is also built into a dataset."""
    root = tmp_path_factory.mktemp("two-systems")
    runs = {}
    for name in ("smoke", "astronomy-smoke"):
        run = root / name
        _r2act_cli("collect", str(REPO / "campaigns" / f"{name}.yaml"), "--out", str(run), "-q")
        _r2act_cli("audit", str(run), "--workers", "1")
        runs[name] = run
    dataset = root / "astronomy-dataset"
    _r2act_cli("dataset", "build", str(runs["astronomy-smoke"]), "--out", str(dataset), "-q")
    return SimRuns(runs["smoke"], runs["astronomy-smoke"], dataset)


@pytest.fixture(scope="session")
def astronomy_dataset(sim_runs: SimRuns) -> Path:
    """The Astronomy Shop smoke campaign's dataset (6 incidents on the simulator)."""
    return sim_runs.astronomy_dataset
