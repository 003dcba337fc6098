"""The progress display of ``r2act collect``: a rich bar on a terminal, plain lines elsewhere.

On a terminal: bar, ETA, current incident and step. Written to a file, a pipe or a CI log,
a bar draws nothing, and a paper-scale run once printed 0 bytes in 35 minutes. There,
``PlainProgress`` prints one plain line (done/total, failures, elapsed, time left, what runs
now) when an incident ends or a step starts, at most one per ``PLAIN_INTERVAL_S`` seconds
(the first and the last incident always get theirs), so a log shows a run is alive without
growing by a line per step.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
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

from r2act.campaigns.estimate import format_duration

if TYPE_CHECKING:
    from r2act.collector import IncidentResult

PLAIN_INTERVAL_S = 15.0
"""Least time between two plain progress lines: a 302-incident simulated run (about two
minutes) logs some ten lines, a real cluster's run (minutes per incident) about one per
step."""


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


class PlainProgress:
    """Progress as plain lines for a log: ``collect: 37/302 incidents (1 failed), ...``.

    ``clock`` is wall-clock seconds (what the person waiting reads); the time left assumes
    the remaining incidents take as long as the finished ones of this run did."""

    def __init__(
        self,
        console: Console,
        label: str = "collect",
        interval_s: float = PLAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
        *,
        noun: str = "incidents",
        skipped_as: str = "complete, skipped",
    ) -> None:
        self._console = console
        self._label = label
        self._noun = noun
        self._skipped_as = skipped_as
        self._interval_s = interval_s
        self._clock = clock
        self._started = clock()
        self._last: float | None = None
        self.total = 0
        self.done = 0
        self.failed = 0
        self.current = ""

    def start(self, total: int, skipped: int) -> None:
        """The run begins with ``total`` incidents to do (``skipped`` already complete)."""
        self._started = self._clock()
        self.total = total
        done = f"; {skipped} already {self._skipped_as}" if skipped else ""
        self._print(f"{self._label}: {total} {self._noun} to {self._label}{done}")

    def grow(self, incidents: int) -> None:
        """A top-up round adds ``incidents`` spares; said at once, it changes the total."""
        self.total += incidents
        s = "s" if incidents != 1 else ""
        self._print(
            f"{self._label}: top-up round: {incidents} spare{s} for cells still short of "
            f"clean incidents ({self.done}/{self.total} done)"
        )

    def working(self, text: str) -> None:
        """``text`` (incident and step) is what runs now; a line if the interval passed."""
        self.current = text
        self._maybe(force=False)

    def finished(self, failed: bool) -> None:
        """One incident ended; its line is printed if the interval passed (always for the
        first and the last)."""
        self.done += 1
        self.failed += failed
        self.current = ""
        self._maybe(force=self.done == 1 or self.done >= self.total)

    def line(self) -> str:
        """The progress line as it would be printed now."""
        elapsed = self._clock() - self._started
        failed = f" ({self.failed} failed)" if self.failed else ""
        text = f"{self._label}: {self.done}/{self.total} {self._noun}{failed}, "
        text += f"{format_duration(elapsed)} elapsed"
        if self.done and self.done < self.total:
            left = elapsed / self.done * (self.total - self.done)
            text += f", about {format_duration(left)} left"
        elif not self.done:
            text += f", time left not known before the first of the {self._noun} ends"
        if self.current:
            text += f"; now {self.current}"
        return text

    def _maybe(self, *, force: bool) -> None:
        now = self._clock()
        if force or self._last is None or now - self._last >= self._interval_s:
            self._print(self.line())

    def _print(self, text: str) -> None:
        self._last = self._clock()
        self._console.print(text, markup=False, highlight=False)


class PlainObserver:
    """``PlainProgress`` as a ``collector.CollectionObserver``."""

    def __init__(self, console: Console, progress: PlainProgress | None = None) -> None:
        self._console = console
        self.progress = progress or PlainProgress(console)

    def __enter__(self) -> PlainObserver:
        return self

    def __exit__(self, *_exc: object) -> None:
        """Nothing to tear down: every line is already written."""

    def campaign_started(self, pending: int, skipped: int) -> None:
        """Say how many incidents there are to collect."""
        self.progress.start(pending, skipped)

    def round_started(self, incidents: int) -> None:
        """A top-up round grows the total."""
        self.progress.grow(incidents)

    def incident_started(self, incident_id: str) -> None:
        """Remember the incident being collected."""
        self.progress.working(incident_id)

    def step_started(self, incident_id: str, step: str) -> None:
        """Remember the step in progress."""
        self.progress.working(f"{incident_id} ({step})")

    def retried(self, incident_id: str, step: str, attempt: int, error: str) -> None:
        """Remember that a transient error is being retried."""
        self.progress.working(f"{incident_id} ({step}, retry {attempt})")

    def incident_finished(self, result: IncidentResult) -> None:
        """Count the incident; print a failure at once."""
        if result.status == "failed":
            self._console.print(f"failed {result.incident_id}: {result.error}", highlight=False)
        self.progress.finished(result.status == "failed")

    def message(self, text: str) -> None:
        """Print a note."""
        self._console.print(text, markup=False, highlight=False)


class PlainLanesObserver:
    """``PlainProgress`` as a ``collector.lanes.LanesObserver``: one count over all lanes."""

    def __init__(self, console: Console, progress: PlainProgress | None = None) -> None:
        self._console = console
        self.progress = progress or PlainProgress(console)
        self._running: dict[str, str] = {}

    def __enter__(self) -> PlainLanesObserver:
        return self

    def __exit__(self, *_exc: object) -> None:
        """Nothing to tear down: every line is already written."""

    def campaign_started(self, pending: int, skipped: int, lanes: Sequence[str]) -> None:
        """Say how many incidents there are and on how many lanes."""
        self.progress.start(pending, skipped)
        self._console.print(f"{len(lanes)} lanes: {', '.join(lanes)}", highlight=False)

    def round_started(self, incidents: int) -> None:
        """A top-up round grows the total."""
        self.progress.grow(incidents)

    def incident_started(self, lane: str, incident_id: str) -> None:
        """Remember what the lane runs."""
        self._running[lane] = incident_id
        self.progress.working(self._now())

    def step_started(self, lane: str, incident_id: str, step: str) -> None:
        """Remember the lane's step."""
        self._running[lane] = f"{incident_id} ({step})"
        self.progress.working(self._now())

    def incident_finished(self, lane: str, result: IncidentResult, cluster_s: float) -> None:
        """Count the incident; print a failure at once."""
        self._running.pop(lane, None)
        if result.status == "failed":
            self._console.print(
                f"failed {lane} {result.incident_id}: {result.error}", highlight=False
            )
        self.progress.finished(result.status == "failed")
        self.progress.current = self._now()

    def message(self, text: str) -> None:
        """Print a note."""
        self._console.print(text, markup=False, highlight=False)

    def _now(self) -> str:
        return ", ".join(f"{lane}: {what}" for lane, what in sorted(self._running.items()))
