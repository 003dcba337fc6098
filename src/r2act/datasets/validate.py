"""``r2act dataset validate``: can a reader trust this directory without rerunning anything?

Checks, each reported as a Problem naming the file: checksums (every file listed, present
and matching; nothing unlisted), every record parses as a BenchmarkRecord, ids are unique,
observations and state refer only to known records and hold exactly the rows each record
claims, the folds partition the main set, the audit trail is disjoint from it, the card's
embedded composition equals the one recomputed from the records (and its figures re-render
to the same bytes when the matplotlib version matches), and Croissant's digests agree.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import ValidationError

from r2act.datasets import figures, layout
from r2act.datasets.card import embedded_composition
from r2act.datasets.checksums import dataset_files, read_sums, sha256_file
from r2act.datasets.composition import compose
from r2act.datasets.folds import Folds
from r2act.quality_gate import Problem, Verdict
from r2act.quality_gate.problems import error
from r2act.schema import BenchmarkRecord


def _checksums(root: Path) -> list[Problem]:
    if not (root / layout.SHA256SUMS).is_file():
        return [error("CHECKSUMS_MISSING", "no SHA256SUMS", where=layout.SHA256SUMS)]
    try:
        sums = read_sums(root)
    except (OSError, ValueError) as exc:
        return [error("CHECKSUMS_INVALID", str(exc), where=layout.SHA256SUMS)]
    problems = []
    for name, digest in sums.items():
        path = root / name
        if not path.is_file():
            problems.append(error("FILE_MISSING", "listed in SHA256SUMS but absent", where=name))
        elif sha256_file(path) != digest:
            problems.append(
                error("CHECKSUM_MISMATCH", "content differs from SHA256SUMS", where=name)
            )
    for name in dataset_files(root):
        if name not in sums:
            problems.append(error("FILE_UNLISTED", "not listed in SHA256SUMS", where=name))
    return problems


def _records(root: Path) -> tuple[list[BenchmarkRecord], list[Problem]]:
    path = root / layout.INCIDENTS
    if not path.is_file():
        return [], [error("FILE_MISSING", "no records", where=layout.INCIDENTS)]
    records, problems = [], []
    for number, raw in enumerate(path.read_bytes().splitlines(), 1):
        where = f"{layout.INCIDENTS}:{number}"
        try:
            records.append(BenchmarkRecord.model_validate_json(raw.decode("utf-8")))
        except UnicodeDecodeError as exc:
            problems.append(error("RECORD_INVALID", f"not UTF-8 ({exc.reason})", where=where))
        except ValidationError as exc:
            problems.append(error("RECORD_INVALID", _first_error(exc), where=where))
    for incident, n in sorted(Counter(r.incident_id for r in records).items()):
        if n > 1:
            problems.append(
                error("DUPLICATE_ID", f"{incident} appears {n} times", where=layout.INCIDENTS)
            )
    return records, problems


def _first_error(exc: ValidationError) -> str:
    """'N error(s); first: field.path: message' — one line, without pydantic's URLs."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f"{exc.error_count()} errors; first: " if exc.error_count() > 1 else ""
    return f"{more}{where + ': ' if where else ''}{first['msg']}"[:300]


def _observations(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    problems: list[Problem] = []
    ids = {r.incident_id for r in records}
    claimed = {
        layout.LOGS: {r.incident_id: r.observations.log_records for r in records},
        layout.EVENTS: {r.incident_id: r.observations.event_records for r in records},
        layout.METRICS: {r.incident_id: r.observations.metric_samples for r in records},
    }
    for name, schema in layout.TABLES.items():
        path = root / name
        if not path.is_file():
            problems.append(error("OBSERVATIONS_MISSING", "observation file is absent", where=name))
            continue
        try:
            found = pq.read_schema(path)
            column = pq.read_table(path, columns=["incident_id"]).column("incident_id")
        except (OSError, ValueError) as exc:
            problems.append(error("OBSERVATIONS_UNREADABLE", str(exc)[:200], where=name))
            continue
        if not found.equals(schema):
            problems.append(
                error("SCHEMA_MISMATCH", "columns or types differ from layout", where=name)
            )
        counts = pc.value_counts(column)
        rows = {str(v["values"]): int(v["counts"]) for v in counts.to_pylist()}
        for orphan in sorted(set(rows) - ids):
            problems.append(
                error("ORPHAN_OBSERVATIONS", f"rows for unknown id {orphan}", where=name)
            )
        for incident, expected in sorted(claimed[name].items()):
            if rows.get(incident, 0) != expected:
                problems.append(
                    error(
                        "OBSERVATION_COUNT_MISMATCH",
                        f"{incident}: {rows.get(incident, 0)} rows, record says {expected}",
                        where=name,
                    )
                )
    return problems


def _state(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    path = root / layout.STATE
    if not path.is_file():
        return [error("FILE_MISSING", "no state", where=layout.STATE)]
    seen: set[tuple[str, str]] = set()
    bad: list[Problem] = []
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        try:
            row = json.loads(line)
            seen.add((str(row["incident_id"]), str(row["phase"])))
        except (ValueError, KeyError, TypeError):
            bad.append(error("STATE_INVALID", "not a state line", where=f"{layout.STATE}:{number}"))
    wanted = {(r.incident_id, p) for r in records for p in r.observations.phases}
    problems = bad + [
        error("ORPHAN_OBSERVATIONS", f"state for unknown {i}/{p}", where=layout.STATE)
        for i, p in sorted(seen - wanted)
    ]
    problems += [
        error("STATE_MISSING", f"no state for {i}/{p}", where=layout.STATE)
        for i, p in sorted(wanted - seen)
    ]
    return problems


def _folds(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    try:
        folds = Folds.model_validate_json((root / layout.FOLDS).read_bytes())
    except (OSError, ValueError) as exc:
        return [error("FOLDS_INVALID", str(exc).splitlines()[0], where=layout.FOLDS)]
    members = [i for fold in folds.folds for i in fold]
    ids = {r.incident_id for r in records}
    if len(members) != len(set(members)) or set(members) != ids or len(folds.folds) != folds.k:
        return [
            error(
                "FOLDS_NOT_PARTITION",
                "folds do not partition the main set",
                where=layout.FOLDS,
                repeated=sorted(i for i, n in Counter(members).items() if n > 1)[:5],
                missing=sorted(ids - set(members))[:5],
                unknown=sorted(set(members) - ids)[:5],
            )
        ]
    return []


def _trail(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    try:
        lines = (root / layout.AUDIT_TRAIL).read_text("utf-8").splitlines()
        trail = [Verdict.model_validate_json(line) for line in lines if line.strip()]
    except (OSError, ValueError) as exc:
        return [error("AUDIT_TRAIL_INVALID", str(exc).splitlines()[0], where=layout.AUDIT_TRAIL)]
    overlap = {v.incident_id for v in trail} & {r.incident_id for r in records}
    return [
        error("AUDIT_TRAIL_OVERLAP", f"{i} is both main and in the trail", where=layout.AUDIT_TRAIL)
        for i in sorted(overlap)
    ]


def _card(root: Path, records: list[BenchmarkRecord], *, figures_too: bool = True) -> list[Problem]:
    try:
        card = (root / layout.README).read_text("utf-8")
    except OSError:
        return [error("FILE_MISSING", "no dataset card", where=layout.README)]
    claimed = embedded_composition(card)
    actual = compose(records)
    if claimed is None:
        return [error("CARD_MISMATCH", "card carries no composition block", where=layout.README)]
    if claimed != actual:
        diff = sorted(
            k for k in type(actual).model_fields if getattr(claimed, k) != getattr(actual, k)
        )
        return [
            error(
                "CARD_MISMATCH",
                f"card composition differs in {', '.join(diff)}",
                where=layout.README,
            )
        ]
    if not figures_too:
        return []
    version = re.search(r"figures by matplotlib (\S+)", card)
    if version is None or version.group(1) != figures.matplotlib_version():
        return []  # another renderer version draws different pixels; numbers were checked
    problems = []
    for name, data in figures.render(actual).items():
        path = root / name
        if not path.is_file() or path.read_bytes() != data:
            problems.append(error("FIGURE_MISMATCH", "figure does not show the data", where=name))
    return problems


def _croissant(root: Path) -> list[Problem]:
    try:
        document = json.loads((root / layout.CROISSANT).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        return [error("CROISSANT_INVALID", str(exc).splitlines()[0], where=layout.CROISSANT)]
    problems = []
    for item in document.get("distribution", []):
        path = root / str(item.get("contentUrl", ""))
        if not path.is_file() or sha256_file(path) != item.get("sha256"):
            problems.append(
                error(
                    "CROISSANT_MISMATCH",
                    f"digest of {item.get('contentUrl')} differs",
                    where=layout.CROISSANT,
                )
            )
    return problems


def validate(root: Path, *, quick: bool = False) -> list[Problem]:
    """Every problem of the dataset at ``root``; empty when it can be trusted.

    ``quick=True`` is for readers of the records only (scoring): it keeps the checksums of
    every file, the records, folds, audit trail, state, the card's label composition and
    Croissant checks, but does not re-read the observation tables or re-render the card's
    figures (seconds on a paper-scale dataset). Tampered bytes still fail through
    SHA256SUMS; labels altered with the checksums recomputed fail the card's composition.
    """
    if not root.is_dir():
        return [error("DATASET_MISSING", "no such directory", where=str(root))]
    problems = _checksums(root)
    records, record_problems = _records(root)
    problems += record_problems
    checks: list[tuple[bool, str, Callable[[], list[Problem]]]] = [  # (slow, file, check)
        (True, "observations/", lambda: _observations(root, records)),
        (False, layout.STATE, lambda: _state(root, records)),
        (False, layout.FOLDS, lambda: _folds(root, records)),
        (False, layout.AUDIT_TRAIL, lambda: _trail(root, records)),
        (True, layout.README, lambda: _card(root, records)),
        # the labels' composition is cheap and guards scoring; only the figures are slow
        (
            False,
            layout.README,
            lambda: [] if not quick else _card(root, records, figures_too=False),
        ),
        (False, layout.CROISSANT, lambda: _croissant(root)),
    ]
    for slow, name, check in checks:
        if quick and slow:
            continue
        try:
            problems += check()
        except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
            problems.append(
                error("UNREADABLE", f"{type(exc).__name__}: {str(exc)[:200]}", where=name)
            )
    return problems
