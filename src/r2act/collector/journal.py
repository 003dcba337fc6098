"""The per-incident journal: one JSON line per step, and one per retried attempt.

Each record is ``{step, start, end, status, error, attempt}`` plus ``wall_s`` (real seconds
spent) and, for retries, ``call``. ``start``/``end`` come from the cluster clock so they line
up with the phase windows in ``incident.json``; ``wall_s`` shows where real time went.
Lines are flushed as they are written, so a killed process leaves every finished step on
disk — that is what tells a reader of a partial incident how far it got.

Statuses: ``ok``; ``warning`` (the step finished but what it checks did not hold, e.g.
injection not confirmed in time); ``retry`` (an attempt that failed transiently and was
retried); ``failed``; ``interrupted`` (a signal or a fatal error outside the incident).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from r2act.cluster.base import Clock
from r2act.collector.store import writing

Status = Literal["ok", "warning", "retry", "failed", "interrupted"]


def describe(error: BaseException) -> str:
    """One line naming the error type and message."""
    text = str(error).strip().splitlines()
    return f"{type(error).__name__}: {text[0]}" if text else type(error).__name__


@dataclass
class Step:
    """A step in progress; the body may downgrade its outcome to ``warning``."""

    name: str
    start: float
    wall_start: float
    status: Status = "ok"
    error: str | None = None
    attempts: int = 1

    def warn(self, message: str) -> None:
        """Finish as ``warning``: the step ran, but its check did not hold."""
        self.status = "warning"
        self.error = message


class Journal:
    """Appends journal records for one incident."""

    def __init__(self, path: Path, clock: Clock) -> None:
        self._path = path
        self._clock = clock
        with writing(path):
            self._handle: IO[str] = open(path, "a", encoding="utf-8")  # noqa: SIM115

    def close(self) -> None:
        """Close the file; records already written stay."""
        self._handle.close()

    def write(self, record: dict[str, Any]) -> None:
        """Append one record and flush it."""
        with writing(self._path):
            self._handle.write(json.dumps(record) + "\n")
            self._handle.flush()

    def retry(self, step: Step, call: str, attempt: int, error: BaseException) -> None:
        """Record an attempt that failed transiently and is about to be retried."""
        step.attempts += 1
        now = self._clock.now()
        self.write(
            {
                "step": step.name,
                "call": call,
                "start": now,
                "end": now,
                "status": "retry",
                "error": describe(error),
                "attempt": attempt,
            }
        )

    @contextmanager
    def step(self, name: str) -> Iterator[Step]:
        """Journal the body as one step: ok/warning on return, failed/interrupted on raise."""
        current = Step(name=name, start=self._clock.now(), wall_start=time.perf_counter())
        try:
            yield current
        except Exception as error:
            current.status, current.error = "failed", describe(error)
            raise
        except BaseException as error:
            current.status, current.error = "interrupted", describe(error)
            raise
        finally:
            self._finish(current)

    def _finish(self, step: Step) -> None:
        self.write(
            {
                "step": step.name,
                "start": step.start,
                "end": self._clock.now(),
                "status": step.status,
                "error": step.error,
                "attempt": step.attempts,
                "wall_s": round(time.perf_counter() - step.wall_start, 6),
            }
        )
