"""``r2act audit [RUN_DIR]``: run the quality gate over a run's raw incidents.

Thin: resolve the run, call ``quality_gate.run_audit``, print the group counts and the
most frequent reasons. The full story is in ``RUN/audit/report.md``.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import typer

from r2act.actions import DEFAULT_POLICY, PAPER_POLICY
from r2act.cli.app import app, console

_RUN = typer.Argument(None, help="Run directory (default: the newest ./r2act-runs/<campaign>/).")
_WORKERS = typer.Option(None, "--workers", min=1, help="Worker processes (default: CPUs, max 4).")
_QUIET = typer.Option(False, "--quiet", "-q", help="No progress bar (for CI).")
_POLICY = typer.Option(
    str(DEFAULT_POLICY),
    "--policy",
    help=f"Recovery policy to label records under: {DEFAULT_POLICY} (default, what recovers "
    f"under the real mechanics) or {PAPER_POLICY} (the paper's Table II).",
)


@app.command()
def audit(
    run_dir: Path | None = _RUN,
    workers: int | None = _WORKERS,
    quiet: bool = _QUIET,
    policy: str = _POLICY,
) -> None:
    """Check every raw incident and group it: main, warning, failed or pilot.

    Writes [bold]RUN/audit/audit.jsonl[/] (one verdict per incident with every problem),
    [bold]records/<id>.json[/] for main incidents and [bold]report.md[/].

    Example: [bold]r2act audit r2act-runs/smoke --policy paper-table-ii/1[/]
    """
    from r2act.actions import policy_named
    from r2act.cli._counting import counting
    from r2act.quality_gate import REPORT_MD, Group, resolve_run_dir, run_audit
    from r2act.quality_gate.rawstore import list_incidents

    chosen = policy_named(policy)
    run, picked = resolve_run_dir(run_dir, needs="raw")
    if picked:
        console.print(f"auditing the most recent run: {run}", highlight=False)
    total = len(list_incidents(run))
    with counting(console, "audit", total, quiet=quiet) as advance:
        result = run_audit(
            run, workers=workers, progress=lambda v: advance(v.incident_id), policy=chosen
        )
    counts = ", ".join(f"{result.count(g)} {g.value}" for g in Group)
    console.print(
        f"{len(result.verdicts)} incidents: {counts} (labels: policy {chosen})", highlight=False
    )
    console.print(
        f"judged once: {result.reused} verdicts reused as stored, {result.relabelled} relabelled "
        f"from stored summaries, {result.judged} judged from the raw files",
        highlight=False,
    )
    reasons = Counter(code for v in result.verdicts for code in v.reasons)
    for code, n in reasons.most_common(8):
        console.print(f"  {code}: {n}", highlight=False)
    from r2act.quality_gate.report import shortfalls

    short = shortfalls(result.verdicts)
    if short:
        lacking = sum(q - m for m, q in short.values())
        console.print(
            f"[yellow]warning:[/] {len(short)} cells lack {lacking} main incidents "
            "(listed in the report; raise the campaign's spares and rerun collect)"
        )
    console.print(f"report: {result.audit_dir / REPORT_MD}", highlight=False)
