"""``r2act campaign``: check a manifest, list the incidents it plans, render their chaos objects.

Nothing here touches a cluster, so these commands are the safe way to see what a campaign
would do before ``r2act collect`` does it.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.table import Table

from r2act.cli.app import app, console, console_err
from r2act.errors import DataError

if TYPE_CHECKING:
    from r2act.campaigns import Manifest
    from r2act.schema import PlannedIncident, Topology

campaign_app = typer.Typer(
    name="campaign",
    help=(
        "Check a campaign manifest and see what it would inject, without a cluster.\n\n"
        "Examples:\n\n"
        "  r2act campaign validate campaigns/smoke.yaml\n\n"
        "  r2act campaign plan campaigns/r2act-302.yaml --stats\n\n"
        "  r2act campaign render campaigns/smoke.yaml --out chaos/"
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
)
app.add_typer(campaign_app, name="campaign")

ManifestArg = Annotated[
    Path, typer.Argument(help="Campaign manifest (YAML), e.g. campaigns/smoke.yaml.")
]


@campaign_app.command()
def validate(manifest: ManifestArg) -> None:
    """Check a manifest; on error print [bold]FILE:LINE: field: problem (fix)[/] and exit 2.

    Example: [bold]r2act campaign validate campaigns/smoke.yaml[/]
    """
    from r2act.campaigns import load_manifest, plan_incidents

    loaded = load_manifest(manifest)
    incidents = plan_incidents(loaded)
    console.print(
        f"[green]ok[/] {manifest}: campaign [bold]{loaded.name}[/] on {loaded.target.kind} "
        f"plans {len(incidents)} incidents ({len(loaded.services)} services x "
        f"{len(loaded.faults)} fault types)",
        highlight=False,
    )


@campaign_app.command()
def plan(
    manifest: ManifestArg,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="One JSON object per line: id, service, fault_type, intensity, ..."
        ),
    ] = False,
    stats: Annotated[
        bool,
        typer.Option(
            "--stats", help="Also score the gold RCA through the fixed RCA-to-action mapper."
        ),
    ] = False,
    lanes: Annotated[
        list[int],
        typer.Option(
            "--lanes",
            min=1,
            max=1000,
            help="Estimate the real-cluster wall-clock on this many lanes (repeatable; "
            "default: the manifest's lanes).",
        ),
    ] = [],  # noqa: B006 - typer reads the default, never mutates it
) -> None:
    """List the incidents a campaign plans, in collection order, with their stable ids.

    Examples:

      [bold]r2act campaign plan campaigns/r2act-302.yaml[/]  (table + per-cell summary)

      [bold]r2act campaign plan campaigns/r2act-302.yaml --json | wc -l[/]

      [bold]r2act campaign plan campaigns/r2act-302.yaml --lanes 1 --lanes 4 --lanes 10[/]
    """
    from r2act.campaigns import load_manifest, plan_incidents
    from r2act.campaigns.quotas import is_spare

    loaded = load_manifest(manifest)
    incidents = plan_incidents(loaded)
    main = [i for i in incidents if not is_spare(i)]
    if as_json:
        for incident in incidents:
            print(json.dumps(_row(incident)))
    else:
        console.print(_incident_table(incidents))
        console.print(_cell_table(main, loaded.services))
        cells = Counter((i.service, i.fault.type) for i in main)
        by_intensity = Counter(i.fault.intensity.value for i in main)
        spares = len(incidents) - len(main)
        console.print(
            f"{len(main)} incidents in {len(cells)} non-empty cells "
            f"({', '.join(f'{k} {v}' for k, v in sorted(by_intensity.items()))})"
            + (f" + {spares} spares, collected only while their cell is short" if spares else ""),
            highlight=False,
        )
    if stats:
        _print_stats(main, loaded.topology, stderr=as_json)
    from r2act.campaigns.lanes import lane_targets

    default = [len(lane_targets(loaded.target))]  # the manifest's own lanes
    _print_estimate(loaded, incidents, lanes or default, stderr=as_json)


def _print_estimate(
    manifest: Manifest, incidents: list[PlannedIncident], lanes: list[int], *, stderr: bool
) -> None:
    """The expected real-cluster wall-clock: phase windows plus the lifecycle's waits."""
    from r2act.campaigns.estimate import estimate, format_duration, incident_time

    out = console_err if stderr else console
    if not incidents:
        return
    one = incident_time(incidents[0], manifest)
    out.print(
        f"on a real cluster each incident takes {format_duration(one.total_low_s)} to "
        f"{format_duration(one.total_high_s)}: {one.windows_s:g} s of phase windows, "
        f"{one.low_s:g} s (shortest) to {one.high_s:g} s (every timeout) of removing the "
        "fault, verifying recovery and reading telemetry",
        highlight=False,
    )
    for count in sorted(set(lanes)):
        guess = estimate(manifest, incidents, count)
        out.print(
            f"expected wall-clock on {count} lane{'s' if count > 1 else ''}: "
            f"{format_duration(guess.low_s)} to {format_duration(guess.high_s)} "
            f"({guess.incidents} incidents: quota + {guess.spares_expected} of "
            f"{guess.spares_planned} spares, expected at {guess.rejection:.0%} gate "
            f"rejections; {guess.per_lane} on the busiest lane)",
            highlight=False,
        )


@campaign_app.command()
def render(
    manifest: ManifestArg,
    out: Annotated[
        Path, typer.Option("--out", help="Directory to write <incident id>.yaml files to.")
    ],
) -> None:
    """Write each planned incident's Chaos Mesh object to [bold]OUT/<id>.yaml[/].

    The files are exactly what [bold]r2act collect[/] would create; inspect them or apply one
    by hand with kubectl.

    Example: [bold]r2act campaign render campaigns/smoke.yaml --out chaos/[/]
    """
    import yaml

    from r2act.campaigns import load_manifest, plan_incidents, render_chaos

    loaded = load_manifest(manifest)
    incidents = plan_incidents(loaded)
    try:
        out.mkdir(parents=True, exist_ok=True)
        for incident in incidents:
            obj = render_chaos(incident, loaded.namespace, loaded.topology)
            (out / f"{incident.id}.yaml").write_text(yaml.safe_dump(obj, sort_keys=False))
    except OSError as error:
        raise DataError(
            f"{out}: cannot write chaos objects: {error} (choose a writable --out)"
        ) from None
    console.print(f"wrote {len(incidents)} chaos objects to {out}", highlight=False)


def _row(incident: PlannedIncident) -> dict[str, object]:
    return {
        "id": incident.id,
        "service": incident.service,
        "fault_type": incident.fault.type.value,
        "intensity": incident.fault.intensity.value,
        "repetition": incident.repetition,
        "spare": incident.quota is not None and incident.repetition > incident.quota,
    }


_HIDDEN = frozenset(
    {"port", "target", "method", "path", "direction", "container", "dependency", "abort"}
)
_SHORT = {  # by FaultType value (a StrEnum member is its value as a key)
    "pod_failure": "Pod",
    "cpu_saturation": "CPU",
    "memory_pressure": "Mem",
    "network_delay": "Net",
    "http_error": "HTTP-E",
    "http_abort": "HTTP-A",
    "dns_fault": "DNS-F",
    "dns_random": "DNS-R",
    "feature_flag": "Flag",
}


def _incident_table(incidents: list[PlannedIncident]) -> Table:
    table = Table(title="Planned incidents (ids: --json; * spare)", box=box.SIMPLE_HEAD)
    for column in ("service", "fault", "intensity", "rep"):
        table.add_column(column, no_wrap=True)
    table.add_column("parameters", overflow="fold")  # a value cut short reads as another value
    for incident in incidents:
        params = incident.fault.parameters
        shown = " ".join(f"{k}={v}" for k, v in params.items() if k not in _HIDDEN)
        table.add_row(
            incident.service,
            _SHORT[incident.fault.type],
            incident.fault.intensity.value,
            f"r{incident.repetition:02d}"
            + ("*" if incident.quota is not None and incident.repetition > incident.quota else ""),
            shown,
        )
    return table


def _cell_table(incidents: list[PlannedIncident], services: list[str]) -> Table:
    from r2act.schema import FaultType

    cells = Counter((i.service, i.fault.type) for i in incidents)
    faults = [f for f in FaultType if any(key[1] == f for key in cells)]
    table = Table(title="Incidents per service x fault cell", box=box.SIMPLE_HEAD, pad_edge=False)
    table.add_column("service", no_wrap=True)
    for fault in faults:
        table.add_column(_SHORT[fault], justify="right", no_wrap=True, min_width=len(_SHORT[fault]))
    table.add_column("total", justify="right", no_wrap=True, min_width=5)
    for service in services:
        counts = [cells.get((service, f), 0) for f in faults]
        name = service.removesuffix("service") or service
        table.add_row(name, *(str(c) if c else "." for c in counts), str(sum(counts)))
    return table


def _print_stats(incidents: list[PlannedIncident], topology: Topology, *, stderr: bool) -> None:
    """Gold plans and the gold RCA + mapper under each policy; P- size; label identifiability."""
    try:
        from r2act.actions import POLICIES, is_valid, label_incident, map_rca
        from r2act.campaigns import render_chaos
        from r2act.campaigns.identifiability import conflicts, definition_key, oracle_rca_s
    except ImportError as error:
        raise DataError(f"--stats needs r2act.actions ({error}); reinstall r2act") from None
    total: Counter[str] = Counter()
    valid: dict[str, Counter[str]] = {name: Counter() for name in POLICIES}
    gold_valid: Counter[str] = Counter()
    negatives: Counter[str] = Counter()
    for incident in incidents:
        total[incident.fault.type.value] += 1
        for name, policy in POLICIES.items():
            labels = label_incident(incident, topology, policy)
            gold_valid[name] += int(is_valid(labels.gold_plan, labels))
            negatives[name] += len(labels.invalid_plans)
            plan = map_rca(
                incident.service, incident.fault.type, labels.action_space, topology, policy
            )
            valid[name][incident.fault.type.value] += int(is_valid(plan, labels))
    out = console_err if stderr else console
    table = Table(title="Gold RCA + mapper: recovery validity per policy")
    table.add_column("fault type")
    table.add_column("incidents", justify="right")
    for name in POLICIES:
        table.add_column(name, justify="right")
    for fault in sorted(total):
        rates = (
            f"{valid[name][fault]} ({valid[name][fault] / total[fault]:.2f})" for name in POLICIES
        )
        table.add_row(fault, str(total[fault]), *rates)
    out.print(table)
    n = sum(total.values())
    for name in POLICIES:
        n_valid = sum(valid[name].values())
        out.print(
            f"{name}: gold RCA + mapper valid for {n_valid}/{n} ({n_valid / max(n, 1):.3f}); "
            f"gold plans valid for {gold_valid[name]}/{n}; {negatives[name]} invalid plans",
            highlight=False,
        )
    rows = [(definition_key(render_chaos(i, "default", topology)), i.service) for i in incidents]
    mixed = conflicts(rows)
    out.print(
        f"fault-definition oracle RCA-S {oracle_rca_s(rows):.3f} "
        f"({len(mixed)} definitions carry more than one root-cause label)",
        highlight=False,
    )
