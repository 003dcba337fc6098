"""Judge once: an incident's evidence summaries and verdict, stored with the incident.

Reading an incident's files (decompressing and parsing its logs above all) is the cost of
judging it; the checks and the labelling that follow are cheap functions of the summaries
(``evidence.py``). So whoever judges an incident first (the collector, to stop full cells)
keeps the summaries, the verdict and the record in ``RUN/raw/<id>/judged.json``, and the
audit takes them back instead of reading the files again:

- files, code and policy unchanged: the stored verdict and record are reused as they are;
- only the policy differs (``r2act audit --policy``), or the whole run shows a problem the
  incident alone did not (lanes interfering): the checks and the labels run again on the
  stored summaries, without reading a log line;
- anything else (a changed, added or removed file, another gate version): judged from the
  files again, as if nothing were stored.

"Unchanged" is checked by digest: the SHA-256 of every file of the incident (``COMPLETE``
and the journal included) and the SHA-256 of the gate's own source code (the packages a
verdict depends on), so an edited check invalidates every stored verdict even when the
version number stays the same. The file is written atomically and never required: a
missing, torn or foreign ``judged.json`` only means judging from the files.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from r2act.quality_gate.evidence import (
    EventSummary,
    IncidentEvidence,
    LogSummary,
    MetricSummary,
    PhaseEvidence,
    SeriesStats,
    StateSummary,
)
from r2act.quality_gate.problems import Verdict
from r2act.quality_gate.rawstore import Annotation
from r2act.schema import BenchmarkRecord, ChaosStatus
from r2act.schema.rawstore import COMPLETE, JOURNAL, JUDGED

FORMAT: Final = 1
"""Version of the ``judged.json`` layout itself."""
_CODE_PACKAGES: Final = ("quality_gate", "actions", "schema", "systems")
"""The parts of r2act a verdict depends on: their source is digested into the key."""


@functools.cache
def code_digest() -> str:
    """SHA-256 of the source of every module a verdict depends on (computed once)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    paths = [root / "__init__.py"]
    for package in _CODE_PACKAGES:
        paths += sorted((root / package).rglob("*.py"))
    for path in paths:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def files_digest(incident_dir: Path, digests: dict[str, str]) -> str:
    """One SHA-256 over an incident: its files' digests (``schema.rawstore.file_digests``)
    plus ``COMPLETE`` and the journal, which those leave out."""
    whole = dict(digests)
    for name in (COMPLETE, JOURNAL):
        try:
            whole[name] = hashlib.sha256((incident_dir / name).read_bytes()).hexdigest()
        except OSError:
            whole[name] = ""
    return hashlib.sha256(json.dumps(whole, sort_keys=True).encode()).hexdigest()


@dataclass(frozen=True)
class Judgement:
    """What ``judged.json`` holds: the key it is valid under and what was judged."""

    files: str
    """``files_digest`` of the incident when it was judged."""
    code: str
    """``code_digest`` of the gate that judged it."""
    policy: str
    """The recovery policy its record was labelled under."""
    evidence: IncidentEvidence
    """The summaries (no parsed log rows)."""
    verdict: Verdict
    """The verdict, without the problems only the whole run shows."""
    record: BenchmarkRecord | None
    """The record when the verdict is main."""


def store(incident_dir: Path, judgement: Judgement) -> None:
    """Write ``judged.json`` atomically; a store that cannot be written is only slower."""
    document = {
        "format": FORMAT,
        "files": judgement.files,
        "code": judgement.code,
        "policy": judgement.policy,
        "evidence": evidence_document(judgement.evidence),
        "verdict": judgement.verdict.model_dump(mode="json"),
        "record": None if judgement.record is None else judgement.record.model_dump(mode="json"),
    }
    path = incident_dir / JUDGED
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        tmp.write_text(json.dumps(document, separators=(",", ":")), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        tmp.unlink(missing_ok=True)


def load(incident_dir: Path) -> Judgement | None:
    """The stored judgement of ``incident_dir``; None when absent or unreadable."""
    try:
        document = json.loads((incident_dir / JUDGED).read_bytes())
        if document.get("format") != FORMAT:
            return None
        record = document["record"]
        return Judgement(
            files=str(document["files"]),
            code=str(document["code"]),
            policy=str(document["policy"]),
            evidence=evidence_from_document(document["evidence"]),
            verdict=Verdict.model_validate(document["verdict"]),
            record=None if record is None else BenchmarkRecord.model_validate(record),
        )
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def evidence_document(evidence: IncidentEvidence) -> dict[str, Any]:
    """``evidence`` as plain JSON values (the parsed log rows left out)."""
    return {
        "incident_id": evidence.incident_id,
        "complete": evidence.complete,
        "annotation": (
            None if evidence.annotation is None else evidence.annotation.model_dump(mode="json")
        ),
        "annotation_error": evidence.annotation_error,
        "chaos_yaml_error": evidence.chaos_yaml_error,
        "journal_failures": list(evidence.journal_failures),
        "phases": {name: _phase_document(p) for name, p in evidence.phases.items()},
    }


def evidence_from_document(document: dict[str, Any]) -> IncidentEvidence:
    """The inverse of ``evidence_document``."""
    annotation = document["annotation"]
    return IncidentEvidence(
        incident_id=str(document["incident_id"]),
        complete=bool(document["complete"]),
        annotation=None if annotation is None else Annotation.model_validate(annotation),
        annotation_error=document["annotation_error"],
        chaos_yaml_error=document["chaos_yaml_error"],
        phases={name: _phase_from(p) for name, p in document["phases"].items()},
        journal_failures=list(document["journal_failures"]),
    )


def _summary_document(summary: Any) -> dict[str, Any] | None:
    if summary is None:
        return None
    out = {f.name: getattr(summary, f.name) for f in dataclasses.fields(summary)}
    if isinstance(summary, MetricSummary):
        out["series"] = [
            [query, labels, s.mean, s.std, s.count] for (query, labels), s in summary.series.items()
        ]
    return out


def _summary_from(cls: type[Any], document: dict[str, Any] | None) -> Any:
    if document is None:
        return None
    values = dict(document)
    for f in dataclasses.fields(cls):
        if str(f.type).startswith("tuple") and isinstance(values.get(f.name), list):
            values[f.name] = tuple(values[f.name])
    if cls is MetricSummary:
        values["series"] = {
            (str(q), str(lab)): SeriesStats(float(m), float(s), int(n))
            for q, lab, m, s, n in values["series"]
        }
    return cls(**values)


def _phase_document(phase: PhaseEvidence) -> dict[str, Any]:
    return {
        "phase": phase.phase,
        "present": phase.present,
        "missing": list(phase.missing),
        "unreadable": dict(phase.unreadable),
        "window": None if phase.window is None else list(phase.window),
        "logs": _summary_document(phase.logs),
        "events": _summary_document(phase.events),
        "metrics": _summary_document(phase.metrics),
        "state": _summary_document(phase.state),
        "chaos": None if phase.chaos is None else phase.chaos.model_dump(mode="json"),
    }


def _phase_from(document: dict[str, Any]) -> PhaseEvidence:
    window = document["window"]
    chaos = document["chaos"]
    return PhaseEvidence(
        phase=document["phase"],
        present=bool(document["present"]),
        missing=list(document["missing"]),
        unreadable=dict(document["unreadable"]),
        window=None if window is None else (float(window[0]), float(window[1])),
        logs=_summary_from(LogSummary, document["logs"]),
        events=_summary_from(EventSummary, document["events"]),
        metrics=_summary_from(MetricSummary, document["metrics"]),
        state=_summary_from(StateSummary, document["state"]),
        chaos=None if chaos is None else ChaosStatus.model_validate(chaos),
    )
