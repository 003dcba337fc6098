"""Trust a dataset before serving it to methods: the checksum and record checks replay makes.

``agent run`` and ``mcp serve`` hand a dataset's observations to methods; an edited table
whose checksum no longer matches would be scored as if it were the published benchmark.
``agent run`` runs :func:`r2act.datasets.validate` in its quick mode (every file's SHA-256
against ``SHA256SUMS``, the records, folds and card composition; under a second on the
smoke dataset); ``mcp serve`` checks every file's SHA-256 only (see ``files_only``). Both
refuse on the first error, unless told ``--no-verify``.
"""

from __future__ import annotations

from pathlib import Path

from r2act.cli.app import console_err
from r2act.errors import DataError

NO_VERIFY_HELP = "Skip checking the dataset's checksums and records first (not recommended)."


def verify_dataset(
    directory: Path, *, verify: bool, command: str, files_only: bool = False
) -> None:
    """DataError (exit 2) naming the first problem when ``directory`` fails validation.

    ``files_only``: check the SHA-256 of every file and nothing else, for a command that
    serves observations and never reads the answers (``mcp serve``, which must answer
    ``initialize`` within 2 s of starting; parsing and cross-checking the records cost it
    about 0.2 CPU s, and ``evaluate`` repeats that check when its predictions are scored).
    """
    if not verify:
        console_err.print(
            f"[yellow]not verifying {directory}[/] (--no-verify): its files may differ from "
            "what was published",
            highlight=False,
        )
        return
    if files_only:
        from r2act.datasets.checksums import checksums

        found = checksums(directory)
    else:
        from r2act import datasets

        found = datasets.validate(directory, quick=True)
    problems = [p for p in found if p.severity == "error"]
    if problems:
        raise DataError(
            f"{directory}: fails validation ({len(problems)} problem(s), first: "
            f"{problems[0].line()}); {command} serves only a dataset whose files match its "
            f"SHA256SUMS (see r2act dataset validate {directory}, or pass --no-verify)"
        )
