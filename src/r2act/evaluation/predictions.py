"""Reading an untrusted predictions file: every byte sequence yields a result, never a crash.

A predictions file is JSON Lines written by any method, so the reader assumes nothing about
it. It streams the file line by line with a hard cap on line length (memory stays bounded
whatever the file holds) and on the whole input (``MAX_FILE_BYTES``, ``MAX_LINES``: time stays
bounded too, even for an endless stream such as ``/dev/zero`` or a pipe that never closes),
decodes each line as strict UTF-8 (a byte-order mark at the start of the file, as some
Windows editors write, is skipped), parses JSON with a depth and duplicate-key guard, and
then reads the parts of a line independently:

- ``incident_id`` must be a short string without control or path characters; otherwise
  the line cannot be attributed to an incident and is dropped (counted). It may hold the
  incident id or the opaque case id a method sees (a line may say ``case_id`` instead);
  :meth:`PredictionFile.resolved` maps both to incident ids before scoring.
- ``rca`` and ``plan`` are parsed **separately**. A malformed plan makes the plan invalid
  (it scores as an ``invalid_structure`` plan, not as a no-op: it was an attempt to act)
  but a well-formed ``rca`` on the same line still counts for RCA-S and RCA-T, and vice
  versa. An ``rca`` with a mistyped field is dropped entirely rather than half-read; extra
  keys inside ``rca`` (e.g. ``confidence``) are ignored with a warning.
- Unknown top-level keys are counted and ignored; they never invalidate the line, so a
  method that adds e.g. a ``confidence`` field is not penalised for it. Unknown keys
  *inside a plan* make the plan invalid: a plan has exactly its operation's fields.
- :func:`read_predictions` refuses (DataError, exit 2) a file that is not a predictions
  file at all: Parquet, gzip or other binary bytes (a NUL byte at the start: also UTF-16),
  input beyond the size bounds, or no line with a ``plan`` or ``rca`` (CSV, YAML, the
  dataset's own records, an empty file). Zeros for such a file would look like a score.
- The first line for an incident wins; later lines for the same id are counted as
  duplicates and ignored.

Everything wrong is recorded as a :class:`ParseIssue` with its line number.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import IO, Literal

from pydantic import ValidationError

from r2act.datasets import ids
from r2act.errors import DataError
from r2act.schema import PLAN_ADAPTER, Operation, RcaPrediction, RecoveryPlan

MAX_LINE_BYTES = 1_000_000
"""Longest line read; longer lines are skipped without being held in memory."""

MAX_FILE_BYTES = 1 << 30
"""Most bytes read from one predictions file (1 GiB: a thousand lines of the longest kind).
Reading stops there and the file is refused: no benchmark has that many incidents."""

MAX_LINES = 1_000_000
"""Most lines read, blank ones included; beyond, the file is refused like an oversized one."""

BOM = b"\xef\xbb\xbf"
"""UTF-8 byte-order mark; skipped at the very start of the file, nowhere else."""

MAX_KEPT_ISSUES = 1000
"""Issues kept one by one; beyond this only their counts grow, so memory stays bounded."""

MAX_ID_CHARS = 200
_UNSAFE = re.compile(
    r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff\ufeff]"
)
"""Control, bidi-override, zero-width and lone-surrogate characters: never echoed raw."""
_PATHLIKE = re.compile(r"[/\\]|\.\.")
_KNOWN_KEYS = frozenset({"incident_id", "case_id", "rca", "plan", "method", "evidence"})


class IssueKind(StrEnum):
    """What can be wrong with a line of a predictions file."""

    EMPTY_FILE = "empty_file"
    TOO_LARGE = "too_large"
    LINE_TOO_LONG = "line_too_long"
    NOT_UTF8 = "not_utf8"
    MALFORMED_JSON = "malformed_json"
    NOT_AN_OBJECT = "not_an_object"
    BAD_INCIDENT_ID = "bad_incident_id"
    UNSAFE_CHARACTERS = "unsafe_characters"
    EXTRA_FIELD = "extra_field"
    RCA_EXTRA_FIELD = "rca_extra_field"
    BAD_RCA = "bad_rca"
    UNKNOWN_OPERATION = "unknown_operation"
    PLAN_MISSING_FIELD = "plan_missing_field"
    PLAN_EXTRA_FIELD = "plan_extra_field"
    PLAN_BAD_VALUE = "plan_bad_value"
    BAD_METHOD = "bad_method"
    DUPLICATE_ID = "duplicate_id"


@dataclass(frozen=True)
class ParseIssue:
    """One problem found at one line (line 0 for whole-file problems)."""

    line: int
    kind: IssueKind
    message: str


PlanState = Literal["absent", "null", "typed", "invalid"]


@dataclass(frozen=True)
class ParsedPrediction:
    """What could be trusted of one attributable line.

    ``plan_state`` keeps apart a plan that was never given (``absent``), an explicit
    ``null``, a well-typed plan and an invalid one; the error taxonomy needs the difference.
    ``raw_operation``/``raw_target`` keep the strings an invalid plan named (short ones
    only) so the taxonomy can still place a hallucinated target on the call graph.
    """

    line: int
    incident_id: str
    rca: RcaPrediction | None
    plan: RecoveryPlan | None
    plan_state: PlanState
    raw_operation: str | None = None
    raw_target: str | None = None
    method: str | None = None
    plan_issue: str | None = None
    """For an invalid plan: the IssueKind value that made it invalid."""

    def key(self) -> str:
        """A canonical string of what is scored, to compare predictions across lines/files."""
        rca = None if self.rca is None else self.rca.model_dump()
        plan = None if self.plan is None else self.plan.model_dump()
        return json.dumps([rca, self.plan_state, plan], sort_keys=True)


@dataclass
class PredictionFile:
    """A parsed predictions file: attributable predictions by id, plus every issue found."""

    source: str
    predictions: dict[str, ParsedPrediction] = field(default_factory=dict)
    issues: list[ParseIssue] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    lines: int = 0
    duplicates: dict[str, list[int]] = field(default_factory=dict)
    answering: int = 0
    """Lines (attributable or not) that are JSON objects with a ``plan`` or ``rca`` key."""
    record_like: int = 0
    """Lines that look like a dataset record (``gold_plan``/``labels``), not a prediction."""
    stopped: str = ""
    """Why reading stopped before the end (an input bound was reached); empty otherwise."""

    @property
    def method(self) -> str:
        """The most common ``method`` field, else the file's stem."""
        names = Counter(p.method for p in self.predictions.values() if p.method)
        if names:
            return names.most_common(1)[0][0]
        return Path(self.source).stem or self.source

    def resolved(self, aliases: Mapping[str, str]) -> PredictionFile:
        """This file with every key mapped through ``aliases`` (case id -> incident id).

        A file may key some lines by case id and others by incident id: two lines that
        name the same incident either way are duplicates (the first line wins), as if both
        had used the same id. Unknown keys stay as they are (the integrity check names them).
        """
        out = PredictionFile(
            self.source, lines=self.lines, answering=self.answering, record_like=self.record_like
        )
        out.issues = list(self.issues)
        out.counts = Counter(self.counts)
        for prediction in sorted(self.predictions.values(), key=lambda p: p.line):
            incident = ids.resolve(prediction.incident_id, aliases)
            first = out.predictions.get(incident)
            if first is not None:
                out.duplicates.setdefault(incident, [first.line]).append(prediction.line)
                message = f"{incident} already given on line {first.line} (by its other id)"
                _issue(out, prediction.line, IssueKind.DUPLICATE_ID, message)
                continue
            out.predictions[incident] = replace(prediction, incident_id=incident)
        for key, lines in self.duplicates.items():
            incident = ids.resolve(key, aliases)
            merged = out.duplicates.setdefault(incident, [])
            out.duplicates[incident] = sorted(set(merged) | set(lines))
        return out

    def issue_counts(self) -> dict[str, int]:
        """Issues per kind (all of them, also those beyond ``MAX_KEPT_ISSUES``)."""
        return dict(self.counts)

    @property
    def line_issues(self) -> int:
        """How many issues concern a line (everything but whole-file issues)."""
        return sum(self.counts.values()) - self.counts[IssueKind.EMPTY_FILE.value]


def safe_text(value: object, limit: int = 60) -> str:
    """A short, printable rendering of untrusted text for messages (escapes control chars)."""
    text = value if isinstance(value, str) else repr(value)
    text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_MAGIC = {b"PAR1": "a Parquet file", b"\x1f\x8b": "gzip-compressed", b"PK\x03\x04": "a zip file"}
_HEAD = 4096
"""Bytes looked at for binary content before parsing: JSON text never holds a raw NUL."""


_FIX = 'write UTF-8 JSON Lines: one {"incident_id": ..., "rca": ..., "plan": ...} per line'


@contextmanager
def _opened(path: Path) -> Iterator[IO[bytes]]:
    """``path`` open for reading, refused (DataError) when missing or not text at all."""
    try:
        with path.open("rb") as stream:
            head = stream.peek(_HEAD)[:_HEAD]  # peek, not seek: a pipe cannot rewind
            for magic, what in _MAGIC.items():
                if head.startswith(magic):
                    raise DataError(f"{path}: is {what}, not a predictions file ({_FIX})")
            if b"\x00" in head:
                raise DataError(
                    f"{path}: holds binary data (NUL bytes in its first {len(head)} bytes; "
                    f"UTF-16 text has them too), not a predictions file ({_FIX})"
                )
            yield stream
    except FileNotFoundError:
        raise DataError(f"{path}: predictions file not found (check the path)") from None
    except IsADirectoryError:
        raise DataError(
            f"{path}: is a directory, not a predictions file (pass a .jsonl file)"
        ) from None
    except PermissionError:
        raise DataError(f"{path}: cannot read predictions file (check its permissions)") from None


def _refuse_oversized(path: Path, why: str) -> DataError:
    return DataError(
        f"{path}: {why}, more than a predictions file holds (one line per incident of the "
        "dataset; keep evidence short)"
    )


def read_predictions(path: Path) -> PredictionFile:
    """Parse the predictions file at ``path``.

    DataError when it cannot be opened or is not a predictions file at all (see module
    doc); bad lines in a real predictions file are issues, never errors."""
    with _opened(path) as stream:
        parsed = parse_stream(stream, source=str(path))
    if parsed.stopped:
        raise _refuse_oversized(path, parsed.stopped)
    if parsed.answering == 0:
        raise DataError(f"{path}: {_not_predictions(parsed)}")
    return parsed


def read_bounded(path: Path) -> bytes:
    """The bytes of a predictions-like file (without a leading BOM), under the reader's
    checks and bounds, for a caller that rewrites lines before parsing them (``--mapper``).

    Refuses (DataError) what :func:`read_predictions` refuses before parsing: a missing,
    binary or oversized file (``MAX_FILE_BYTES``, ``MAX_LINES``)."""
    with _opened(path) as stream:
        data = stream.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise _refuse_oversized(path, f"more than {MAX_FILE_BYTES >> 20} MiB")
    if data.count(b"\n") > MAX_LINES:
        raise _refuse_oversized(path, f"more than {MAX_LINES} lines")
    return data.removeprefix(BOM)


def _not_predictions(parsed: PredictionFile) -> str:
    """Why a file without a single ``plan`` or ``rca`` is refused, as one line."""
    fix = 'write one {"incident_id": ..., "rca": ..., "plan": ...} object per line'
    if parsed.record_like:
        return f"looks like the dataset's own records, not predictions ({fix})"
    if not parsed.lines or parsed.counts[IssueKind.EMPTY_FILE.value]:
        return f"is empty: no predictions ({fix})"
    if parsed.counts[IssueKind.MALFORMED_JSON.value] + parsed.counts[
        IssueKind.NOT_AN_OBJECT.value
    ] + parsed.counts[IssueKind.NOT_UTF8.value] >= max(parsed.lines - 1, 1):
        return f"is not JSON Lines (CSV or YAML?); not a predictions file ({fix})"
    return f"no line has a plan or rca; not a predictions file ({fix})"


def parse_stream(stream: IO[bytes], source: str = "<stream>") -> PredictionFile:
    """Parse JSON Lines from a binary stream; never raises on content.

    Stops reading past ``MAX_FILE_BYTES`` or ``MAX_LINES`` with a ``too_large`` issue (line
    0), which :func:`read_predictions` turns into a refusal."""
    result = PredictionFile(source=source)
    for number, raw in _lines(stream, result):
        _parse_line(number, raw, result)
    if not (result.predictions or result.counts):
        _issue(result, 0, IssueKind.EMPTY_FILE, "the file has no predictions")
    return result


def _lines(stream: IO[bytes], result: PredictionFile) -> Iterator[tuple[int, bytes]]:
    number = read = 0

    def over() -> bool:
        if read <= MAX_FILE_BYTES and number <= MAX_LINES:
            return False
        if read > MAX_FILE_BYTES:
            what = f"more than {MAX_FILE_BYTES >> 20} MiB"
        else:
            what = f"more than {MAX_LINES} lines"
        result.stopped = f"{what}; reading stopped there"
        _issue(result, 0, IssueKind.TOO_LARGE, result.stopped)
        return True

    while True:
        chunk = stream.readline(MAX_LINE_BYTES + 1)
        if not chunk:
            return
        number += 1
        read += len(chunk)
        if number == 1 and chunk.startswith(BOM):
            chunk = chunk[len(BOM) :]
        if over():
            return
        result.lines = number
        if len(chunk) > MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            while chunk and not chunk.endswith(b"\n"):  # drain the rest without keeping it
                chunk = stream.readline(MAX_LINE_BYTES)
                read += len(chunk)
                if over():
                    return
            _issue(result, number, IssueKind.LINE_TOO_LONG, f"longer than {MAX_LINE_BYTES} bytes")
            continue
        if chunk.strip():
            yield number, chunk


def _issue(result: PredictionFile, line: int, kind: IssueKind, message: str) -> None:
    result.counts[kind.value] += 1
    if len(result.issues) < MAX_KEPT_ISSUES:
        result.issues.append(ParseIssue(line, kind, message))


def _reject_duplicate_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        raise ValueError("duplicate key in object")
    return dict(pairs)


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not valid JSON")


def _parse_line(number: int, raw: bytes, result: PredictionFile) -> None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        _issue(result, number, IssueKind.NOT_UTF8, f"invalid UTF-8 at byte {error.start}")
        return
    try:
        value = json.loads(
            text, object_pairs_hook=_reject_duplicate_keys, parse_constant=_reject_constant
        )
    except RecursionError:
        _issue(result, number, IssueKind.MALFORMED_JSON, "JSON nested too deeply")
        return
    except ValueError as error:
        _issue(result, number, IssueKind.MALFORMED_JSON, safe_text(str(error), 120))
        return
    if not isinstance(value, dict):
        _issue(
            result,
            number,
            IssueKind.NOT_AN_OBJECT,
            f"a line must be an object, not {type(value).__name__}",
        )
        return
    _parse_object(number, value, result)


def _parse_object(number: int, value: dict[str, object], result: PredictionFile) -> None:
    if "plan" in value or "rca" in value:
        result.answering += 1
    if "gold_plan" in value or "labels" in value:
        result.record_like += 1
    key = value.get("incident_id", value.get("case_id"))
    incident = _incident_id(number, key, result)
    if incident is None:
        return
    extra = sorted(set(value) - _KNOWN_KEYS)
    if extra:
        names = ", ".join(safe_text(k, 30) for k in extra[:5])
        _issue(result, number, IssueKind.EXTRA_FIELD, f"ignored unknown field(s): {names}")
    if incident in result.predictions:
        result.duplicates.setdefault(incident, [result.predictions[incident].line]).append(number)
        first = result.predictions[incident].line
        _issue(result, number, IssueKind.DUPLICATE_ID, f"{incident} already given on line {first}")
        return
    rca = _rca(number, value.get("rca"), result)
    plan, state, operation, target, problem = _plan(number, value, result)
    result.predictions[incident] = ParsedPrediction(
        line=number,
        incident_id=incident,
        rca=rca,
        plan=plan,
        plan_state=state,
        raw_operation=operation,
        raw_target=target,
        method=_method(number, value.get("method"), result),
        plan_issue=problem,
    )


def _incident_id(number: int, value: object, result: PredictionFile) -> str | None:
    if not isinstance(value, str) or not value:
        what = "missing" if value is None else f"not a non-empty string ({type(value).__name__})"
        _issue(result, number, IssueKind.BAD_INCIDENT_ID, f"incident_id is {what}; line dropped")
        return None
    if len(value) > MAX_ID_CHARS or _UNSAFE.search(value) or _PATHLIKE.search(value):
        _issue(
            result,
            number,
            IssueKind.BAD_INCIDENT_ID,
            f"incident_id {safe_text(value)!r} is too long or has control/path characters; "
            "line dropped",
        )
        return None
    return value


def _rca(number: int, value: object, result: PredictionFile) -> RcaPrediction | None:
    if value is None:
        return None
    if isinstance(value, dict):
        extra = sorted(k for k in value if k not in RcaPrediction.model_fields)
        if extra:
            names = ", ".join(safe_text(k, 30) for k in extra[:5])
            _issue(result, number, IssueKind.RCA_EXTRA_FIELD, f"rca: ignored field(s): {names}")
            value = {k: v for k, v in value.items() if k in RcaPrediction.model_fields}
    try:
        rca = RcaPrediction.model_validate(value, strict=True)
    except ValidationError as error:
        _issue(result, number, IssueKind.BAD_RCA, f"rca ignored: {_first_error(error)}")
        return None
    if any(_UNSAFE.search(v) for v in (rca.service, rca.fault_type) if v):
        _issue(result, number, IssueKind.UNSAFE_CHARACTERS, "rca has control characters")
    return rca


def _plan(
    number: int, line: dict[str, object], result: PredictionFile
) -> tuple[RecoveryPlan | None, PlanState, str | None, str | None, str | None]:
    if "plan" not in line:
        return None, "absent", None, None, None
    value = line["plan"]
    if value is None:
        return None, "null", None, None, None
    operation = target = None
    if isinstance(value, dict):
        operation = _short_str(value.get("operation"))
        target = _short_str(value.get("target"))
    try:
        plan = PLAN_ADAPTER.validate_python(value)
    except ValidationError as error:
        kind = _plan_issue_kind(value, error)
        _issue(result, number, kind, f"plan invalid: {_first_error(error)}")
        if target is not None and _UNSAFE.search(target):
            _issue(
                result, number, IssueKind.UNSAFE_CHARACTERS, "plan target has control characters"
            )
        return None, "invalid", operation, target, kind.value
    return plan, "typed", plan.operation, getattr(plan, "target", None), None


def _plan_issue_kind(value: object, error: ValidationError) -> IssueKind:
    if not isinstance(value, dict):
        return IssueKind.PLAN_BAD_VALUE
    operation = value.get("operation")
    if "operation" not in value:
        return IssueKind.PLAN_MISSING_FIELD
    if not isinstance(operation, str) or operation not in set(Operation):
        return IssueKind.UNKNOWN_OPERATION
    types = {e["type"] for e in error.errors()}
    if "extra_forbidden" in types:
        return IssueKind.PLAN_EXTRA_FIELD
    if "missing" in types:
        return IssueKind.PLAN_MISSING_FIELD
    return IssueKind.PLAN_BAD_VALUE


def _method(number: int, value: object, result: PredictionFile) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > 200 or _UNSAFE.search(value):
        _issue(result, number, IssueKind.BAD_METHOD, "method ignored: not a short printable string")
        return None
    return value


def _short_str(value: object) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= 253 else None


def _first_error(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "value"
    more = f" (+{error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return safe_text(f"{where}: {first['msg']}", 160) + more
