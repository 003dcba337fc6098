"""The citation check every system's texts pass: each text's fixed parts are in the file it
cites under ``shared/reference`` (its first part near the cited line), and a text of
software outside that folder is listed, with its source, in the docs given."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from r2act.systems.texts import EXT, Text

NEAR = 3
"""A text's first fragment must be within this many lines of the cited line."""


def norm(text: str) -> str:
    """Whitespace runs and JS/shell line continuations collapsed (a fragment may span lines)."""
    return re.sub(r"\s+", " ", text.replace("\\\n", " ")).strip()


@dataclass
class Citations:
    """What the check found: one line per problem, and how many texts passed each way."""

    problems: list[str] = field(default_factory=list)
    checked: int = 0
    """Texts found in (and near) their cited reference line."""
    external: int = 0
    """Texts of software outside the reference folder (checked against the docs' list)."""


def check_citations(texts: Iterable[Text], reference_dir: Path, docs: str) -> Citations:
    """Check ``texts`` against the reference folder and ``docs`` (already ``norm``-ed)."""
    found = Citations()
    for text in texts:
        if not text.source or not text.fixed():
            found.problems.append(f"{text.key}: no source or no fixed text")
            continue
        if text.external:
            found.external += 1
            repo_path = text.source[len(EXT) :]
            missing = [f for f in [text.key, repo_path, *text.fixed()] if norm(f) not in docs]
            if missing:
                found.problems.append(
                    f"{text.key}: not listed in the docs' external sources: {missing}"
                )
            continue
        path = reference_dir / text.source
        if not path.is_file() or text.line <= 0:
            found.problems.append(f"{text.key}: {text.source}:{text.line} does not exist")
            continue
        lines = path.read_text(encoding="utf-8").split("\n")
        whole = norm("\n".join(lines))
        absent = [f for f in text.fixed() if norm(f) not in whole]
        near = norm("\n".join(lines[max(0, text.line - 1 - NEAR) : text.line + NEAR]))
        if absent:
            found.problems.append(f"{text.key}: {absent} not in {text.source}")
        elif norm(text.fixed()[0]) not in near:
            found.problems.append(
                f"{text.key}: {text.fixed()[0]!r} not near {text.source}:{text.line}"
            )
        else:
            found.checked += 1
    return found
