"""Which run a command means when it is not told: the newest ``./r2act-runs/<campaign>/``."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from r2act.errors import DataError

RUNS_ROOT: Final = Path("r2act-runs")
"""Default workspace the collector writes runs into, relative to the working directory."""


def resolve_run_dir(given: Path | None, *, needs: str = "raw") -> tuple[Path, bool]:
    """``given`` if set, else the most recently modified run that has ``needs`` inside.

    Returns the directory and whether it was picked automatically (so the CLI can say
    which one it chose). ``needs`` is a sub-directory such as ``raw`` or ``audit``.
    """
    if given is not None:
        if not given.is_dir():
            raise DataError(f"{given}: no such run directory (give a RUN_DIR that exists)")
        return given, False
    candidates = (
        [p for p in RUNS_ROOT.glob("*/") if p.is_dir() and (p / needs).is_dir()]
        if RUNS_ROOT.is_dir()
        else []
    )
    if not candidates:
        raise DataError(
            f"{RUNS_ROOT}/: no run here has a {needs}/ directory (pass RUN_DIR explicitly)"
        )
    newest = max(candidates, key=lambda p: ((p / needs).stat().st_mtime, p.name))
    return newest, True
