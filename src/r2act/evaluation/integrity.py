"""Integrity checks on a predictions file: signs that the numbers may not mean what they say.

A pipeline that fails silently still produces a complete-looking file: a fixed default
answer on every line, the same file submitted under two names, ids from another dataset.
None of these is an error the scorer can reject, so each becomes a warning printed next to
the numbers (they never change the scores).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from r2act.evaluation.predictions import PredictionFile, safe_text


@dataclass(frozen=True)
class IntegrityWarning:
    """One suspicious property of a file, with a machine-readable code."""

    code: str
    message: str


def _examples(ids: Sequence[str], limit: int = 3) -> str:
    shown = ", ".join(safe_text(i, 70) for i in ids[:limit])
    return shown + (", ..." if len(ids) > limit else "")


def check_file(
    file: PredictionFile, population: Sequence[str], dataset_ids: Collection[str]
) -> list[IntegrityWarning]:
    """Warnings for one file scored on ``population`` (ids of the dataset or the fold)."""
    warnings: list[IntegrityWarning] = []
    unknown = [i for i in file.predictions if i not in dataset_ids]
    if unknown:
        warnings.append(
            IntegrityWarning(
                "unknown_ids",
                f"{len(unknown)} id(s) are not in the dataset and were ignored: "
                f"{_examples(unknown)}",
            )
        )
    missing = [i for i in population if i not in file.predictions]
    if missing:
        warnings.append(
            IntegrityWarning(
                "missing_ids",
                f"{len(missing)} of {len(population)} incident(s) have no usable prediction "
                f"and score 0: {_examples(missing)}",
            )
        )
    if file.duplicates:
        extra = sum(len(lines) - 1 for lines in file.duplicates.values())
        warnings.append(
            IntegrityWarning(
                "duplicate_ids",
                f"{len(file.duplicates)} id(s) appear more than once ({extra} extra line(s)); "
                f"the first line wins: {_examples(list(file.duplicates))}",
            )
        )
    warnings.extend(_constant(file, population))
    bad = file.line_issues
    if bad:
        warnings.append(
            IntegrityWarning(
                "bad_lines", f"{bad} problem(s) in lines of the file (see parse issues)"
            )
        )
    return warnings


def _constant(file: PredictionFile, population: Sequence[str]) -> list[IntegrityWarning]:
    scored = [file.predictions[i] for i in population if i in file.predictions]
    if len(scored) < 2:
        return []
    if len({p.key() for p in scored}) == 1:
        return [
            IntegrityWarning(
                "constant_predictions",
                f"all {len(scored)} predictions are identical (a fixed default answer?)",
            )
        ]
    warnings = []
    plans = {(p.plan_state, p.plan) for p in scored}
    rcas = {None if p.rca is None else (p.rca.service, p.rca.fault_type) for p in scored}
    if len(plans) == 1:
        warnings.append(IntegrityWarning("constant_plan", "every prediction has the same plan"))
    if len(rcas) == 1:
        warnings.append(IntegrityWarning("constant_rca", "every prediction has the same rca"))
    return warnings


def identical_files(
    files: Sequence[PredictionFile], population: Sequence[str]
) -> list[IntegrityWarning]:
    """Warnings for pairs of files whose scored predictions are identical on ``population``."""
    keys = [{i: f.predictions[i].key() for i in population if i in f.predictions} for f in files]
    warnings = []
    for a in range(len(files)):
        for b in range(a + 1, len(files)):
            if keys[a] and keys[a] == keys[b]:
                warnings.append(
                    IntegrityWarning(
                        "identical_files",
                        f"{safe_text(files[a].source)} and {safe_text(files[b].source)} give "
                        "identical predictions (the same method submitted twice?)",
                    )
                )
    return warnings
