"""``r2act report``: write the static results site of a run (or a dataset) and its files.

Thin: find the inputs, build the site with :mod:`r2act.report`, say where it is. Bad input
(no dataset, a missing file, an unknown method in ``--compare``, an --out that is not a
report) is one line and exit 2; nothing outside --out is written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from r2act.cli._choices import DEFAULT_REPLICATES, DEFAULT_SEED
from r2act.cli._datasets import RUNS_DIR
from r2act.cli.app import app, console, console_err
from r2act.errors import DataError


def _newest_run() -> Path:
    runs = [p.parent for p in RUNS_DIR.glob("*/dataset") if p.is_dir()]
    if not runs:
        raise DataError(
            f"{RUNS_DIR}/*/dataset: no run with a dataset here (pass RUN or DATASET, or build "
            "one: r2act collect, r2act audit, r2act dataset build)"
        )
    latest = max(runs, key=lambda p: p.stat().st_mtime)
    console_err.print(f"using run {latest}", highlight=False)
    return latest


def _pairs(values: list[str]) -> list[tuple[str, str]]:
    out = []
    for value in values:
        a, sep, b = value.partition(",")
        if not sep or not a or not b:
            raise DataError(f"--compare {value}: give two method names as A,B (e.g. rule,keyword)")
        out.append((a.strip(), b.strip()))
    return out


@app.command()
def report(  # noqa: PLR0917 - typer maps parameters to options
    source: Annotated[
        Path | None,
        typer.Argument(
            help="A run directory (its dataset, predictions/, replay/, audit/ are all read) or "
            "a dataset directory. Default: the newest ./r2act-runs/* with a dataset."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Site directory to write (default: RUN/report, or DATASET/../report)."
        ),
    ] = None,
    predictions: Annotated[
        list[Path] | None,
        typer.Option("--predictions", help="More predictions files (repeatable)."),
    ] = None,
    replay: Annotated[
        list[Path] | None,
        typer.Option(
            "--replay", help="More replay directories, each with replay.jsonl (repeatable)."
        ),
    ] = None,
    trajectories: Annotated[
        list[Path] | None,
        typer.Option(
            "--trajectories",
            help="More trajectory directories, NAME.trajectories/ as `r2act agent run` writes "
            "them (repeatable; NAME links them to predictions NAME.jsonl).",
        ),
    ] = None,
    compare: Annotated[
        list[str] | None,
        typer.Option("--compare", help="Add the paired comparison of methods A,B (repeatable)."),
    ] = None,
    by: Annotated[
        str, typer.Option("--by", help="Strata of --compare: fault_type or service.")
    ] = "fault_type",
    seed: Annotated[int, typer.Option("--seed", help="Bootstrap seed.")] = DEFAULT_SEED,
    replicates: Annotated[
        int, typer.Option("--replicates", min=100, help="Bootstrap replicates B.")
    ] = DEFAULT_REPLICATES,
    serve: Annotated[
        bool, typer.Option("--serve", help="After writing, preview it on http://127.0.0.1:PORT/.")
    ] = False,
    port: Annotated[int, typer.Option("--port", min=0, max=65535, help="Port of --serve.")] = 8000,
) -> None:
    """Write a static results site: leaderboard, Fig. 2, incidents, trajectories, audit.

    Self-contained: no server, no CDN; open SITE/index.html from the file system (or use
    --serve). The leaderboard has every method's metrics with 95% intervals (sortable), the
    RCA-S vs Valid figure and breakdowns by fault type, service, intensity and system. Each
    incident page has the fault and its window, a timeline, a searchable log viewer, the
    action space with the valid and invalid plans, every method's prediction with its error
    category, the replay verdict, and links to agent trajectories. The audit page lists what
    the quality gate kept out, and why. Answers are shown: it is for reading results.

    Examples: [bold]r2act report r2act-runs/smoke[/]

    [bold]r2act report DATASET --predictions a.jsonl --predictions b.jsonl --compare a,b[/]
    """
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from r2act import report as site

    if by not in ("fault_type", "service"):
        raise DataError(f"--by {by}: use fault_type or service")
    run = source if source is not None else _newest_run()
    inputs = site.find_inputs(run, predictions or [], replay or [], trajectories or [])
    target = out or (inputs.run / "report" if inputs.run else inputs.dataset.parent / "report")
    bar = Progress(
        TextColumn("incident pages"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console_err,
        transient=True,
        disable=not console_err.is_terminal,
    )
    task = bar.add_task("report", total=None)
    with bar:
        result = site.build_report(
            inputs,
            target,
            pairs=_pairs(compare or []),
            by=by,
            seed=seed,
            replicates=replicates,
            progress=lambda _what, done, total: bar.update(task, completed=done, total=total),
        )
    for note in result.notes[:-1]:
        console_err.print(f"[yellow]note:[/] {note}", highlight=False)
    console_err.print(
        f"{result.incidents} incidents, {result.methods} methods, {result.trajectories} "
        f"trajectories, {result.excluded} excluded; {result.pages} pages, "
        f"{result.bytes / 2**20:.1f} MiB ({result.notes[-1]})",
        highlight=False,
    )
    index = target / "index.html"
    console.print(f"report: {index}", highlight=False, soft_wrap=True)
    if serve:
        from r2act.report import serve as serve_site

        try:
            serve_site(
                target,
                port,
                ready=lambda url: console_err.print(
                    f"serving {url} (Ctrl-C to stop)", highlight=False
                ),
            )
        except KeyboardInterrupt:
            console_err.print("stopped serving; the site stays in place", highlight=False)
        except OSError as error:
            raise DataError(
                f"--port {port}: cannot serve on 127.0.0.1 ({error.strerror or error}); "
                "pass another --port, or 0 for any free one"
            ) from None
