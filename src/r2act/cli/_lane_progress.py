"""The progress display of a lanes run: one line per lane, with its elapsed and remaining time.

Times are on the cluster's clock, summed per lane from the incidents it finished: real
seconds on Kubernetes, the simulated cluster's virtual seconds on the simulator (what a real
lane would have needed). Remaining time assumes the incidents still queued are shared evenly
by the lanes and take as long as this lane's finished ones (the campaign's mean before a
lane has finished any). The total counts the current round: spares join it when a top-up
round starts, never before a cell is known to need them.
"""

from __future__ import annotations

from collections.abc import Sequence
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
)

from r2act.campaigns.estimate import format_duration
from r2act.cli._progress import grow_for_round

if TYPE_CHECKING:
    from r2act.collector import IncidentResult


class LanesProgress:
    """Draws a lanes run; implements ``collector.lanes.LanesObserver``."""

    def __init__(self, console: Console) -> None:
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("[bold]{task.description}[/]"),
            TextColumn("{task.fields[incident]} {task.fields[step]}"),
            BarColumn(bar_width=20),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]}[/]"),
            TextColumn("{task.fields[clock]}"),
            console=console,
            transient=False,
            disable=not console.is_terminal,
        )
        self._total = self._progress.add_task(
            "all lanes", total=None, incident="", step="", failed="", clock=""
        )
        self._tasks: dict[str, TaskID] = {}
        self._elapsed: dict[str, float] = {}
        self._finished: dict[str, int] = {}
        self._busy: set[str] = set()
        self._pending = 0
        self._failed = 0

    def __enter__(self) -> LanesProgress:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress.live.is_started:
            self._progress.stop()

    def campaign_started(self, pending: int, skipped: int, lanes: Sequence[str]) -> None:
        """One line per lane, and a total bar over the pending incidents."""
        self._pending = pending
        self._progress.update(self._total, total=pending)
        for lane in lanes:
            self._tasks[lane] = self._progress.add_task(
                lane, total=None, incident="", step="", failed="", clock=""
            )
            self._elapsed[lane], self._finished[lane] = 0.0, 0
        if pending:
            self._progress.start()

    def round_started(self, incidents: int) -> None:
        """A top-up round: the total bar and the remaining times grow by its spares."""
        self._pending += incidents
        grow_for_round(self._progress, self._total, incidents)

    def incident_started(self, lane: str, incident_id: str) -> None:
        """Show the lane's incident."""
        self._busy.add(lane)
        self._progress.update(self._tasks[lane], incident=incident_id, step="")

    def step_started(self, lane: str, incident_id: str, step: str) -> None:
        """Show the lane's step."""
        self._progress.update(self._tasks[lane], step=step)

    def incident_finished(self, lane: str, result: IncidentResult, cluster_s: float) -> None:
        """Advance the lane and the total; refresh every lane's remaining time."""
        self._busy.discard(lane)
        self._elapsed[lane] += cluster_s
        self._finished[lane] += 1
        self._pending -= 1
        if result.status == "failed":
            self._failed += 1
            self._progress.console.print(
                f"[red]failed[/] {lane} {result.incident_id}: {result.error}", highlight=False
            )
        self._progress.update(self._tasks[lane], advance=1, incident="", step="")
        failed = f"{self._failed} failed" if self._failed else ""
        self._progress.update(self._total, advance=1, failed=failed)
        for name, task in self._tasks.items():
            self._progress.update(task, clock=self.clock_text(name))

    def clock_text(self, lane: str) -> str:
        """``elapsed 1h05m, about 3h10m left`` for ``lane``, on the cluster's clock."""
        mean = self._mean(lane)
        elapsed = f"elapsed {format_duration(self._elapsed[lane])}"
        if mean is None:
            return elapsed
        share = self._pending / max(len(self._tasks), 1)
        return f"{elapsed}, about {format_duration(mean * share)} left"

    def _mean(self, lane: str) -> float | None:
        if self._finished[lane]:
            return self._elapsed[lane] / self._finished[lane]
        done = sum(self._finished.values())
        return sum(self._elapsed.values()) / done if done else None

    def message(self, text: str) -> None:
        """Print a note above the lines."""
        self._progress.console.print(f"[yellow]{text}[/]", highlight=False)
