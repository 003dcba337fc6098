"""Resume: what a run directory already holds, and moving unfinished work out of the way.

An incident directory is finished only when it holds ``COMPLETE`` (written last). Anything
else is partial: it is *moved* (never deleted) to ``RUN/raw/.partial/<id>-<n>`` and the
incident is redone from scratch, so a reader never mixes telemetry of two attempts and a
post-mortem of the crashed attempt stays possible.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from r2act.collector import layout, store
from r2act.errors import DataError


@dataclass(frozen=True)
class RunScan:
    """Incident directories found under ``RUN/raw``."""

    complete: frozenset[str]
    partial: frozenset[str]

    @property
    def empty(self) -> bool:
        """Nothing collected yet."""
        return not (self.complete or self.partial)


def scan(raw: Path) -> RunScan:
    """Classify every (non-hidden) incident directory under ``raw``."""
    complete: set[str] = set()
    partial: set[str] = set()
    if raw.is_dir():
        for child in raw.iterdir():
            if child.is_dir() and not child.name.startswith("."):
                (complete if layout.is_complete(child) else partial).add(child.name)
    return RunScan(frozenset(complete), frozenset(partial))


def refuse_unless_forced(run_dir: Path, found: RunScan, force: bool) -> None:
    """``--no-resume`` must not silently redo a run: it needs ``--force`` when data exists."""
    if not found.empty and not force:
        raise DataError(
            f"{run_dir}: already holds {len(found.complete)} complete and "
            f"{len(found.partial)} partial incidents (drop --no-resume to resume, "
            "or add --force to redo them)"
        )


def move_aside(
    raw: Path, incident_ids: Iterable[str], into: str = layout.PARTIAL_DIR
) -> list[Path]:
    """Move each incident directory to ``raw/<into>/<id>-<n>``; returns the new paths."""
    moved: list[Path] = []
    holding = raw / into
    for incident_id in sorted(incident_ids):
        source = raw / incident_id
        if not source.exists():
            continue
        with store.writing(holding):
            holding.mkdir(parents=True, exist_ok=True)
            n = 1
            while (target := holding / f"{incident_id}-{n}").exists():
                n += 1
            os.replace(source, target)
        moved.append(target)
    return moved


def check_writable(run_dir: Path) -> None:
    """Fail early, without writing, when the run directory cannot be written.

    ``os.access`` reports a read-only file system even to root, so this catches a read-only
    RUN_DIR before anything touches the cluster; a disk that fills up later is caught by
    the store's own translation.
    """
    for path in (layout.raw_dir(run_dir), run_dir):
        existing = path
        while not existing.exists() and existing != existing.parent:
            existing = existing.parent
        if not existing.is_dir():
            raise DataError(f"{existing}: is a file, not a run directory (choose another --out)")
        if not os.access(existing, os.W_OK | os.X_OK):
            raise DataError(
                f"{existing}: cannot write the run directory: read-only or permission denied "
                "(make it writable or choose another --out)"
            )
