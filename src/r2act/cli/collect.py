"""``r2act collect`` and ``r2act cleanup``: the only verbs (with replay) that touch a cluster.

Thin: parse options, call ``r2act.collector``, print. The collector guarantees that a fault
it injected is removed on any exit; these commands only choose what to show.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from r2act.cli.app import app, console, console_err

if TYPE_CHECKING:
    from r2act.collector import CampaignSummary, CollectionPlan
    from r2act.collector.cleanup import CleanupReport

_CAMPAIGN = typer.Argument(..., help="Campaign manifest (YAML), e.g. campaigns/smoke.yaml.")
_OUT = typer.Option(
    None,
    "--out",
    help="Run directory (default: ./r2act-runs/<campaign name>, -shard-I-of-N with --shard).",
)
_ONLY = typer.Option([], "--only", help="Collect only this incident id (repeatable).")
_RESUME = typer.Option(
    True, "--resume/--no-resume", help="Skip complete incidents and redo partial ones."
)
_FORCE = typer.Option(False, "--force", help="With --no-resume: redo a non-empty run.")
_DRY_RUN = typer.Option(
    False, "--dry-run", help="Print the plan and the chaos objects; touch nothing."
)
_QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar (for CI).")
_SHARD = typer.Option(
    None,
    "--shard",
    metavar="I/N",
    help="Collect only shard I of N (a fixed share of every cell, spares included; the shard "
    "stops a cell when its own share is clean); merge with `r2act merge`.",
)
_ALL_SPARES = typer.Option(
    False,
    "--all-spares",
    help="Collect every planned spare, even for cells already full (as runs before "
    "stopping full cells did).",
)


@app.command()
def collect(  # noqa: PLR0917 - typer maps parameters to options
    campaign: Path = _CAMPAIGN,
    out: Path | None = _OUT,
    only: list[str] = _ONLY,
    resume_run: bool = _RESUME,
    force: bool = _FORCE,
    dry_run: bool = _DRY_RUN,
    quiet: bool = _QUIET,
    shard: str | None = _SHARD,
    all_spares: bool = _ALL_SPARES,
) -> None:
    """Inject the planned incidents and record their pre, during and post telemetry.

    Every quota repetition first; then, round by round, a cell that has fewer clean
    incidents than its quota (judged by the quality gate's per-incident checks) takes as
    many of its spares as it lacks, and a full cell takes none. With --shard, each shard
    does this for its own share of every cell. Resumable: rerunning skips complete
    incidents, retries the others and continues the rounds. Written to a file or a pipe, it
    prints plain progress lines (done/total, time left) at most every 15 s instead of a bar,
    and always its header and summary. Exit code 0 when every incident it collected is
    complete, 1 when some failed (each failure is in its journal), 2 on bad input, 128+N
    when stopped by signal N.

    Examples: [bold]r2act collect campaigns/smoke.yaml[/]

    [bold]r2act collect campaigns/r2act-302.yaml --shard 2/3 --out runs/shard-2[/]
    """
    from r2act.campaigns.lanes import has_lanes
    from r2act.cli._progress import PlainObserver, RichObserver
    from r2act.collector import collect as run_collect
    from r2act.collector import default_run_dir, plan_collection
    from r2act.collector.merge import claim_shard, refuse_shard_record

    plan = plan_collection(campaign, only)
    if all_spares:
        from dataclasses import replace

        plan = replace(plan, stop_full_cells=False, judge=False)
    record = None
    if shard is not None:
        from r2act.campaigns.shard import parse_shard
        from r2act.collector.merge import shard_collection

        plan, record = shard_collection(plan, parse_shard(shard))
    run_dir = out if out is not None else default_run_dir(plan.manifest)
    if out is None and record is not None:  # shards on one machine never share a directory
        run_dir = run_dir.with_name(f"{run_dir.name}-shard-{record.index}-of-{record.count}")
    if dry_run:
        _print_dry_run(plan, run_dir)
        return
    if record is None:
        refuse_shard_record(run_dir)
    else:
        claim_shard(run_dir, record)
    _print_header(plan, run_dir)
    if has_lanes(plan.manifest.target):
        summary = _collect_lanes(plan, run_dir, resume_run=resume_run, force=force, quiet=quiet)
    elif quiet:
        summary = run_collect(plan, run_dir, resume_run=resume_run, force=force)
    else:
        observer = RichObserver(console) if console.is_terminal else PlainObserver(console)
        with observer:
            summary = run_collect(
                plan, run_dir, resume_run=resume_run, force=force, observer=observer
            )
    # rerunning with --no-resume would redo the incidents this run completed
    rerun = "rerun the same command" if resume_run else "rerun without --no-resume/--force"
    _print_summary(summary, rerun)
    for notice in summary.notices:
        console_err.print(f"[yellow]note[/]: {notice}", highlight=False)
    if summary.interrupted_by is not None:
        raise typer.Exit(128 + summary.interrupted_by)
    if summary.failed:
        raise typer.Exit(1)


_CLEAN_CAMPAIGN = typer.Argument(
    None, help="Campaign manifest; optional with --out (the ledger there names the cluster)."
)
_CLEAN_OUT = typer.Option(
    None,
    "--out",
    help="Directory of the stopped collect or replay (default: ./r2act-runs/<campaign name>).",
)
_ANY_RUN = typer.Option(
    False, "--any-run", help="Also remove r2act objects of other runs (never others' objects)."
)


@app.command()
def cleanup(
    campaign: Path | None = _CLEAN_CAMPAIGN, out: Path | None = _CLEAN_OUT, any_run: bool = _ANY_RUN
) -> None:
    """Revert what a stopped collect or replay left: plan side effects, then faults.

    Reads OUT's ledger, reopens the very cluster that run used, undoes the plan changes and
    removes the faults it lists, then the run's other labelled objects. Needed only after a
    hard stop (SIGKILL, power loss); collect and replay refuse to start until it ran.
    Exit 1 when something could not be reverted.

    Examples: [bold]r2act cleanup campaigns/smoke.yaml[/],
    [bold]r2act cleanup --out RUN/replay/rule[/]
    """
    from r2act.campaigns import SimTarget, load_manifest
    from r2act.cluster.sim.state import state_path
    from r2act.collector import default_run_dir, ledger, open_target
    from r2act.collector.cleanup import reopen, revert
    from r2act.collector.lanes import lane_dirs
    from r2act.errors import DataError

    if out is None:
        if campaign is None:
            raise DataError(
                "cleanup: pass the campaign manifest or --out DIR (the directory of the "
                "stopped collect or replay)"
            )
        out = default_run_dir(load_manifest(campaign))
    ledger.check_out_dir(out)
    if not ledger.holds_run(out):
        raise DataError(
            f"{out}: holds no r2act run, so there is nothing to clean up (pass the --out the "
            "stopped collect or replay used)"
        )
    if lane_dirs(out):  # a lanes run: each lane's own ledger names its own cluster
        _cleanup_lanes(out, any_run)
        return
    with ledger.run_lock(out, "cleanup"):
        left = ledger.pending(out)
        if left.target:
            cluster = reopen(left.target)
            if cluster is None:
                book = ledger.Ledger(out, "cleanup", left.target, left.run_id)
                book.clean()
                book.close()
                console.print(
                    f"the simulated cluster {out} used is gone, so nothing is left on it; "
                    "its ledger is cleared",
                    highlight=False,
                )
                return
        elif campaign is None:
            raise DataError(
                f"{out}: has no ledger naming its cluster (written by an older r2act); "
                "pass the campaign manifest too"
            )
        else:
            manifest = load_manifest(campaign)
            target = manifest.target
            if isinstance(target, SimTarget) and not state_path(out, target.name).is_file():
                raise DataError(
                    f"{out}: holds no simulated cluster {target.name!r}; nothing to clean up"
                )
            cluster = open_target(manifest, out, reverting=True)
            any_run = True  # no ledger, no run id: the old sweep of every r2act object
        report = revert(out, cluster, left, any_run=any_run)
    _print_cleanup(report)
    if report.failed:
        raise typer.Exit(1)


def _cleanup_lanes(out: Path, any_run: bool) -> None:
    """Clean every lane directory of a lanes run that its ledger says needs it."""
    from r2act.collector import ledger
    from r2act.collector.cleanup import reopen, revert
    from r2act.collector.lanes import lane_dirs

    failed = False
    with ledger.run_lock(out, "cleanup"):
        for directory in lane_dirs(out):
            with ledger.run_lock(directory, "cleanup"):
                left = ledger.pending(directory)
                if not left.target:
                    continue  # this lane never started collecting
                console.print(f"{directory.name}:", highlight=False)
                cluster = reopen(left.target)
                if cluster is None:  # its simulated cluster is gone: nothing can be left
                    book = ledger.Ledger(directory, "cleanup", left.target, left.run_id)
                    book.clean()
                    book.close()
                    console.print("  its simulated cluster is gone; ledger cleared")
                    continue
                report = revert(directory, cluster, left, any_run=any_run)
            _print_cleanup(report)
            failed = failed or bool(report.failed)
    if failed:
        raise typer.Exit(1)


def _print_cleanup(report: CleanupReport) -> None:
    for undone in report.undone:
        console.print(f"undid {undone}", highlight=False)
    for ref in report.removed:
        console.print(
            f"removed {ref.kind}/{ref.name} ({ref.incident_id or 'no incident label'}) "
            f"from {ref.namespace}",
            highlight=False,
        )
    for text in report.left_alone:
        console.print(f"[yellow]left alone[/]: {text}", highlight=False)
    for text in report.warnings:
        console.print(f"[yellow]note[/]: {text}", highlight=False)
    if report.others:
        names = ", ".join(f"{r.kind}/{r.name}" for r in report.others)
        console.print(
            f"[yellow]not removed[/] (other r2act runs; add --any-run to remove): {names}",
            highlight=False,
        )
    for text in report.failed:
        console_err.print(f"[red]failed[/]: {text}", highlight=False)
    if not (report.undone or report.removed or report.failed):
        console.print(f"nothing to remove on {report.fingerprint}", highlight=False)


def _collect_lanes(
    plan: CollectionPlan, run_dir: Path, *, resume_run: bool, force: bool, quiet: bool
) -> CampaignSummary:
    """Every lane at once (``collector.lanes``), one line of progress per lane."""
    from r2act.campaigns.estimate import format_duration
    from r2act.cli._lane_progress import LanesProgress
    from r2act.cli._progress import PlainLanesObserver
    from r2act.collector.lanes import NullLanesObserver, collect_lanes

    if quiet:
        done = collect_lanes(
            plan, run_dir, resume_run=resume_run, force=force, observer=NullLanesObserver()
        )
    else:
        terminal = console.is_terminal
        observer = LanesProgress(console) if terminal else PlainLanesObserver(console)
        with observer:
            done = collect_lanes(
                plan, run_dir, resume_run=resume_run, force=force, observer=observer
            )
    for lane, stats in done.lanes.items():
        if stats.incidents:
            console.print(
                f"{lane}: {stats.incidents} incidents in {format_duration(stats.cluster_s)} "
                "of cluster time",
                highlight=False,
            )
    if done.summary.results:
        kind = "simulated wall-clock (what real lanes would need)" if done.virtual else "wall-clock"
        console.print(
            f"{len(done.lanes)} lanes: {format_duration(done.cluster_s)} of {kind}",
            highlight=False,
        )
    return done.summary


def _print_header(plan: CollectionPlan, run_dir: Path) -> None:
    """The first line of every collect, before any work: what goes where (also in a log)."""
    from r2act.campaigns import SimTarget

    target = plan.manifest.target
    where = target.name if isinstance(target, SimTarget) else f"{target.context}/{target.namespace}"
    console.print(
        f"collect {plan.manifest.name}: {len(plan.items)} incidents in the plan, into "
        f"{run_dir} (target {target.kind} {where})",
        highlight=False,
    )


def _print_dry_run(plan: CollectionPlan, run_dir: Path) -> None:
    import yaml

    from r2act.campaigns.quotas import is_spare
    from r2act.collector import layout, resume

    found = resume.scan(layout.raw_dir(run_dir))
    stop = plan.stop_full_cells
    console.print(f"[bold]{plan.manifest.name}[/]: {len(plan.items)} incidents", highlight=False)
    for item in plan.items:
        meta = item.chaos["metadata"]
        spare = stop and is_spare(item.incident)
        done = item.incident.id in found.complete
        state = (
            "complete, skipped"
            if done
            else "spare, only if its cell is short"
            if spare
            else "to collect"
        )
        console.print(
            f"  {item.incident.id}\n    {item.chaos['kind']}/{meta['name']}  [dim]{state}[/]",
            highlight=False,
        )
    todo = [i for i in plan.items if i.incident.id not in found.complete]
    spares = sum(stop and is_spare(i.incident) for i in todo)
    extra = f" (+ up to {spares} spares, only while their cell is short)" if spares else ""
    console.print(
        f"dry run: would collect {len(todo) - spares} incidents{extra} into {run_dir} "
        f"on target {plan.manifest.target.kind}; nothing was touched",
        highlight=False,
    )
    documents = [item.chaos for item in plan.items]
    console.print(yaml.safe_dump_all(documents, sort_keys=False), highlight=False, markup=False)


def _print_summary(summary: CampaignSummary, rerun: str = "rerun the same command") -> None:
    from rich import box
    from rich.table import Table

    where = summary.run_dir
    if not summary.results and summary.interrupted_by is None:
        left = summary.planned - summary.skipped
        console.print(
            f"nothing to do: all {summary.skipped} incidents to collect in {where} are "
            "complete" + (f" ({left} spares not needed: their cells are full)" if left else ""),
            highlight=False,
        )
        _print_spares(summary)
        return
    table = Table(box=box.SIMPLE, title=f"collect {summary.campaign} -> {where}")
    for column in ("planned", "completed", "failed", "skipped (complete)", "remaining"):
        table.add_column(column, justify="right")
    table.add_row(
        str(summary.planned),
        str(summary.completed),
        str(summary.failed),
        str(summary.skipped),
        str(summary.remaining),
    )
    console.print(table)
    _print_spares(summary)
    failed = [r for r in summary.results if r.status == "failed"]
    for result in failed[:20]:
        console.print(f"[red]failed[/] {result.incident_id}: {result.error}", highlight=False)
    if len(failed) > 20:
        console.print(f"... and {len(failed) - 20} more failed incidents", highlight=False)
    if failed and summary.interrupted_by is None:
        console.print(
            f"{len(failed)} incidents failed; their steps are in {where}/raw/<id>/journal.jsonl. "
            f"{rerun.capitalize()} to retry them (complete incidents are kept).",
            highlight=False,
        )
    if summary.interrupted_by is not None:
        console.print(
            f"[yellow]interrupted[/]: {summary.remaining} incidents remain; {rerun} to resume",
            highlight=False,
        )


def _print_spares(summary: CampaignSummary) -> None:
    """What the stopping rule did: spares taken, spares a full cell never needed, and the
    cells whose spares ran out (the audit's report lists them too)."""
    spares = summary.spares
    if spares is None or not spares.planned:
        return
    console.print(
        f"spares: {spares.taken} of {spares.planned} collected or tried, {spares.not_needed} "
        f"skipped because their cell was full (judging incidents took "
        f"{summary.judge_cpu_s:.1f} CPU s)",
        highlight=False,
    )
    if spares.short:
        lacking = sum(want - have for have, want in spares.short.values())
        console.print(
            f"[yellow]{len(spares.short)} cells ran out of spares[/], {lacking} clean "
            "incidents short (the audit lists them under 'Cells below quota'):",
            highlight=False,
        )
        for (service, fault, intensity), (have, want) in list(spares.short.items())[:20]:
            console.print(
                f"  {service} {fault.value} {intensity.value}: {have} of {want} clean",
                highlight=False,
            )


__all__ = ["cleanup", "collect"]
