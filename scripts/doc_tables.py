"""What the scripts that regenerate a document's table share: running r2act, and writing
the table between a document's two markers (``reference_results.py`` for the README,
``noise_robustness.py`` for docs/simulator.md)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def r2act(*args: str) -> None:
    """Run one r2act command; stop with its error when it fails."""
    command = [sys.executable, "-m", "r2act", *args]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        sys.exit(f"r2act {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()}")


def write_between(doc: Path, start: str, end: str, text: str) -> None:
    """Replace what stands between ``start`` and ``end`` in ``doc`` with ``text``; stop with
    a message naming the file when the markers are missing."""
    body = doc.read_text(encoding="utf-8")
    if start not in body or end not in body:
        sys.exit(f"{doc}: no {start} ... {end} markers; add them where the table goes")
    head, rest = body.split(start, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(f"{head}{start}\n{text}{end}{tail}", encoding="utf-8")
