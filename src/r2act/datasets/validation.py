"""``r2act dataset validate``: can a reader trust this directory without rerunning anything?

Checks, each reported as a Problem naming the file: checksums (every file listed, present
and matching; nothing unlisted), every record parses as a BenchmarkRecord, ids are unique,
the salt derives from the records and every case id is its HMAC, ``cases.parquet`` lists
exactly the cases with their folds, observations and state refer only to known cases and
hold exactly the rows each record claims, the folds partition the main set, the audit
trail is disjoint from it, the card's embedded composition equals the one recomputed from
the records (and its figures re-render to the same bytes when the matplotlib version
matches), and Croissant's digests agree.
"""

from __future__ import annotations

import functools
import json
import re
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import ValidationError

from r2act.datasets import figures, ids, layout, traces
from r2act.datasets.card import embedded_composition
from r2act.datasets.checksums import Digest, checksum_problems, sha256_file
from r2act.datasets.composition import compose
from r2act.datasets.folds import Folds
from r2act.datasets.tables import read_trail
from r2act.quality_gate import Problem
from r2act.quality_gate.problems import error
from r2act.schema import BenchmarkRecord

"""SHA-256 of a file, computed once per validation (SHA256SUMS and Croissant list the same
files: hashing them twice doubled a quick validation's cost, the MCP server's start-up)."""


def _same_columns(found: pa.Schema, expected: pa.Schema) -> bool:
    """Same column names and types, in order (nullability is the writer's business)."""
    return [(f.name, f.type) for f in found] == [(f.name, f.type) for f in expected]


def _records(root: Path) -> tuple[list[BenchmarkRecord], list[Problem]]:
    path = root / layout.INCIDENTS
    if not path.is_file():
        return [], [error("FILE_MISSING", "no records", where=layout.INCIDENTS)]
    table = pq.read_table(path)
    if not _same_columns(table.schema, layout.INCIDENT_TABLE):
        return [], [
            error("SCHEMA_MISMATCH", "columns or types differ from layout", where=layout.INCIDENTS)
        ]
    records, problems = [], []
    for number, row in enumerate(table.to_pylist(), 1):
        where = f"{layout.INCIDENTS}:row {number}"
        try:
            record = BenchmarkRecord.model_validate_json(row["record"])
        except ValidationError as exc:
            problems.append(error("RECORD_INVALID", _first_error(exc), where=where))
            continue
        if (record.incident_id, record.case_id) != (row["incident_id"], row["case_id"]):
            problems.append(
                error("RECORD_INVALID", "id columns differ from the record", where=where)
            )
        records.append(record)
    for incident, n in sorted(Counter(r.incident_id for r in records).items()):
        if n > 1:
            problems.append(
                error("DUPLICATE_ID", f"{incident} appears {n} times", where=layout.INCIDENTS)
            )
    return records, problems


def _key(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    """The salt re-derives from the records and every case id is its HMAC of the incident id."""
    try:
        document = json.loads((root / layout.KEY).read_text("utf-8"))
        salt = str(document["salt"])
        bytes.fromhex(salt)
    except (OSError, ValueError, KeyError, TypeError) as exc:
        return [error("KEY_INVALID", f"no readable salt ({type(exc).__name__})", where=layout.KEY)]
    problems = []
    if records and ids.derive_salt(records) != salt:
        problems.append(
            error("KEY_MISMATCH", "salt does not derive from the records", where=layout.KEY)
        )
    wrong = [r.incident_id for r in records if r.case_id != ids.case_id(salt, r.incident_id)]
    if wrong:
        problems.append(
            error(
                "CASE_ID_MISMATCH",
                f"{len(wrong)} case id(s) are not the HMAC of their incident id: "
                f"{', '.join(wrong[:3])}",
                where=layout.INCIDENTS,
            )
        )
    return problems


def _first_error(exc: ValidationError) -> str:
    """'N error(s); first: field.path: message' — one line, without pydantic's URLs."""
    first = exc.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    more = f"{exc.error_count()} errors; first: " if exc.error_count() > 1 else ""
    return f"{more}{where + ': ' if where else ''}{first['msg']}"[:300]


def _case_column(path: Path) -> pa.ChunkedArray:
    return pq.read_table(path, columns=["case_id"]).column("case_id")


def _observations(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    problems: list[Problem] = []
    cases = {str(r.case_id) for r in records}
    claimed = {
        layout.LOGS: {str(r.case_id): r.observations.log_records for r in records},
        layout.EVENTS: {str(r.case_id): r.observations.event_records for r in records},
        layout.METRICS: {str(r.case_id): r.observations.metric_samples for r in records},
    }
    for name in layout.OBSERVATION_TABLES:
        path = root / name
        if not path.is_file():
            problems.append(error("OBSERVATIONS_MISSING", "observation file is absent", where=name))
            continue
        try:
            found = pq.read_schema(path)
            column = _case_column(path)
        except (OSError, ValueError, pa.ArrowException) as exc:
            problems.append(error("OBSERVATIONS_UNREADABLE", str(exc)[:200], where=name))
            continue
        if not _same_columns(found, layout.TABLES[name]):
            problems.append(
                error("SCHEMA_MISMATCH", "columns or types differ from layout", where=name)
            )
        counts = pc.value_counts(column)
        rows = {str(v["values"]): int(v["counts"]) for v in counts.to_pylist()}
        for orphan in sorted(set(rows) - cases):
            problems.append(
                error("ORPHAN_OBSERVATIONS", f"rows for unknown case {orphan}", where=name)
            )
        for case, expected in sorted(claimed[name].items()):
            if rows.get(case, 0) != expected:
                problems.append(
                    error(
                        "OBSERVATION_COUNT_MISMATCH",
                        f"{case}: {rows.get(case, 0)} rows, record says {expected}",
                        where=name,
                    )
                )
    return problems + _derived(root, cases)


def _derived(root: Path, cases: set[str]) -> list[Problem]:
    """The derived request table: its columns, and no row for an unknown case."""
    name = layout.REQUESTS
    try:
        found = pq.read_schema(root / name)
        keys = _case_column(root / name)
    except (OSError, ValueError, pa.ArrowException) as exc:
        return [error("OBSERVATIONS_UNREADABLE", str(exc)[:200], where=name)]
    if not _same_columns(found, layout.REQUEST_TABLE):
        return [error("SCHEMA_MISMATCH", "columns or types differ from layout", where=name)]
    orphans = sorted({str(k) for k in pc.unique(keys).to_pylist()} - cases)
    return [error("ORPHAN_OBSERVATIONS", f"rows for unknown case {o}", where=name) for o in orphans]


def _chaos_names(root: Path) -> list[str]:
    """``metadata.name`` of every chaos object under answers/ (what no span may carry)."""
    table = pq.read_table(root / layout.CHAOS_OBJECTS, columns=["data"])
    names = []
    for data in table.column("data").to_pylist():
        meta = json.loads(data).get("metadata")
        if isinstance(meta, dict) and meta.get("name"):
            names.append(str(meta["name"]))
    return names


def _traces(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    """The optional traces table: its columns, no row for an unknown case, no answer."""
    name = layout.TRACES
    if not (root / name).is_file():
        return []
    try:
        table = pq.read_table(root / name)
    except (OSError, ValueError, pa.ArrowException) as exc:
        return [error("OBSERVATIONS_UNREADABLE", str(exc)[:200], where=name)]
    if not _same_columns(table.schema, layout.TRACE_TABLE):
        return [error("SCHEMA_MISMATCH", "columns or types differ from layout", where=name)]
    cases = {str(r.case_id) for r in records}
    orphans = sorted({str(k) for k in pc.unique(table["case_id"]).to_pylist()} - cases)
    problems = [
        error("ORPHAN_OBSERVATIONS", f"rows for unknown case {o}", where=name) for o in orphans
    ]
    words = [r.incident_id for r in records] + _chaos_names(root)
    leaks = traces.answer_leaks(table, [*words, *traces.forbidden_words("", "")])
    if leaks:
        problems.append(
            error(
                "ANSWER_IN_TRACES",
                f"spans name the answer: {', '.join(leaks[:3])}",
                where=name,
            )
        )
    return problems


def _state(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    path = root / layout.STATE
    if not path.is_file():
        return [error("FILE_MISSING", "no state", where=layout.STATE)]
    table = pq.read_table(path, columns=["case_id", "phase"])
    seen = set(
        zip(table.column("case_id").to_pylist(), table.column("phase").to_pylist(), strict=True)
    )
    wanted = {(str(r.case_id), p) for r in records for p in r.observations.phases}
    problems = [
        error("ORPHAN_OBSERVATIONS", f"state for unknown {i}/{p}", where=layout.STATE)
        for i, p in sorted(seen - wanted)
    ]
    problems += [
        error("STATE_MISSING", f"no state for {i}/{p}", where=layout.STATE)
        for i, p in sorted(wanted - seen)
    ]
    return problems


def _cases(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    """``cases.parquet`` has one row per record, keyed by its case id, with its fold."""
    table = pq.read_table(root / layout.CASES)
    if not _same_columns(table.schema, layout.CASE_TABLE):
        return [error("SCHEMA_MISMATCH", "columns or types differ from layout", where=layout.CASES)]
    listed = table.column("case_id").to_pylist()
    wanted = {str(r.case_id) for r in records}
    if sorted(listed) != sorted(wanted):
        return [error("CASES_MISMATCH", "case ids differ from the records", where=layout.CASES)]
    folds = Folds.model_validate_json((root / layout.FOLDS).read_bytes())
    fold_of = {c: k for k, members in enumerate(folds.folds) for c in members}
    column = table.column("fold").to_pylist()
    if any(fold_of.get(c) != k for c, k in zip(listed, column, strict=True)):
        return [error("CASES_MISMATCH", "fold column differs from folds.json", where=layout.CASES)]
    return []


def _folds(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    try:
        folds = Folds.model_validate_json((root / layout.FOLDS).read_bytes())
    except (OSError, ValueError) as exc:
        return [error("FOLDS_INVALID", str(exc).splitlines()[0], where=layout.FOLDS)]
    members = [i for fold in folds.folds for i in fold]
    cases = {str(r.case_id) for r in records}
    if len(members) != len(set(members)) or set(members) != cases or len(folds.folds) != folds.k:
        return [
            error(
                "FOLDS_NOT_PARTITION",
                "folds do not partition the main set",
                where=layout.FOLDS,
                repeated=sorted(i for i, n in Counter(members).items() if n > 1)[:5],
                missing=sorted(cases - set(members))[:5],
                unknown=sorted(set(members) - cases)[:5],
            )
        ]
    return []


def _trail(root: Path, records: list[BenchmarkRecord]) -> list[Problem]:
    try:
        trail = read_trail(root / layout.AUDIT_TRAIL)
    except (OSError, ValueError, pa.ArrowException) as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        return [error("AUDIT_TRAIL_INVALID", first, where=layout.AUDIT_TRAIL)]
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


def _croissant(root: Path, sha256: Digest) -> list[Problem]:
    try:
        document = json.loads((root / layout.CROISSANT).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        return [error("CROISSANT_INVALID", str(exc).splitlines()[0], where=layout.CROISSANT)]
    problems = []
    for item in document.get("distribution", []):
        path = root / str(item.get("contentUrl", ""))
        if not path.is_file() or sha256(path) != item.get("sha256"):
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
    sha256: Digest = functools.cache(sha256_file)
    problems = checksum_problems(root, sha256)
    try:
        records, record_problems = _records(root)
    except (OSError, ValueError, pa.ArrowException) as exc:
        records, record_problems = (
            [],
            [
                error(
                    "UNREADABLE", f"{type(exc).__name__}: {str(exc)[:200]}", where=layout.INCIDENTS
                )
            ],
        )
    problems += record_problems
    checks: list[tuple[bool, str, Callable[[], list[Problem]]]] = [  # (slow, file, check)
        (False, layout.KEY, lambda: _key(root, records)),
        (False, layout.CASES, lambda: _cases(root, records)),
        (True, "observations/", lambda: _observations(root, records)),
        (False, layout.STATE, lambda: _state(root, records)),
        (True, layout.TRACES, lambda: _traces(root, records)),
        (False, layout.FOLDS, lambda: _folds(root, records)),
        (False, layout.AUDIT_TRAIL, lambda: _trail(root, records)),
        (True, layout.README, lambda: _card(root, records)),
        # the labels' composition is cheap and guards scoring; only the figures are slow
        (
            False,
            layout.README,
            lambda: [] if not quick else _card(root, records, figures_too=False),
        ),
        (False, layout.CROISSANT, lambda: _croissant(root, sha256)),
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
