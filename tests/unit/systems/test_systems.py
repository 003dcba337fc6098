"""Systems are plugins: each is one package, looked up by name, and the engine names none.

Issue 20: a system's services appear only under ``systems/`` (and docs and tests); the
registry lists every installed system with its version and fault families; the shipped
campaigns only use cells a system's catalogue declares realizable; the package has no
import circles.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import grimp
import pytest
import yaml
from typer.testing import CliRunner

from r2act.campaigns import load_manifest, plan_incidents
from r2act.cli import _register_commands, app
from r2act.schema import FaultType
from r2act.systems import INSTALLED, SYSTEMS, get_system, system_of

REPO = Path(__file__).resolve().parents[3]
SRC = REPO / "src" / "r2act"
ENGINE_PACKAGES = (
    "actions",
    "cluster",
    "collector",
    "quality_gate",
    "datasets",
    "evaluation",
    "replay",
    "agents",
    "baselines",
)


def _service_pattern() -> re.Pattern[str]:
    names = sorted({n for s in INSTALLED.values() for n in s.services}, key=len, reverse=True)
    return re.compile(r"(?<![\w.-])(" + "|".join(map(re.escape, names)) + r")(?![\w-])")


def _hits() -> dict[str, int]:
    pattern = _service_pattern()
    found: dict[str, int] = {}
    for package in ENGINE_PACKAGES:
        for path in sorted((SRC / package).rglob("*.py")):
            count = len(pattern.findall(path.read_text()))
            if count:
                found[path.relative_to(SRC).as_posix()] = count
    return found


def test_no_application_service_name_appears_in_the_engine() -> None:
    """The engine and the offline stages name no application service: docstrings, help texts
    and comments included, so a second system never finds the first one's names there."""
    hits = _hits()
    assert not hits, (
        f"application service names outside systems/: {hits}; a system's names, texts and "
        "rules belong in its package under src/r2act/systems/ (docs/systems.md)"
    )


def test_the_service_name_check_sees_a_name_the_engine_must_not_spell(tmp_path: Path) -> None:
    pattern = _service_pattern()
    assert pattern.findall('CALLEE = "cartservice"  # cartservice.invalid stays a hit') == [
        "cartservice",
        "cartservice",
    ]
    assert not pattern.findall("frontend_route = entrypoint  # my-frontend-x, r2act.frontend")


def test_systems_list_shows_online_boutique_with_its_version_and_fault_families() -> None:
    _register_commands()
    result = CliRunner().invoke(app, ["systems", "list"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if "Online Boutique" in line)
    assert "onlineboutique" in row and "v0.10.6" in row
    for family in ("PodChaos", "StressChaos", "NetworkChaos", "HTTPChaos", "ConfigFault"):
        assert family in result.output
    listed = CliRunner().invoke(app, ["systems", "list", "--json"])
    rows = [__import__("json").loads(x) for x in listed.output.splitlines()]
    assert [r["name"] for r in rows] == list(INSTALLED)
    ob = rows[0]
    assert ob["version"] == "v0.10.6"
    assert ob["fault_families"]["HTTPChaos"] == ["http_error", "http_abort"]
    paper_eight = {f.value for f in FaultType if f != FaultType.FEATURE_FLAG}
    assert {f for fs in ob["fault_families"].values() for f in fs} == paper_eight


@pytest.mark.parametrize("manifest", sorted((REPO / "campaigns").glob("*.yaml")), ids=str)
def test_every_shipped_campaign_cell_is_in_its_systems_catalogue(manifest: Path) -> None:
    loaded = load_manifest(manifest)
    system = get_system(loaded.system)
    realizable = {(c.service, c.fault_type) for c in system.cells}
    planned = {(i.service, i.fault.type) for i in plan_incidents(loaded)}
    assert planned, manifest
    assert planned <= realizable, sorted(planned - realizable)


def test_a_manifest_system_resolves_to_its_topology_and_unknown_names_are_refused() -> None:
    name = yaml.safe_load((REPO / "campaigns" / "smoke.yaml").read_text())["system"]
    assert SYSTEMS[name] is get_system(name).topology
    assert system_of(get_system(name).topology) is get_system(name)
    with pytest.raises(KeyError, match="installed: onlineboutique, astronomyshop"):
        get_system("toyshop")


def test_the_package_has_no_import_circles() -> None:
    graph = grimp.build_graph("r2act", exclude_type_checking_imports=False)
    adjacency = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in adjacency[module]:
            if other not in adjacency:
                continue
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == module:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for module in sorted(adjacency):
        if module not in index:
            visit(module)
    assert not circles, circles


def test_a_manifest_without_a_system_plans_the_default_system_as_before(tmp_path: Path) -> None:
    smoke = REPO / "campaigns" / "smoke.yaml"
    text = smoke.read_text()
    assert "\nsystem: onlineboutique\n" in text
    old = tmp_path / "old.yaml"
    old.write_text(text.replace("\nsystem: onlineboutique\n", "\n"))
    before, after = load_manifest(smoke), load_manifest(old)
    assert after.system == before.system == "onlineboutique"
    assert plan_incidents(after) == plan_incidents(before)


def test_the_dataset_card_names_the_systems_its_records_hold() -> None:
    from r2act.datasets.card import _systems_line

    one = _systems_line(["onlineboutique"])
    assert one == (
        "- One system (Online Boutique) and one fault injector (Chaos Mesh); eight fault types."
    )
    two = _systems_line(["onlineboutique", "toyshop"])
    assert two.startswith("- 2 systems (Online Boutique, toyshop), scored per system;")
