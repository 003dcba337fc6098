"""``r2act collect`` and ``r2act cleanup``: the only verbs (with replay) that touch a cluster.

Thin: parse options, call ``r2act.collector``, print. The collector guarantees that a fault
it injected is removed on any exit; these commands only choose what to show.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from r2act.cli.app import app, console

if TYPE_CHECKING:
    from r2act.collector import CampaignSummary, CollectionPlan

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
    help="Collect only shard I of N (a fixed share of every cell); merge with `r2act merge`.",
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
) -> None:
    """Inject every planned incident and record its pre, during and post telemetry.

    Resumable: rerunning skips complete incidents and retries the others. Exit code 0 when
    every incident is complete, 1 when some failed (each failure is in its journal),
    2 on bad input, 128+N when stopped by signal N.

    Examples: [bold]r2act collect campaigns/smoke.yaml[/]

    [bold]r2act collect campaigns/r2act-302.yaml --shard 2/3 --out runs/shard-2[/]
    """
    from r2act.campaigns.lanes import has_lanes
    from r2act.cli._progress import RichObserver
    from r2act.collector import collect as run_collect
    from r2act.collector import default_run_dir, plan_collection
    from r2act.collector.merge import claim_shard, refuse_shard_record

    plan = plan_collection(campaign, only)
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
    if has_lanes(plan.manifest.target):
        summary = _collect_lanes(plan, run_dir, resume_run=resume_run, force=force, quiet=quiet)
    elif quiet:
        summary = run_collect(plan, run_dir, resume_run=resume_run, force=force)
    else:
        with RichObserver(console) as observer:
            summary = run_collect(
                plan, run_dir, resume_run=resume_run, force=force, observer=observer
            )
    # rerunning with --no-resume would redo the incidents this run completed
    rerun = "rerun the same command" if resume_run else "rerun without --no-resume/--force"
    _print_summary(summary, rerun)
    if summary.interrupted_by is not None:
        raise typer.Exit(128 + summary.interrupted_by)
    if summary.failed:
        raise typer.Exit(1)


@app.command()
def cleanup(campaign: Path = _CAMPAIGN, out: Path | None = _OUT) -> None:
    """Remove every chaos object labelled app.kubernetes.io/managed-by=r2act on the target.

    Needed only after a hard kill; collect refuses to start while such objects exist.

    Example: [bold]r2act cleanup campaigns/smoke.yaml[/]
    """
    from r2act.campaigns import load_manifest
    from r2act.collector import default_run_dir, open_target, sweep

    manifest = load_manifest(campaign)
    run_dir = out if out is not None else default_run_dir(manifest)
    cluster = open_target(manifest, run_dir)
    removed = sweep(cluster)
    if not removed:
        console.print(f"nothing to remove on {cluster.fingerprint}", highlight=False)
    for ref in removed:
        console.print(
            f"removed {ref.kind}/{ref.name} ({ref.incident_id or 'no incident label'}) "
            f"from {ref.namespace}",
            highlight=False,
        )


def _collect_lanes(
    plan: CollectionPlan, run_dir: Path, *, resume_run: bool, force: bool, quiet: bool
) -> CampaignSummary:
    """Every lane at once (``collector.lanes``), one line of progress per lane."""
    from r2act.campaigns.estimate import format_duration
    from r2act.cli._lane_progress import LanesProgress
    from r2act.collector.lanes import NullLanesObserver, collect_lanes

    if quiet:
        done = collect_lanes(
            plan, run_dir, resume_run=resume_run, force=force, observer=NullLanesObserver()
        )
    else:
        with LanesProgress(console) as observer:
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
    return done.summary


def _print_dry_run(plan: CollectionPlan, run_dir: Path) -> None:
    import yaml

    from r2act.collector import layout, resume

    found = resume.scan(layout.raw_dir(run_dir))
    console.print(f"[bold]{plan.manifest.name}[/]: {len(plan.items)} incidents", highlight=False)
    for item in plan.items:
        meta = item.chaos["metadata"]
        done = item.incident.id in found.complete
        console.print(
            f"  {item.incident.id}\n    {item.chaos['kind']}/{meta['name']}"
            f"  [dim]{'complete, skipped' if done else 'to collect'}[/]",
            highlight=False,
        )
    pending = sum(i.incident.id not in found.complete for i in plan.items)
    console.print(
        f"dry run: would collect {pending} incidents into {run_dir} "
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
        console.print(
            f"nothing to do: all {summary.planned} incidents in {where} are complete",
            highlight=False,
        )
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


__all__ = ["cleanup", "collect"]
