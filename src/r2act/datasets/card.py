"""``README.md``: the dataset card, in the Hugging Face convention (YAML front matter).

Every number in the card comes from ``Composition``; the composition itself is embedded as
a JSON comment so ``validate`` can check that the tables and figures still describe the
data. Nothing time-dependent is written (the build date is the campaign's last timestamp).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Final

from r2act.datasets import layout
from r2act.datasets.composition import Composition
from r2act.datasets.figures import COMPOSITION_PNG, HEATMAP_PNG, LOGSCALE_PNG

LICENSE: Final = "cc-by-4.0"
EMBED_START: Final = "<!-- r2act:composition "
EMBED_END: Final = " -->"
_EMBED = re.compile(re.escape(EMBED_START) + r"(\{.*?\})" + re.escape(EMBED_END), re.S)


@dataclass(frozen=True)
class BuildInfo:
    """How the dataset was made: the card's provenance section."""

    name: str
    campaigns: list[str]
    tool_version: str
    target_kinds: list[str]
    manifest_sha256: list[str]
    folds_seed: int
    built_from: str
    date: str
    audit_counts: dict[str, int]
    matplotlib: str
    empty_tables: tuple[str, ...] = ()
    """Tables without a row: no Hugging Face config (``datasets`` cannot load an empty one)."""
    systems: list[str] = field(default_factory=list)
    """The systems under test the records hold (``metadata.system``), in order."""
    mechanisms: list[str] = field(default_factory=list)
    """The records' injection mechanisms (``labels.mechanism``), distinct and sorted."""
    fault_types: int = 0
    """How many fault types the records hold."""
    optional_tables: tuple[str, ...] = ()
    """Optional method-visible tables the dataset holds (``layout.OPTIONAL_TABLES``: the
    traces table when its runs collected spans); their rows, configs and views are listed
    only then, so a card without them reads as it always did."""
    noise_levels: list[str] = field(default_factory=list)
    """The records' noise levels (``metadata.noise``), in order; ``not recorded`` for runs
    collected before the campaign's noise key (a simulator without background)."""


_INJECTORS = (
    ("chaos-mesh-", "Chaos Mesh"),
    ("config-fault-", "r2act ConfigFault"),
    ("flag-fault-", "r2act FlagFault"),
)
"""Mechanism prefix -> the injector that realises it (``quality_gate.records``)."""


def _injectors(mechanisms: list[str]) -> list[str]:
    names = [n for prefix, n in _INJECTORS if any(m.startswith(prefix) for m in mechanisms)]
    return names + sorted(
        {m for m in mechanisms if not any(m.startswith(p) for p, _ in _INJECTORS)}
    )


def _systems_line(
    systems: list[str], mechanisms: list[str] | None = None, fault_types: int = 8
) -> str:
    """The card's first limitation: which systems the dataset holds, by their own names.

    With several systems, the injectors and the number of fault types are the records'
    (the systems' fault types differ: a flag on one, none on the other); the one-system
    line is the one Online Boutique datasets have always carried.
    """
    from r2act.systems import INSTALLED  # with their renderers: only when a card is written

    titles = [INSTALLED[s].title if s in INSTALLED else s for s in systems]
    if len(titles) <= 1:
        injector = "one fault injector (Chaos Mesh); eight fault types."
        return f"- One system ({titles[0] if titles else 'unknown'}) and {injector}"
    injectors = _injectors(mechanisms or []) or ["unknown"]
    return (
        f"- {len(titles)} systems ({', '.join(titles)}), scored per system; fault "
        f"injectors: {', '.join(injectors)}; {fault_types} fault types."
    )


def _size_category(n: int) -> str:
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if n < limit:
            return label
    return "100K<n<1M"


def _config_name(path: str) -> str:
    """The Hugging Face config of a table: its stem (``answers/...`` tables: ``answers_`` +)."""
    stem = PurePosixPath(path).stem
    return stem if layout.is_visible(path) else f"answers_{stem}"


def _tables(info: BuildInfo) -> list[str]:
    """The dataset's tables in ``layout.SCHEMAS`` order: all of ``TABLES`` and the optional
    ones it holds."""
    return [t for t in layout.SCHEMAS if t in layout.TABLES or t in info.optional_tables]


def _views(info: BuildInfo) -> dict[str, tuple[str, ...]]:
    """The views this dataset can serve: those whose tables it holds."""
    held = set(_tables(info))
    return {v: f for v, f in layout.VIEWS.items() if set(f) <= held}


def front_matter(info: BuildInfo, comp: Composition) -> str:
    """The YAML header: license, task categories, size, and one config per table.

    Every table is Parquet and its own config (a config holds files of one set of
    columns); a view is the set of configs it loads. The method-visible ``cases`` table is
    the default; the answers' configs are prefixed ``answers_``.
    """
    tables = [t for t in _tables(info) if t not in info.empty_tables]

    header = {
        "license": LICENSE,
        "pretty_name": info.name,
        "task_categories": ["text-classification", "tabular-classification"],
        "tags": [
            "aiops",
            "root-cause-analysis",
            "incident-response",
            "kubernetes",
            "microservices",
            "chaos-engineering",
            "recovery",
        ],
        "size_categories": [_size_category(comp.incidents)],
        "configs": [
            {
                "config_name": _config_name(path),
                "data_files": [{"split": "test", "path": path}],
                **({"default": True} if path == layout.CASES else {}),
            }
            for path in tables
        ],
    }
    import yaml  # only a card being written needs it (validate imports this module)

    return "---\n" + yaml.safe_dump(header, sort_keys=False, width=1000) + "---\n"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return out + ["| " + " | ".join(r) + " |" for r in rows]


def _counts(title: str, counts: dict[str, int], total: int) -> list[str]:
    rows = [[k, str(v), f"{100 * v / max(total, 1):.1f}%"] for k, v in counts.items()]
    return _table([title, "incidents", "share"], rows)


def entry_point(systems: list[str]) -> str:
    """The name of the systems' entry point, as the dataset's texts name it ("entry point"
    when a system is unknown or the systems do not share one)."""
    from r2act.systems import INSTALLED

    names = {INSTALLED[s].topology.entrypoint if s in INSTALLED else "" for s in systems}
    name = names.pop() if len(names) == 1 else ""
    return name or "entry point"


_VISIBLE_DOCS: Final = {
    layout.CASES: "one row per case: fold, system, sizes, services logging, action space",
    layout.LOGS: "log lines keyed by case_id and phase",
    layout.EVENTS: "Kubernetes events (none about chaos objects)",
    layout.METRICS: "metric samples in long format",
    layout.STATE: "deployments and pods at the end of each phase (JSON)",
    layout.REQUESTS: "derived request series at the metric step: per route and called "
    f"service, request rate, error rate, latency quantiles (from the {layout.ENTRY}'s "
    "request log and Locust's stats; the raw lines stay in logs)",
    layout.FOLDS: "5 folds of case ids, stratified by service x fault cell",
}
_OPTIONAL_DOCS: Final = {
    layout.TRACES: "spans, one row per span: trace and span ids, parent, service, operation, "
    "kind, start, duration, status and attributes (JSON), keyed by case_id and phase; only "
    "the services the system instruments emit spans",
}
_ANSWER_DOCS: Final = {
    layout.INCIDENTS: "case_id <-> incident_id, labels, gold plan, P+ and P-, the fault, "
    "the whole record",
    layout.KEY: "the salt of the case ids",
    layout.AUDIT_TRAIL: "incidents kept out of the main set, with their reasons",
    f"{layout.PROVENANCE}/": "chaos objects, statuses and events; annotations",
}


def render_card(info: BuildInfo, comp: Composition) -> str:
    """The whole README.md."""
    scale = comp.log_records
    services = list(comp.services)
    faults = list(comp.fault_types)
    cells = [[s, *(str(comp.cells.get(f"{s}/{f}", 0)) for f in faults)] for s in services]
    sizes = sorted(comp.cells.values()) or [0]
    audit = ", ".join(f"{n} {g}" for g, n in info.audit_counts.items())
    lines = [
        front_matter(info, comp),
        f"# {info.name}",
        "",
        f"A recovery benchmark for Kubernetes microservices built by r2act {info.tool_version}: "
        f"{comp.incidents} quality-audited incidents, each with logs, Kubernetes events, "
        "metrics and cluster state from a pre-fault, during-fault and post-fault window, a "
        "root-cause label, the incident's admissible action space, a gold recovery plan, "
        "valid plan patterns (P+) and tagged invalid plans (P-).",
        "",
        "## Summary",
        "",
        *_table(
            ["statistic", "value"],
            [
                ["main incidents", str(comp.incidents)],
                ["root-cause services", str(len(comp.services))],
                ["fault types", str(len(comp.fault_types))],
                ["service x fault cells", str(len(comp.cells))],
                ["cell size", f"{sizes[0]}-{sizes[-1]}"],
                ["log records", f"{scale.total:,}"],
                ["log records per incident (mean)", f"{scale.mean:,.2f}"],
                ["method-visible events", f"{comp.event_records:,}"],
                ["metric samples", f"{comp.metric_samples:,}"],
                ["invalid plans", str(comp.invalid_plans)],
                ["audit", audit],
            ],
        ),
        "",
        "## Composition",
        "",
        f"![composition]({COMPOSITION_PNG})",
        "",
        *_counts("service", comp.services, comp.incidents),
        "",
        *_counts("fault type", comp.fault_types, comp.incidents),
        "",
        *_counts("intensity", comp.intensities, comp.incidents),
        "",
        *_counts("gold operation", comp.gold_operations, comp.incidents),
        "",
        "### Service x fault cells",
        "",
        f"![cells]({HEATMAP_PNG})",
        "",
        *_table(["service", *faults], cells),
        "",
        "### Log records per incident",
        "",
        f"![log records]({LOGSCALE_PNG})",
        "",
        *_table(
            ["min", "Q1", "median", "Q3", "mean", "max"],
            [
                [
                    f"{scale.min:,}",
                    f"{scale.q1:,.2f}",
                    f"{scale.median:,.2f}",
                    f"{scale.q3:,.2f}",
                    f"{scale.mean:,.2f}",
                    f"{scale.max:,}",
                ]
            ],
        ),
        "",
        "## Files",
        "",
        "Every table is Parquet (nested values are JSON strings). A method may read only "
        "the method-visible tables, keyed by an opaque `case_id`; everything under "
        "`answers/` names or implies the answer and is for scoring, replay and training "
        "labels only.",
        "",
        *_table(
            ["file", "a method may read it", "content"],
            [
                [p, "yes", layout.described(d, entry_point(info.systems))]
                for p, d in _VISIBLE_DOCS.items()
            ]
            + [[p, "yes", d] for p, d in _OPTIONAL_DOCS.items() if p in info.optional_tables]
            + [[p, "**no**", d] for p, d in _ANSWER_DOCS.items()]
            + [
                [layout.CROISSANT, "-", "Croissant metadata"],
                [layout.SHA256SUMS, "-", "checksums of every file (`sha256sum -c SHA256SUMS`)"],
                [f"{layout.SCHEMA_DIR}/", "-", "JSON Schemas of records and table rows"],
            ],
        ),
        "",
        "Views (the paper's modality ablation) are subsets of the method-visible tables: "
        + "; ".join(
            f"`{view}` = " + " + ".join(f"`{_config_name(p)}`" for p in files)
            for view, files in _views(info).items()
        )
        + " (Hugging Face config names, one per table"
        + (
            f"; {', '.join(f'`{t}`' for t in info.empty_tables)} hold no row here and have "
            "no config"
            if info.empty_tables
            else ""
        )
        + ").",
        "",
        "Case ids are `case-` + 12 hex digits of HMAC-SHA256(salt, incident id); the salt "
        "is derived from the answers and stored only in `answers/key.json`, so the ids "
        "cannot be reversed from what a method reads. The action space is the same for "
        "every case of a system (it lists every deployment, route and dependency), so it "
        "carries no answer. Predictions may be keyed by `case_id` (what a method knows) or "
        "by `incident_id`; `r2act evaluate` and `r2act replay` accept both.",
        "",
        "## How to load",
        "",
        "```python",
        "import r2act.datasets",
        'cases = r2act.datasets.read_table("path/to/dataset", "cases.parquet")',
        "one = [cases.case_id[0]]   # an opaque case id",
        'ds = r2act.datasets.load("path/to/dataset", view="logs+events", incidents=one)',
        "ds.cases     # pandas DataFrame: the case's fold, sizes and action space",
        "ds.logs      # its log lines (ds.events: its events), keyed by case_id",
        'answers = r2act.datasets.load_records("path/to/dataset")  # scorers only',
        "```",
        "",
        "Without `incidents=`, `load` reads every row of the view into memory "
        f"({comp.log_records.total:,} log lines here; keys are read as categoricals and "
        "text as Arrow strings). To visit every case with one case's observations in "
        'memory, iterate `r2act.baselines.DatasetReader("path/to/dataset", view="full")'
        ".cases()`.",
        "",
        'Or without r2act: `datasets.load_dataset("path/to/dataset", "logs")` (any config '
        'above), or `pandas.read_parquet("observations/logs.parquet")`. Check integrity '
        "with `r2act dataset validate DIR`.",
        "",
        "## How it was built",
        "",
        f"- campaign(s): {', '.join(info.campaigns)}; manifest SHA-256: "
        f"{', '.join(info.manifest_sha256)}",
        f"- tool: r2act {info.tool_version}; target kind(s): {', '.join(info.target_kinds)}",
        f"- collected: pre / during / post windows per incident; last timestamp {info.date}",
        f"- noise level(s): {', '.join(info.noise_levels) or 'not recorded'} (the background "
        "the cluster showed besides each fault; docs/simulator.md)",
        f"- audited by `r2act audit` ({audit}); built by `r2act dataset build` from "
        f"`{info.built_from}`",
        f"- folds seed {info.folds_seed}; figures by matplotlib {info.matplotlib}",
        "",
        "## Known limitations",
        "",
        _systems_line(info.systems, info.mechanisms, info.fault_types),
        "- On a `sim` target the telemetry comes from r2act's simulator, not a real cluster; "
        "methods tuned on it may not transfer.",
        "- HTTP faults are route rules at the entry point (gRPC services need a mesh for "
        "HTTPChaos); DNS faults break name resolution for the callers of a service.",
        "- Recovery labels follow one named policy (see each record's `policy`); other "
        "reasonable recoveries may be labelled invalid. Live replay can check them.",
        "- The Hugging Face configs are one per table (each a single `test` split) because "
        "the tables differ in columns; `load_dataset` loads one table at a time, so join "
        "them on `case_id` yourself (`r2act.datasets.load` reads every table of a view at "
        "once).",
        "- Incidents without an observable effect or a verified recovery are left out, which "
        "under-represents subtle faults (see audit_trail.jsonl).",
        "- Incident ids follow the `<system>_<service>_<fault>_<intensity>_rNN` convention and "
        "therefore name the root cause: they appear only under `answers/`.",
        "",
        EMBED_START + json.dumps(comp.model_dump(mode="json"), sort_keys=True) + EMBED_END,
        "",
    ]
    return "\n".join(lines)


def embedded_composition(card: str) -> Composition | None:
    """The composition a card claims, or None when the card carries none."""
    match = _EMBED.search(card)
    return Composition.model_validate_json(match.group(1)) if match else None
