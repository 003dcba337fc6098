"""``r2act audit``: judge every raw incident of a run and write ``RUN/audit``.

Per incident: gather evidence (the one pass over its files), run the checks, build the
record, decide the group. Incidents are independent, so on a multi-core machine they are
audited in worker processes (each returns only a verdict and a record, never telemetry);
results come back in id order, so the output does not depend on scheduling. Outputs:

    RUN/audit/audit.jsonl          one Verdict per incident, sorted by id

Records are labelled under one named recovery policy (``--policy``; default
``r2act-mechanics/3``), which each record and verdict carries. A campaign with cell quotas
(``campaigns.quotas``) gets exactly its quota of main incidents per cell: clean incidents
beyond it are grouped ``spare`` and get no record.
    RUN/audit/records/<id>.json    BenchmarkRecord of each main incident
    RUN/audit/report.md            groups, reasons histogram, service x fault cells
    RUN/audit/logs/<id>.parquet    parsed log rows of each main incident (staged)

The staged logs exist because decompressing and parsing logs is most of the cost of both
stages; the gate already holds them parsed, so the dataset builder reads these instead of
parsing the raw files a second time (it falls back to the raw files when they are absent).
"""

from __future__ import annotations

import functools
import json
import multiprocessing
import multiprocessing.pool
import os
import shutil
import signal
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import pyarrow as pa
import pyarrow.parquet as pq

from r2act.actions import DEFAULT_POLICY, RecoveryPolicy, policy_named
from r2act.campaigns.quotas import CellKey, admit
from r2act.errors import DataError
from r2act.quality_gate.checks import run_checks
from r2act.quality_gate.evidence import IncidentEvidence, gather
from r2act.quality_gate.interference import run_interference
from r2act.quality_gate.problems import Group, Problem, Verdict, error, group_for
from r2act.quality_gate.rawstore import RAW_DIR, STAGED_LOG_SCHEMA, list_incidents
from r2act.quality_gate.records import build_record
from r2act.quality_gate.report import render_report
from r2act.schema import BenchmarkRecord
from r2act.schema.rawstore import COMPLETE, file_digests

AUDIT_DIR: Final = "audit"
AUDIT_JSONL: Final = "audit.jsonl"
RECORDS_DIR: Final = "records"
STAGED_LOGS_DIR: Final = "logs"
REPORT_MD: Final = "report.md"
PARALLEL_MIN: Final = 8
"""Below this many incidents, worker start-up costs more than it saves."""


@dataclass(frozen=True)
class AuditResult:
    """What an audit wrote and how the incidents were grouped."""

    audit_dir: Path
    verdicts: list[Verdict]

    def count(self, group: Group) -> int:
        """Incidents in ``group``."""
        return sum(v.group == group for v in self.verdicts)


def stage_logs(evidence: IncidentEvidence, path: Path) -> None:
    """Write an admitted incident's parsed log rows (all phases, in order) to ``path``."""
    tables = [p.log_table for p in evidence.phases.values() if p.log_table is not None]
    table = pa.concat_tables(tables) if tables else STAGED_LOG_SCHEMA.empty_table()
    keys = [f.name for f in STAGED_LOG_SCHEMA if f.name != "line"]
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(
        table,
        tmp,
        compression="lz4",  # a scratch copy: fast beats small here
        use_dictionary=keys,
        write_statistics=False,
        row_group_size=max(table.num_rows, 1),
    )
    os.replace(tmp, path)


def raw_checksum_problems(incident_dir: Path) -> list[Problem]:
    """Files whose bytes differ from the SHA-256 the collector wrote into ``COMPLETE``.

    An incident from a collector that wrote no checksums has nothing to compare.
    """
    try:
        claimed = json.loads((incident_dir / COMPLETE).read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(claimed, dict):
        return []
    actual = file_digests(incident_dir)
    differ = sorted(k for k in claimed.keys() | actual.keys() if claimed.get(k) != actual.get(k))
    if not differ:
        return []
    return [
        error(
            "RAW_CHECKSUM_MISMATCH",
            f"{len(differ)} file(s) differ from the checksums written at collection "
            f"(changed, added or removed after collection): {', '.join(differ[:3])}",
            where=differ[0],
            files=differ[:20],
        )
    ]


def audit_incident(
    incident_dir: Path,
    stage_dir: Path | None = None,
    policy: RecoveryPolicy | str = DEFAULT_POLICY,
    found: Mapping[str, list[Problem]] | None = None,
) -> tuple[Verdict, BenchmarkRecord | None]:
    """The verdict on one raw incident and, when it is main, its record under ``policy``
    (a policy or a shipped policy's name: worker processes get the name).

    With ``stage_dir``, a main incident's parsed logs are also written there. ``found``
    holds problems only the whole run shows (lanes interfering), by incident id.
    """
    policy = policy_named(policy) if isinstance(policy, str) else policy
    evidence = gather(incident_dir)
    problems = raw_checksum_problems(incident_dir) + run_checks(evidence)
    problems += (found or {}).get(incident_dir.name, [])
    record, record_problems = build_record(evidence, policy)
    problems += record_problems
    problems.sort(key=lambda p: p.severity != "error")
    ann = evidence.annotation
    pilot = bool(ann and ann.incident.pilot)
    group = group_for(problems, pilot)
    verdict = Verdict(
        incident_id=evidence.incident_id,
        group=group,
        problems=problems,
        campaign=ann.campaign if ann else None,
        service=ann.incident.service if ann else None,
        fault_type=ann.incident.fault.type if ann else None,
        intensity=ann.incident.fault.intensity if ann else None,
        repetition=ann.incident.repetition if ann else None,
        quota=ann.incident.quota if ann else None,
        policy=str(policy) if record is not None else None,
        pilot=pilot,
        log_records=evidence.log_records,
    )
    if group != Group.MAIN:
        return verdict, None
    if stage_dir is not None:
        stage_logs(evidence, stage_dir / f"{evidence.incident_id}.parquet")
    return verdict, record


def _results(
    dirs: list[Path], workers: int, stage_dir: Path, policy: RecoveryPolicy
) -> Iterator[tuple[Verdict, BenchmarkRecord | None]]:
    found = run_interference(dirs)  # lanes on shared nodes: a property of the whole run
    one = functools.partial(audit_incident, stage_dir=stage_dir, policy=str(policy), found=found)
    if workers <= 1 or len(dirs) < PARALLEL_MIN:
        yield from map(one, dirs)
        return
    with worker_pool(workers) as pool:
        yield from pool.imap(one, dirs, chunksize=1)


def worker_pool(workers: int) -> multiprocessing.pool.Pool:
    """The audit's process pool.

    Not fork: a parent with threads (progress monitors, HTTP clients) can hand a forked
    worker a lock that is held forever. A fork server starts from a clean process."""
    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
    return context.Pool(workers, initializer=_worker_signals)


def _worker_signals() -> None:
    """Ctrl-C is the parent's: it stops the pool; workers must not print their tracebacks.
    SIGTERM is how the pool stops its workers, so it must kill them even when the parent
    ignores it (a collection stopped by a signal ignores late ones; a worker inherits that)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def default_workers() -> int:
    """Worker processes to use: one per available CPU, at most 4."""
    try:
        available = len(os.sched_getaffinity(0))
    except AttributeError:  # not on every platform
        available = os.cpu_count() or 1
    return max(1, min(4, available))


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def run_audit(
    run_dir: Path,
    *,
    workers: int | None = None,
    progress: Callable[[Verdict], None] | None = None,
    policy: RecoveryPolicy = DEFAULT_POLICY,
) -> AuditResult:
    """Audit every incident under ``RUN/raw`` and write ``RUN/audit``; DataError if none."""
    incidents = list_incidents(run_dir)
    if not incidents:
        raise DataError(
            f"{run_dir / RAW_DIR}: no raw incidents (run `r2act collect MANIFEST` first)"
        )
    out = run_dir / AUDIT_DIR
    records_dir = out / RECORDS_DIR
    stage_dir = out / STAGED_LOGS_DIR
    try:
        out.mkdir(parents=True, exist_ok=True)
        # audit.jsonl is written last: while it is absent nothing reads a half-written audit
        for finished in (out / AUDIT_JSONL, out / REPORT_MD):
            finished.unlink(missing_ok=True)
        for directory in (records_dir, stage_dir):
            if directory.exists():
                shutil.rmtree(directory)  # nothing of a previous audit may survive
            directory.mkdir()
        verdicts: list[Verdict] = []
        for verdict, record in _results(
            [i.root for i in incidents], workers or default_workers(), stage_dir, policy
        ):
            verdicts.append(verdict)
            if record is not None:
                text = record.model_dump_json(indent=2) + "\n"
                (records_dir / f"{record.incident_id}.json").write_text(text, encoding="utf-8")
            if progress is not None:
                progress(verdict)
        verdicts = _cap_cells(verdicts, records_dir, stage_dir)
        _write_atomic(out / AUDIT_JSONL, "".join(v.model_dump_json() + "\n" for v in verdicts))
        campaign = _campaign_name(run_dir, verdicts)
        _write_atomic(out / REPORT_MD, render_report(campaign, verdicts))
    except OSError as exc:
        raise DataError(
            f"{out}: cannot write the audit: {exc.strerror or exc} (check space and permissions)"
        ) from exc
    return AuditResult(out, verdicts)


def _cap_cells(verdicts: list[Verdict], records_dir: Path, stage_dir: Path) -> list[Verdict]:
    """Group main incidents beyond their cell's quota as ``spare`` and drop their files."""
    passed: list[tuple[str, CellKey, int, int | None]] = [
        (v.incident_id, (v.service, v.fault_type, v.intensity), v.repetition or 0, v.quota)
        for v in verdicts
        if v.group == Group.MAIN and v.service and v.fault_type and v.intensity
    ]
    surplus = set(admit(passed).surplus)
    for ident in surplus:
        (records_dir / f"{ident}.json").unlink(missing_ok=True)
        (stage_dir / f"{ident}.parquet").unlink(missing_ok=True)
    return [
        v.model_copy(update={"group": Group.SPARE, "policy": None})
        if v.incident_id in surplus
        else v
        for v in verdicts
    ]


def _campaign_name(run_dir: Path, verdicts: list[Verdict]) -> str:
    names = sorted({v.campaign for v in verdicts if v.campaign})
    return ", ".join(names) if names else run_dir.resolve().name


def read_verdicts(run_dir: Path) -> list[Verdict]:
    """Verdicts of a finished audit; DataError when the audit has not been run."""
    path = run_dir / AUDIT_DIR / AUDIT_JSONL
    if not path.is_file():
        raise DataError(f"{path}: no audit found (run `r2act audit {run_dir}` first)")
    try:
        return [
            Verdict.model_validate_json(line)
            for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    except ValueError as exc:
        raise DataError(
            f"{path}: unreadable audit ({str(exc).splitlines()[0]}; rerun `r2act audit`)"
        ) from exc
