"""``r2act evaluate`` and ``r2act compare``: score prediction files offline against a dataset.

Thin: find and validate the dataset, parse the files, call :mod:`r2act.evaluation`, print
and write. Bad lines in a predictions file are warnings (exit 0), printed with their line
numbers before the tables together with the integrity warnings (unknown and missing ids),
so they are read before the numbers they qualify. Unusable input (a missing file, no or an
invalid dataset, a bad fold) is an error (exit 2), and so is a file that covers none of the
incidents: its zeros would read as a score when they mean a wrong ``--dataset`` or wrong ids.

Scoring needs only the records and the folds, so the dataset is checked with
``validate(quick=True)`` (checksums of every file, records, folds, trail, Croissant) and
read with ``load_records``: the observation tables are never parsed here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from r2act.cli._choices import DEFAULT_REPLICATES, DEFAULT_SEED
from r2act.cli._datasets import dataset_dir
from r2act.cli.app import app, console, console_err, table_console
from r2act.errors import DataError

if TYPE_CHECKING:
    from r2act.evaluation import PredictionFile
    from r2act.evaluation.report import EvaluationReport, MethodReport, WarningEntry
    from r2act.schema import BenchmarkRecord

SHOWN_ISSUES = 5
"""Parse issues printed one by one per file (all are in --json)."""


class Stratification(StrEnum):
    """What ``compare`` stratifies by."""

    FAULT_TYPE = "fault_type"
    SERVICE = "service"
    SYSTEM = "system"


@dataclass(frozen=True)
class Population:
    """The incidents scored: the dataset or one fold of it."""

    label: str
    records: list[BenchmarkRecord]
    dataset_ids: set[str]


def _folds(directory: Path) -> list[list[str]]:
    from r2act.datasets import layout
    from r2act.datasets.folds import Folds

    path = directory / layout.FOLDS
    try:
        return Folds.model_validate_json(path.read_bytes()).folds
    except (OSError, ValueError) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        raise DataError(
            f"{path}: unreadable folds: {first} (run `r2act dataset validate`)"
        ) from exc


def _population(dataset: Path | None, fold: int | None, predictions: list[Path]) -> Population:
    from r2act import datasets
    from r2act.quality_gate.problems import Severity

    directory = dataset_dir(dataset, predictions)
    problems = datasets.validate(directory, quick=True)
    fatal = [p for p in problems if p.severity == Severity.ERROR]
    if fatal:
        more = f" (+{len(fatal) - 1} more)" if len(fatal) > 1 else ""
        raise DataError(
            f"{directory}: dataset fails validation: {fatal[0].line()}{more} "
            f"(run `r2act dataset validate {directory}`)"
        )
    records = datasets.load_records(directory)
    ids = {i for r in records for i in (r.incident_id, r.case_id) if i}  # either id is known
    if fold is not None:
        folds = _folds(directory)
        if not 0 <= fold < len(folds):
            raise DataError(
                f"{directory}/folds.json: no fold {fold} (folds are 0..{len(folds) - 1})"
            )
        keep = set(folds[fold])  # case ids in a published dataset
        records = [r for r in records if (r.case_id or r.incident_id) in keep]
    if not records:
        raise DataError(
            f"{directory}: no incidents to evaluate{'' if fold is None else f' in fold {fold}'}"
        )
    return Population(label=str(directory), records=records, dataset_ids=ids)


@contextmanager
def _bootstrap_memory(replicates: int, incidents: int) -> Iterator[None]:
    """A --replicates too large for memory is bad input: one line, not a numpy traceback."""
    try:
        yield
    except MemoryError:
        raise DataError(
            f"--replicates {replicates}: not enough memory for {replicates} x {incidents} "
            f"bootstrap draws (use fewer, e.g. the default {DEFAULT_REPLICATES})"
        ) from None


def _write_all(outputs: list[tuple[Path | None, Callable[[], str]]]) -> None:
    """Write each requested output; a view is rendered only when its path was given."""
    for path, render in outputs:
        if path is not None:
            _write(path, render())


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as error:
        raise DataError(f"{path}: cannot write ({error.strerror or error})") from None
    console_err.print(f"wrote {path}", highlight=False)


DatasetOpt = Annotated[
    Path | None,
    typer.Option(
        "--dataset",
        help="Dataset directory (default: RUN/dataset when the file is in RUN/predictions/, "
        "else the newest ./r2act-runs/*/dataset).",
    ),
]
FoldOpt = Annotated[
    int | None, typer.Option("--fold", help="Use only fold K (0-based) of folds.json.")
]
JsonOpt = Annotated[Path | None, typer.Option("--json", help="Write the full report as JSON.")]
MarkdownOpt = Annotated[
    Path | None,
    typer.Option("--markdown", help="Write it as Markdown, with the metric glossary."),
]
CsvOpt = Annotated[
    Path | None,
    typer.Option(
        "--csv", help="Write it as tidy CSV: one row per number, with its interval and n."
    ),
]
LatexOpt = Annotated[
    Path | None,
    typer.Option(
        "--latex", help="Write its tables as LaTeX (booktabs; needs \\usepackage{booktabs})."
    ),
]
SeedOpt = Annotated[int, typer.Option("--seed", help="Bootstrap seed.")]
ReplicatesOpt = Annotated[
    int, typer.Option("--replicates", min=100, help="Bootstrap replicates B.")
]


@app.command()
def evaluate(  # noqa: PLR0917 - typer maps parameters to options
    predictions: Annotated[list[Path], typer.Argument(help="Predictions files (JSON Lines).")],
    dataset: DatasetOpt = None,
    fold: FoldOpt = None,
    json_out: JsonOpt = None,
    markdown_out: MarkdownOpt = None,
    csv_out: CsvOpt = None,
    latex_out: LatexOpt = None,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            help="Scatter of RCA-S vs Recovery Validity; the suffix picks the format (.png, "
            ".pdf, .svg). Default with several files: a PNG next to the --json, --markdown, "
            "--csv or --latex file, else ./r2act-evaluation.png.",
        ),
    ] = None,
    seed: SeedOpt = DEFAULT_SEED,
    replicates: ReplicatesOpt = DEFAULT_REPLICATES,
    details: Annotated[
        bool, typer.Option("--details/--no-details", help="Per-method breakdowns.")
    ] = True,
    mapper: Annotated[
        bool,
        typer.Option(
            "--mapper", help="RCA-only answers: plans from the policy's mapper; AC@k if ranked."
        ),
    ] = False,
    by: Annotated[
        list[Stratification] | None,
        typer.Option(
            "--by",
            help="Breakdowns to report besides the pool (fault_type and service always; "
            "system by default only when the dataset holds several systems).",
        ),
    ] = None,
) -> None:
    """Score predictions on every incident of a dataset: RCA and recovery metrics with CIs.

    Every rate is over all incidents (missing predictions score 0), with a 95% bootstrap
    interval (Wilson's below 5 incidents). The metrics are defined in the glossary of the
    --markdown report and of the README. Bad lines (the first few with their line numbers)
    and unknown or missing ids are printed before the tables. Exit code 0 when scored, 2 on
    bad input, including a file that covers none of the incidents (a wrong --dataset or
    wrong ids).

    Example: [bold]r2act evaluate rule.jsonl rag.jsonl --latex t.tex --plot fig.pdf[/]
    """
    from r2act import evaluation
    from r2act.agents.process import print_extras
    from r2act.agents.rca import mapped_file
    from r2act.evaluation import paper, tables

    # fail fast on a bad path; RCA-only answers (--mapper) are read by r2act.agents.rca
    files = [] if mapper else [evaluation.read_predictions(p) for p in predictions]
    population = _population(dataset, fold, predictions)
    mapped = [mapped_file(p, population.records) for p in predictions] if mapper else []
    files = [f for f, _ in mapped] or files
    with _bootstrap_memory(replicates, len(population.records)):
        report = evaluation.evaluate(
            population.records,
            files,
            dataset=population.label,
            fold=fold,
            dataset_ids=population.dataset_ids,
            seed=seed,
            replicates=replicates,
            by_system=Stratification.SYSTEM in (by or []),
        )
    out = table_console()
    for method in report.methods:  # parse issues and warnings first, even with --no-details
        out.print(tables.notes(method))
    _print_warnings(report.warnings)
    _refuse_uncovered(report)
    out.print(tables.methods_table(report, width=out.width))
    for table in tables.system_tables(report, width=out.width):
        out.print(table)
    if details:
        for method in report.methods:
            out.print(tables.details(_without_notes(method), width=out.width))
    print_extras(out, report, predictions, [r for _, r in mapped])  # r2act.agents (issue 14)
    _write_all(
        [
            (json_out, lambda: report.model_dump_json(indent=2)),
            (markdown_out, lambda: evaluation.to_markdown(report)),
            (csv_out, lambda: paper.report_csv(report)),
            (latex_out, lambda: paper.report_latex(report)),
        ]
    )
    if plot is None and len(files) > 1:
        anchor = json_out or markdown_out or csv_out or latex_out
        plot = anchor.with_suffix(".png") if anchor else Path("r2act-evaluation.png")
    if plot is not None:
        try:
            evaluation.scatter(report, plot)
        except OSError as error:
            raise DataError(f"{plot}: cannot write ({error.strerror or error})") from None
        console_err.print(f"wrote {plot}", highlight=False)


@app.command()
def compare(  # noqa: PLR0917 - typer maps parameters to options
    a: Annotated[Path, typer.Argument(help="Predictions of method A.")],
    b: Annotated[Path, typer.Argument(help="Predictions of method B.")],
    by: Annotated[Stratification, typer.Option("--by", help="Strata.")] = (
        Stratification.FAULT_TYPE
    ),
    dataset: DatasetOpt = None,
    fold: FoldOpt = None,
    json_out: JsonOpt = None,
    markdown_out: MarkdownOpt = None,
    csv_out: CsvOpt = None,
    latex_out: LatexOpt = None,
    seed: SeedOpt = DEFAULT_SEED,
    replicates: ReplicatesOpt = DEFAULT_REPLICATES,
) -> None:
    """Paired per-stratum differences A − B with CIs, won/tied/lost and the worst stratum.

    A stratum of fewer than 5 incidents gets Newcombe's paired interval and is never
    reported as a difference whose CI excludes 0. Bad lines and id warnings are printed
    first; exit code 2 on bad input, including a file that covers none of the incidents.

    Example: [bold]r2act compare rag.jsonl rule.jsonl --by service --csv cmp.csv[/]
    """
    from r2act import evaluation
    from r2act.evaluation import paper, tables

    file_a, file_b = evaluation.read_predictions(a), evaluation.read_predictions(b)
    population = _population(dataset, fold, [a, b])
    with _bootstrap_memory(replicates, len(population.records)):
        result = evaluation.compare(
            population.records,
            file_a,
            file_b,
            by=by.value,
            dataset=population.label,
            fold=fold,
            seed=seed,
            replicates=replicates,
            dataset_ids=population.dataset_ids,
        )
    for file in (file_a, file_b):
        _print_issues(file)
    _print_warnings(result.warnings)
    for side in (result.a, result.b):
        if side.coverage == 0:
            raise DataError(_uncovered(side.source, result.incidents, population.label, fold))
    console.print(tables.comparison_table(result.model_copy(update={"warnings": []})))
    _write_all(
        [
            (json_out, lambda: result.model_dump_json(indent=2)),
            (markdown_out, lambda: evaluation.comparison_markdown(result)),
            (csv_out, lambda: paper.comparison_csv(result)),
            (latex_out, lambda: paper.comparison_latex(result)),
        ]
    )


def _print_warnings(warnings: list[WarningEntry]) -> None:
    for warning in warnings:
        console.print(f"[yellow]warning:[/] {warning.code}: ", end="")
        console.print(warning.message, markup=False, highlight=False)


def _print_issues(file: PredictionFile) -> None:
    """A file's parse issues: counts per kind, then the first few with their line numbers."""
    if not file.counts:
        return
    kinds = ", ".join(f"{kind} {count}" for kind, count in sorted(file.counts.items()))
    console.print("[yellow]parse issues[/] in ", end="")
    console.print(f"{file.source}: {kinds}", markup=False, highlight=False)
    for issue in file.issues[:SHOWN_ISSUES]:
        console.print(
            f"  line {issue.line}: {issue.kind.value}: {issue.message}",
            markup=False,
            highlight=False,
        )
    if sum(file.counts.values()) > SHOWN_ISSUES:
        console.print(f"  ... and {sum(file.counts.values()) - SHOWN_ISSUES} more", markup=False)


def _without_notes(method: MethodReport) -> MethodReport:
    """``method`` for the breakdown tables: its notes were printed before the tables."""
    parse = method.parse.model_copy(update={"issues_by_kind": {}, "issues": []})
    return method.model_copy(update={"parse": parse, "warnings": []})


def _refuse_uncovered(report: EvaluationReport) -> None:
    """A file that covers no incident is refused (exit 2): its zeros are not a score."""
    for method in report.methods:
        if method.metrics["covered"].value == 0:
            raise DataError(
                _uncovered(method.source, report.incidents, report.dataset, report.fold)
            )


def _uncovered(source: str, incidents: int, dataset: str, fold: int | None) -> str:
    where = dataset + ("" if fold is None else f" fold {fold}")
    return (
        f"{source}: covers none of the {incidents} incidents of {where}, so there is "
        "nothing to score (the warnings above say why); pass the --dataset it was made "
        "for, or key its lines by the incident ids or the case ids of that dataset's "
        "cases.parquet"
    )
