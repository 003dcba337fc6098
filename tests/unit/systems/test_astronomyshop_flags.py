"""The Astronomy Shop's flag catalogue and fault cells against the pinned upstream sources.

Every flag of both copies of ``demo.flagd.json`` (the app's ``src/flagd`` and the chart's
``flagd/``) is catalogued once with the file's variants; every cited line holds the code it
names; the readers of a flag are exactly the services whose code names its key; the
no-shell list is the distroless final ``FROM`` of each Dockerfile; every cell names a
Deployment of the chart's rendered manifest. Skips with a reason without the reference.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from r2act.schema import FaultType, Intensity
from r2act.systems.astronomyshop.catalogue import CELLS, NO_SHELL, SOURCES, no_shell_reasons
from r2act.systems.astronomyshop.flags import FLAGS, flag
from r2act.systems.flags import FeatureFlag, FlagEffect, FlagVariant, Source

APP = "opentelemetry-demo-2.2.0"
CHART = "opentelemetry-demo-chart-0.40.10"
FLAG_FILES = (f"{APP}/src/flagd/demo.flagd.json", f"{CHART}/flagd/demo.flagd.json")
RENDERED = f"{CHART}/examples/bring-your-own-observability/rendered/component.yaml"
VERSION_FLAGS = FLAGS["2.2.0"]


@pytest.fixture(scope="module")
def ref(reference_dir: Path) -> Path:
    """The reference folder, when it holds the pinned Astronomy Shop and its chart."""
    for name in (APP, CHART):
        if not (reference_dir / name).is_dir():
            pytest.skip(
                f"{reference_dir / name} is missing (the pinned Astronomy Shop sources); "
                "set R2ACT_REFERENCE_DIR to a reference folder that holds it"
            )
    return reference_dir


@pytest.fixture(scope="module")
def deployments(ref: Path) -> dict[str, dict[str, Any]]:
    docs = yaml.safe_load_all((ref / RENDERED).read_text())
    return {d["metadata"]["name"]: d for d in docs if d and d.get("kind") == "Deployment"}


def _typed(value: object) -> tuple[str, object]:
    """A value with its JSON type, so ``true`` and ``1`` differ as they do in the file."""
    return (type(value).__name__, value)


@pytest.mark.parametrize("path", FLAG_FILES)
def test_every_flag_is_catalogued_once_with_the_files_variants(ref: Path, path: str) -> None:
    flags = json.loads((ref / path).read_text())["flags"]
    keys = [f.key for f in VERSION_FLAGS]
    assert len(keys) == len(set(keys)), "a flag is catalogued twice"
    assert set(keys) == set(flags), f"catalogue and {path} differ"
    for entry in VERSION_FLAGS:
        spec = flags[entry.key]
        file_variants = [(name, _typed(v)) for name, v in spec["variants"].items()]
        ours = [(v.name, _typed(v.value)) for v in entry.variants]
        assert ours == file_variants, entry.key
        assert entry.off == spec["defaultVariant"], entry.key


@pytest.mark.parametrize("entry", VERSION_FLAGS, ids=lambda f: f.key)
def test_every_cited_line_holds_the_code_it_names(ref: Path, entry: FeatureFlag) -> None:
    for source in entry.sources:
        lines = (ref / source.path).read_text().splitlines()
        assert 1 <= source.line <= len(lines), f"{source.path} has no line {source.line}"
        assert source.code in lines[source.line - 1], (
            f"{entry.key}: {source.path} L{source.line} is {lines[source.line - 1]!r}, "
            f"not {source.code!r}"
        )


def test_the_cell_tables_cited_lines_hold_their_code(ref: Path) -> None:
    for source in SOURCES:
        lines = (ref / source.path).read_text().splitlines()
        assert source.code in lines[source.line - 1], f"{source.path} L{source.line}"


def test_the_frontend_sets_no_deadline_on_its_calls(ref: Path) -> None:
    """The cpu and delay cells rely on it: a slow backend is a slow page, not a failure."""
    for path in (ref / APP / "src" / "frontend" / "gateways").rglob("*.ts"):
        text = path.read_text().lower()
        assert "deadline" not in text and "timeout" not in text, path


def _code_readers(ref: Path, key: str) -> set[str]:
    """Service directories of ``src/`` whose code (not docs, not the flag file) names ``key``."""
    src = ref / APP / "src"
    found = set()
    for path in src.rglob("*"):
        if not path.is_file() or path.suffix in {".md", ".json"} or path.parent.name == "flagd":
            continue
        try:
            text = path.read_text()
        except UnicodeDecodeError:
            continue
        if key in text:
            found.add(path.relative_to(src).parts[0])
    return found


@pytest.mark.parametrize("entry", VERSION_FLAGS, ids=lambda f: f.key)
def test_readers_are_the_services_whose_code_names_the_key(ref: Path, entry: FeatureFlag) -> None:
    assert set(entry.readers) == _code_readers(ref, entry.key)
    assert entry.service in entry.readers
    for reader in entry.readers:
        cited = [s for s in entry.sources if s.path.startswith(f"{APP}/src/{reader}/")]
        assert cited, f"{entry.key}: no cited line in {reader}'s code"


def _final_from(dockerfile: Path) -> tuple[int, str]:
    """The final ``FROM``'s line and base image, stage aliases and ARG defaults resolved."""
    args: dict[str, str] = {}
    stages: dict[str, str] = {}
    last = (0, "")
    for number, line in enumerate(dockerfile.read_text().splitlines(), start=1):
        if m := re.match(r"ARG (\w+)=\"?([^\"\s]+)\"?", line):
            args[m.group(1)] = re.sub(r"\$\{(\w+)\}", lambda a: args.get(a.group(1), ""), m[2])
        if m := re.match(r"FROM (?:--platform=\S+ )?(\S+)(?: AS (\S+))?", line, re.IGNORECASE):
            image = re.sub(r"\$\{(\w+)\}", lambda a: args.get(a.group(1), ""), m.group(1))
            image = stages.get(image, image)
            if m.group(2):
                stages[m.group(2)] = image
            last = (number, image)
    return last


def test_no_shell_is_exactly_the_distroless_final_froms(ref: Path) -> None:
    src = ref / APP / "src"
    distroless = {}
    for dockerfile in src.glob("*/**/Dockerfile"):
        number, image = _final_from(dockerfile)
        if "distroless" in image:
            distroless[dockerfile.relative_to(src).parts[0]] = (number, image)
    assert set(NO_SHELL) == set(distroless)
    for service, (path, line, base) in NO_SHELL.items():
        assert (line, base) == distroless[service], service
        assert path.startswith(f"{APP}/src/{service}/")
        assert base in no_shell_reasons()[service]


def test_every_cell_names_a_chart_deployment(deployments: dict[str, dict[str, Any]]) -> None:
    assert CELLS
    for cell in CELLS:
        assert cell.service in deployments, cell
    assert len({(c.service, c.fault_type) for c in CELLS}) == len(CELLS)


def _env(deployment: dict[str, Any]) -> dict[str, str]:
    main = deployment["spec"]["template"]["spec"]["containers"][0]
    return {e["name"]: e.get("value", "") for e in main.get("env", [])}


def test_dns_cells_have_a_host_port_address_in_some_holder(
    deployments: dict[str, dict[str, Any]],
) -> None:
    """The planner writes ``host:port``: a cell needs holders, none holding a URL for it."""
    for cell in CELLS:
        if cell.fault_type not in (FaultType.DNS_FAULT, FaultType.DNS_RANDOM):
            continue
        held = [
            value
            for d in deployments.values()
            for name, value in _env(d).items()
            if name.endswith("_ADDR") and re.match(rf"(https?://)?{cell.service}:\d+$", value)
        ]
        assert held, f"no deployment holds an address of {cell.service}"
        assert all("://" not in v for v in held), f"{cell.service} is held as a URL: {held}"


def test_memory_cells_have_a_limit_and_go_cells_a_fixed_gomemlimit(
    deployments: dict[str, dict[str, Any]],
) -> None:
    for cell in CELLS:
        if cell.fault_type != FaultType.MEMORY_PRESSURE:
            continue
        main = deployments[cell.service]["spec"]["template"]["spec"]["containers"][0]
        assert main["resources"]["limits"]["memory"], cell.service
        if cell.service in ("checkout", "product-catalog"):
            assert _env(deployments[cell.service])["GOMEMLIMIT"] == "16MiB"


def test_graded_flags_grow_from_moderate_to_severe() -> None:
    for entry in VERSION_FLAGS:
        moderate = entry.variant(Intensity.MODERATE).value
        severe = entry.variant(Intensity.SEVERE).value
        assert moderate != entry.default.value, entry.key
        if not isinstance(moderate, bool):
            assert float(moderate) <= float(severe), entry.key


def test_effects_carry_their_parameters() -> None:
    for entry in VERSION_FLAGS:
        if entry.effect == FlagEffect.DIAL_FAILURE:
            assert entry.callee and entry.callee != entry.service
        if entry.effect == FlagEffect.CALL_ERRORS:
            assert entry.operation and entry.error
        assert entry.verdict.endswith("."), entry.key
        assert not (entry.user_visible and not entry.realizable) or entry.effect in (
            FlagEffect.LOAD_SURGE,
        ), f"{entry.key}: users would see an unrealizable flag"


def test_flag_lookup_names_what_exists() -> None:
    assert flag("2.2.0", "adFailure").service == "ad"
    with pytest.raises(KeyError, match=r"known: .*adFailure"):
        flag("2.2.0", "adFailur")
    with pytest.raises(KeyError, match="no flag profile"):
        flag("9.9.9", "adFailure")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"off": "missing"}, "is not a variant"),
        ({"intensities": ((Intensity.MODERATE, "on"),)}, "every intensity"),
        ({"intensities": ((Intensity.MODERATE, "on"), (Intensity.SEVERE, "off"))}, "on-variant"),
        ({"sources": ()}, "cite at least one"),
        ({"variants": (FlagVariant("on", True), FlagVariant("on", False))}, "duplicate"),
    ],
)
def test_a_malformed_flag_is_refused_in_one_line(change: dict[str, Any], message: str) -> None:
    base: dict[str, Any] = {
        "key": "k",
        "service": "s",
        "readers": ("s",),
        "variants": (FlagVariant("on", True), FlagVariant("off", False)),
        "off": "off",
        "intensities": ((Intensity.MODERATE, "on"), (Intensity.SEVERE, "on")),
        "effect": FlagEffect.NONE,
        "realizable": False,
        "user_visible": False,
        "verdict": "v.",
        "sources": (Source("p", 1, "c"),),
        "evidence": "e",
    }
    with pytest.raises(ValueError, match=message) as raised:
        FeatureFlag(**{**base, **change})
    assert "\n" not in str(raised.value)


def _section(repo_root: Path, heading: str) -> str:
    text = (repo_root / "docs" / "faults.md").read_text()
    start = text.index(f"\n### {heading}\n")
    end = text.find("\n### ", start + 1)
    return text[start : end if end > 0 else None]


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def test_evidence_pointers_name_headings_of_the_faults_page(repo_root: Path) -> None:
    text = (repo_root / "docs" / "faults.md").read_text()
    anchors = {_slug(h) for h in re.findall(r"^#+ (.+)$", text, re.MULTILINE)}
    pointers = {c.evidence for c in CELLS} | {f.evidence for f in VERSION_FLAGS}
    for pointer in pointers:
        page, anchor = pointer.split("#")
        assert page == "docs/faults.md" and anchor in anchors, pointer


def test_the_per_flag_table_says_what_the_catalogue_says(repo_root: Path) -> None:
    rows = {}
    row = re.compile(r"\| `(\w+)` \([^|]*\) \| ([^|]+) \| [^|]+ \| (yes|no) \| (yes|no) \|")
    for line in _section(repo_root, "Astronomy Shop 2.2.0: per-flag realizability").splitlines():
        if m := row.match(line):
            rows[m.group(1)] = (m.group(2).split()[0], m.group(3) == "yes", m.group(4) == "yes")
    assert rows == {f.key: (f.service, f.realizable, f.user_visible) for f in VERSION_FLAGS}


def test_the_per_cell_table_counts_the_catalogues_cells(repo_root: Path) -> None:
    section = _section(repo_root, "Astronomy Shop 2.2.0: per-cell table")
    counts = [int(n) for n in re.findall(r"^\| [^|]+ \((\d+)\) \|", section, re.MULTILINE)]
    assert sum(counts) == len(CELLS)
    assert f" {len(CELLS)} cells." in section
    for fault in {c.fault_type for c in CELLS}:
        assert fault.value in section, fault
