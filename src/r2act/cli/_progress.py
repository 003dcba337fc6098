"""The rich progress display of ``r2act collect``: bar, ETA, current incident and step."""

from __future__ import annotations

from types import TracebackType
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

if TYPE_CHECKING:
    from r2act.collector import IncidentResult


class RichObserver:
    """Draws collection progress; implements ``collector.CollectionObserver``."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.fields[incident]}[/] {task.fields[step]}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed[/]"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            transient=False,
            disable=not console.is_terminal,  # a pipe or CI log gets the notes, not the bar
        )
        self._task = self._progress.add_task("collect", total=None, incident="", step="", failed=0)
        self._failed = 0

    def __enter__(self) -> RichObserver:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress.live.is_started:
            self._progress.stop()

    def campaign_started(self, pending: int, skipped: int) -> None:
        """Size the bar to the first round (spares join only when a cell needs them); no bar
        when there is nothing to collect."""
        self._progress.update(self._task, total=pending)
        if pending:
            self._progress.start()

    def round_started(self, incidents: int) -> None:
        """Grow the bar by the spares a top-up round collects for cells still short."""
        grow_for_round(self._progress, self._task, incidents)

    def incident_started(self, incident_id: str) -> None:
        """Show the incident being collected."""
        self._progress.update(self._task, incident=incident_id, step="")

    def step_started(self, incident_id: str, step: str) -> None:
        """Show the step in progress."""
        self._progress.update(self._task, step=step)

    def retried(self, incident_id: str, step: str, attempt: int, error: str) -> None:
        """Show that a transient error is being retried."""
        self._progress.update(self._task, step=f"{step} (retry {attempt})")

    def incident_finished(self, result: IncidentResult) -> None:
        """Advance the bar; print failures as they happen."""
        if result.status == "failed":
            self._failed += 1
            self._progress.console.print(
                f"[red]failed[/] {result.incident_id}: {result.error}", highlight=False
            )
        self._progress.update(self._task, advance=1, failed=self._failed)

    def message(self, text: str) -> None:
        """Print a note above the bar."""
        self._progress.console.print(f"[yellow]{text}[/]", highlight=False)


def grow_for_round(progress: Progress, task: TaskID, incidents: int) -> None:
    """A top-up round: ``task``'s total grows by its spares, and the user hears why."""
    total = next(t.total for t in progress.tasks if t.id == task) or 0
    progress.update(task, total=total + incidents)
    progress.console.print(
        f"[yellow]top-up round: {incidents} spare{'s' if incidents != 1 else ''} "
        "for cells still short of clean incidents[/]",
        highlight=False,
    )
