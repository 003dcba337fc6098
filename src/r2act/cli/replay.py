"""``r2act replay``: execute predicted plans on a live (or simulated) cluster, gated by validity.

Thin: find the dataset and target, call :mod:`r2act.replay`, print the report. A plan outside
its incident's action space is refused before anything touches the cluster.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from r2act.cli._datasets import dataset_dir
from r2act.cli.app import app, console, console_err
from r2act.errors import DataError

if TYPE_CHECKING:
    from collections.abc import Mapping

    from r2act.campaigns import KubernetesTarget, SimTarget
    from r2act.cluster.base import Cluster
    from r2act.evaluation.predictions import ParsedPrediction, PredictionFile
    from r2act.replay import ReplayReport
    from r2act.schema import BenchmarkRecord, NoiseLevel, Topology

_PREDICTIONS = typer.Argument(..., help="Predictions file (JSON lines), e.g. rule.jsonl.")
_DATASET = typer.Option(
    None,
    "--dataset",
    help="Dataset directory (default: RUN/dataset when the file is in RUN/predictions/, "
    "else the newest ./r2act-runs/*/dataset).",
)
_TARGET = typer.Option(
    None,
    "--target",
    help="'sim' (the simulated cluster) or a campaign manifest whose target (e.g. a kind "
    "cluster) receives the faults; it passes the same safety checks as collection. Default: "
    "the dataset's recorded target (a simulated dataset replays on the simulator; a "
    "Kubernetes dataset needs its manifest here).",
)
_WINDOW = typer.Option(75.0, "--window", help="Seconds a plan gets to restore health (1-3600).")
_INTERVAL = typer.Option(5.0, "--probe-interval", help="Seconds between health probes (0.1-300).")
_CONSECUTIVE = typer.Option(3, "--consecutive", help="Healthy probes in a row = recovered (1-100).")
BOUNDS = {
    "--window": (1.0, 3600.0),
    "--probe-interval": (0.1, 300.0),
    "--consecutive": (1.0, 100.0),
}
"""Replay's option bounds: an hour-long window is already far past any recovery."""
_ONLY = typer.Option([], "--only", help="Replay only this incident id (repeatable).")
_OUT = typer.Option(None, "--out", help="Output directory (default: RUN/replay/<file stem>).")
_DRY_RUN = typer.Option(False, "--dry-run", help="Say what would run or be refused; touch nothing.")
_QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar (for CI).")


def _check_bounds(**values: float) -> None:
    """DataError (one line, exit 2) for an option outside its bounds, inf and nan included."""
    for name, value in values.items():
        option = "--" + name.replace("_", "-")
        low, high = BOUNDS[option]
        if not (math.isfinite(value) and low <= value <= high):
            raise DataError(f"{option} {value:g}: must be between {low:g} and {high:g}")


def _validate_dataset(directory: Path) -> None:
    """Replay trusts no dataset it has not fully validated (checksums, records, card)."""
    from r2act import datasets

    problems = [p for p in datasets.validate(directory) if p.severity == "error"]
    if problems:
        raise DataError(
            f"{directory}: fails validation ({len(problems)} problem(s), first: "
            f"{problems[0].line()}); replay runs only on a valid dataset "
            f"(see r2act dataset validate {directory})"
        )


def _identity(directory: Path, cluster: Cluster) -> dict[str, str]:
    """What a resumed replay must share with the first run: dataset bytes and target."""
    sums = directory / "SHA256SUMS"
    digest = hashlib.sha256(sums.read_bytes()).hexdigest() if sums.is_file() else "none"
    return {"dataset": f"{directory.resolve()}@{digest[:16]}", "target": cluster.fingerprint}


def _cluster(
    target: str | None, out: Path, records: list[BenchmarkRecord]
) -> tuple[Cluster, SimTarget | KubernetesTarget]:
    from r2act.campaigns import GlitchRates, SimTarget, load_manifest
    from r2act.cluster.connect import connect
    from r2act.collector import open_target

    if target is None:
        if any(r.metadata.target_kind != "sim" for r in records):
            raise DataError(
                "the dataset was collected on Kubernetes; replay needs its target: pass "
                "--target CAMPAIGN.yaml (or --target sim to use the simulator instead)"
            )
        target = "sim"
    if target == "sim":
        campaigns = sorted({r.metadata.campaign for r in records})
        name = f"replay-{campaigns[0]}" if campaigns else "replay"
        # Collection glitches (failed injections, scrape gaps, slow recovery) model what goes
        # wrong while building a dataset; replay judges plans, so its cluster has none.
        quiet = GlitchRates(injection_failure=0.0, metric_gap=0.0, slow_recovery=0.0)
        seeds = sorted({s for r in records if (s := r.metadata.target_seed) is not None})
        sim = SimTarget(kind="sim", seed=seeds[0] if seeds else 0, name=name, glitches=quiet)
        noise, users = replay_conditions(records)
        topology = _one_system(records)
        cluster = connect(
            sim, namespace="default", workspace=out, users=users, noise=noise, topology=topology
        )
        return cluster, sim
    manifest = load_manifest(Path(target))
    return open_target(manifest, out), manifest.target


def _one_system(records: list[BenchmarkRecord]) -> Topology:
    """The topology a simulated replay runs: the one system its records were collected on."""
    from r2act.systems import SYSTEMS

    systems = sorted({r.metadata.system for r in records})
    if len(systems) != 1 or systems[0] not in SYSTEMS:
        raise DataError(
            f"the dataset holds incidents of {', '.join(systems) or 'no system'}; a simulated "
            "replay runs one installed system (replay each system's dataset on its own)"
        )
    return SYSTEMS[systems[0]]


def replay_conditions(records: list[BenchmarkRecord]) -> tuple[NoiseLevel, int]:
    """The noise level and user count a simulated replay runs with: the dataset's own.

    A plan is judged on the cluster its incident was collected on, so replay rebuilds it
    with the records' noise level and load. A record without a noise level was collected
    before noise levels existed, by a simulator without background: ``none`` reproduces
    it. A dataset mixing levels (or loads) replays at the most common one (ties: the level
    first by name, the smaller user count), since one replay cluster serves every incident."""
    from r2act.schema import NoiseLevel

    levels = Counter(r.metadata.noise or NoiseLevel.NONE for r in records)
    users = Counter(
        int(u) if isinstance(u := r.metadata.load_profile.get("users", 10), int | float) else 10
        for r in records
    )
    noise = min(levels, key=lambda n: (-levels[n], n.value)) if levels else NoiseLevel.REALISTIC
    count = min(users, key=lambda n: (-users[n], n)) if users else 10
    return noise, count


def _refuse_leftovers(cluster: Cluster, out: Path) -> None:
    """Replay on a cluster still holding r2act faults would judge plans on a broken system."""
    from r2act.errors import SafetyError

    found = cluster.leftovers()
    if found:
        names = ", ".join(f"{r.kind}/{r.name}" for r in found)
        raise SafetyError(
            f"{cluster.fingerprint}: still holds r2act chaos objects ({names}); replay "
            f"refuses to judge plans there (run `r2act cleanup --out DIR` for the run that "
            f"left them; this replay writes to {out})"
        )


def _check_input(
    path: Path,
    directory: Path,
    parsed: PredictionFile,
    by_id: Mapping[str, BenchmarkRecord],
    only: list[str],
) -> None:
    """Warn about dropped lines and unknown --only ids; DataError when nothing can be replayed."""
    if parsed.line_issues:
        console_err.print(
            Text(
                f"warning: {parsed.line_issues} line(s) of {path} could not be used and are not "
                f"replayed (see them with r2act evaluate {path})"
            ),
            style="yellow",
        )
    replayable = {i for i in by_id if i in parsed.predictions}
    if not replayable:
        raise DataError(
            f"{path}: no prediction names an incident of {directory} "
            "(nothing to replay; check the incident ids and --dataset)"
        )
    unknown_only = [i for i in only if i not in replayable]
    if only and replayable.isdisjoint(only):
        raise DataError(
            f"--only {' '.join(unknown_only)}: no incident of {directory} with a prediction "
            f"in {path} (pick ids from its answers/incidents.parquet)"
        )
    if unknown_only:
        console_err.print(
            Text(f"--only: no dataset incident with a prediction for {', '.join(unknown_only)}"),
            style="yellow",
        )


def _table(report: ReplayReport, width: int = 200) -> Table:
    """Per-fault-type counts; on a narrow terminal the padding goes, never a digit."""
    compact = width < 74
    table = Table(
        title="Replay: per fault type",
        box=box.SIMPLE_HEAD,
        pad_edge=not compact,
        padding=(0, 0) if compact else (0, 1),
    )
    table.add_column("fault type", no_wrap=True)
    # valid = offline-valid; two-line headers keep the numeric columns narrow
    for column in ("planned", "valid", "recovered", "gated", "gated\nrate", "no\neffect"):
        table.add_column(column, justify="right", no_wrap=True)
    for row in report.rows:
        table.add_row(
            row.fault_type,
            str(row.planned),
            str(row.offline_valid),
            str(row.recovered),
            str(row.gated_recovered),
            f"{row.gated_rate:.3f}",
            str(row.no_effect),
        )
    return table


def _agreement(report: ReplayReport) -> Table:
    a = report.agreement
    table = Table(title="Offline validity vs live recovery", box=box.SIMPLE_HEAD)
    table.add_column("")
    table.add_column("recovered", justify="right")
    table.add_column("not recovered", justify="right")
    table.add_row("offline-valid", str(a.valid_recovered), str(a.valid_not_recovered))
    table.add_row("offline-invalid", str(a.invalid_recovered), str(a.invalid_not_recovered))
    return table


@app.command()
def replay(  # noqa: PLR0917 - typer maps parameters to options
    predictions: Path = _PREDICTIONS,
    dataset: Path | None = _DATASET,
    target: str | None = _TARGET,
    window: float = _WINDOW,
    probe_interval: float = _INTERVAL,
    consecutive: int = _CONSECUTIVE,
    only: list[str] = _ONLY,
    out: Path | None = _OUT,
    dry_run: bool = _DRY_RUN,
    quiet: bool = _QUIET,
) -> None:
    """Re-inject each incident's fault, apply the predicted plan, and watch health recover.

    Plans outside the incident's action space are refused, never executed. Resumable:
    outcomes already in OUT/replay.jsonl (for the same plans and settings) are kept. Exit
    code 1 when cluster errors left some predictions unjudged, 2 on bad input, 128+N when
    stopped by signal N (the fault and the plan's changes are reverted first); after a
    SIGKILL, run r2act cleanup --out OUT.

    Example: [bold]r2act replay rule.jsonl --window 75[/]
    """
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    from r2act import datasets
    from r2act.cli._progress import PlainProgress
    from r2act.collector import ledger
    from r2act.collector.cleanup import describe_target, notices
    from r2act.evaluation.predictions import read_predictions
    from r2act.replay import ReplayOutcome, ReplaySettings, run_replay, summarize, to_markdown
    from r2act.replay.report import ttr_text
    from r2act.replay.run import write_report_files

    _check_bounds(window=window, probe_interval=probe_interval, consecutive=consecutive)
    parsed = read_predictions(predictions)  # fail fast on a bad path
    directory = dataset_dir(dataset, [predictions])
    _validate_dataset(directory)
    records = datasets.load_records(directory)
    parsed = parsed.resolved(datasets.ids.aliases(records))  # case ids -> incident ids
    by_id = {r.incident_id: r for r in records}
    out_dir = out if out is not None else directory.parent / "replay" / predictions.stem
    settings = ReplaySettings(
        window_s=window, probe_interval_s=probe_interval, consecutive=consecutive
    )
    _check_input(predictions, directory, parsed, by_id, only)
    if dry_run:
        _dry_run(by_id, parsed.predictions, only)
        return
    todo = [i for i in by_id if i in parsed.predictions and (not only or i in only)]
    ledger.check_out_dir(out_dir)
    # connecting runs the target's safety check (opt-in, context) before anything is written
    cluster, target_model = _cluster(target, out_dir, records)
    with ledger.run_lock(out_dir, "replay"):
        ledger.refuse_if_pending(out_dir, f"r2act cleanup --out {out_dir}")
        _refuse_leftovers(cluster, out_dir)
        run_id = ledger.run_id(out_dir, "replay")
        if hasattr(cluster, "run_id"):
            cluster.run_id = run_id  # a plan then removes only this run's faults
        book = ledger.Ledger(
            out_dir, "replay", describe_target(target_model, cluster, out_dir), run_id
        )
        # without a terminal (a log, a CI job) plain lines at a bounded rate, not a bar
        plain = (
            None
            if quiet or console.is_terminal
            else PlainProgress(console, "replay", noun="predictions")
        )
        if plain is not None:
            plain.start(len(todo), 0)
        try:
            with Progress(
                TextColumn("[bold]replay[/] {task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeRemainingColumn(),
                console=console,
                disable=quiet or not console.is_terminal,
                transient=True,
            ) as progress:
                task = progress.add_task("", total=len(todo))

                def started(incident: str) -> None:
                    progress.update(task, description=incident)
                    if plain is not None:
                        plain.working(incident)

                def judged(outcome: ReplayOutcome) -> None:
                    progress.advance(task)
                    if plain is not None:
                        plain.finished(outcome.status == "error")

                run = run_replay(
                    cluster,
                    by_id,
                    parsed,
                    out_dir,
                    settings,
                    only=only,
                    on_start=started,
                    on_outcome=judged,
                    ledger=book,
                    identity=_identity(directory, cluster),
                )
        finally:
            book.close()
            for notice in notices(cluster):
                console_err.print(Text(f"note: {notice}"), style="yellow")
    report = summarize(run.outcomes)
    write_report_files(out_dir, report.model_dump_json(indent=1), to_markdown(report))
    console.print(_table(report, width=console.width))
    console.print(_agreement(report))
    if report.ttr_values_s:
        console.print(f"time to recover: {ttr_text(report)}", highlight=False)
    if report.findings:
        kinds = Counter(f.kind for f in report.findings)
        listed = ", ".join(f"{kind} {n}" for kind, n in sorted(kinds.items()))
        console.print(f"label findings: {listed} (listed in report.md)", highlight=False)
    if run.resumed:
        console.print(f"resumed: {run.resumed} outcomes were already in {out_dir}/replay.jsonl")
    if run.unknown_ids:
        console.print(f"[yellow]{len(run.unknown_ids)} predictions name unknown incidents[/]")
    console.print(
        f"refused {report.refused}, not judged (fault left the system healthy) "
        f"{report.no_effect}, errors {report.errors}; report: {out_dir}/report.md",
        highlight=False,
    )
    if report.errors:  # the cluster, not the plan, failed: the run is not a full verdict
        console_err.print(
            f"{report.errors} predictions could not be judged because of cluster errors "
            f"(each outcome's error is in {out_dir}/replay.jsonl); rerun the same command "
            "to try them again (judged ones are kept)",
            highlight=False,
        )
        raise typer.Exit(1)


def _dry_run(
    by_id: dict[str, BenchmarkRecord], parsed: Mapping[str, ParsedPrediction], only: list[str]
) -> None:
    from r2act.replay.run import request_of

    table = Table(title="Replay plan (dry run: nothing touched)", box=box.SIMPLE_HEAD)
    table.add_column("incident")
    table.add_column("plan")
    table.add_column("would")
    for incident, record in by_id.items():
        line = parsed.get(incident)
        if line is None or (only and incident not in only):
            continue
        request = request_of(line)
        plan = request.plan
        if plan is None:
            verdict = f"refuse: {request.plan_problem or 'no plan'}"
        elif not record.action_space.contains(plan):
            verdict = "refuse: outside the action space"
        else:
            verdict = "execute"
        table.add_row(incident, "null" if plan is None else plan.model_dump_json(), verdict)
    console.print(table)
