"""A counting progress bar for the verbs that walk over incidents (audit, build, baseline)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Column


@contextmanager
def counting(
    console: Console, label: str, total: int | None, *, quiet: bool = False
) -> Iterator[Callable[[str], None]]:
    """Yield ``advance(item)``: one step done, ``item`` shown as the current one.

    The bar is transient (it leaves the summary lines alone) and disabled with ``quiet``
    or when the console is not a terminal.
    """
    with Progress(
        TextColumn(f"[bold]{label}[/]"),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        TextColumn(
            "{task.description}",
            table_column=Column(no_wrap=True, overflow="ellipsis", max_width=60),
        ),
        console=console,
        transient=True,
        disable=quiet or not console.is_terminal,  # a pipe or CI log gets no bar
    ) as progress:
        task = progress.add_task("", total=total)

        def advance(item: str) -> None:
            progress.update(task, advance=1, description=item)

        yield advance
