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

Judge once: an incident already judged (by the collector, or by an earlier audit) has its
summaries and verdict in ``RUN/raw/<id>/judged.json`` (``quality_gate.judged``); while its
files and the gate's code are unchanged the audit reuses them, and under another policy it
relabels from the summaries, so its logs are read by nobody but the dataset build.
"""

from __future__ import annotations

import dataclasses
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
from typing import Final, Literal

import pyarrow as pa
import pyarrow.parquet as pq

from r2act.actions import DEFAULT_POLICY, RecoveryPolicy, policy_named
from r2act.campaigns.quotas import CellKey, admit
from r2act.errors import DataError
from r2act.quality_gate import judged
from r2act.quality_gate.checks import run_checks
from r2act.quality_gate.evidence import IncidentEvidence, WrittenLogs, gather
from r2act.quality_gate.interference import run_interference
from r2act.quality_gate.problems import Group, Problem, Verdict, error, group_for
from r2act.quality_gate.rawstore import RAW_DIR, STAGED_LOG_SCHEMA, list_incidents
from r2act.quality_gate.records import build_record
from r2act.quality_gate.report import render_report
from r2act.schema import BenchmarkRecord, Phase
from r2act.schema.rawstore import COMPLETE, file_digests

AUDIT_DIR: Final = "audit"
AUDIT_JSONL: Final = "audit.jsonl"
RECORDS_DIR: Final = "records"
STAGED_LOGS_DIR: Final = "logs"
REPORT_MD: Final = "report.md"
PARALLEL_MIN: Final = 8
"""Below this many incidents, worker start-up costs more than it saves."""
How = Literal["reused", "relabelled", "judged"]
"""How an incident's verdict was reached: taken as stored, re-decided on the stored
summaries (another policy, or run-wide problems), or judged from the files."""


@dataclass(frozen=True)
class AuditResult:
    """What an audit wrote and how the incidents were grouped."""

    audit_dir: Path
    verdicts: list[Verdict]
    hows: Mapping[str, How] = dataclasses.field(default_factory=dict)
    """How each incident's verdict was reached (``judge_incident``), by id."""

    @property
    def reused(self) -> int:
        """Verdicts taken as stored: files, code and policy unchanged."""
        return sum(h == "reused" for h in self.hows.values())

    @property
    def relabelled(self) -> int:
        """Verdicts re-decided on stored summaries, without reading the files."""
        return sum(h == "relabelled" for h in self.hows.values())

    @property
    def judged(self) -> int:
        """Verdicts judged from the files."""
        return sum(h == "judged" for h in self.hows.values())

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


def raw_checksum_problems(
    incident_dir: Path, actual: dict[str, str] | None = None
) -> list[Problem]:
    """Files whose bytes differ from the SHA-256 the collector wrote into ``COMPLETE``
    (``actual``: the files' digests, when already computed).

    An incident from a collector that wrote no checksums has nothing to compare.
    """
    try:
        claimed = json.loads((incident_dir / COMPLETE).read_text(encoding="utf-8")).get("sha256")
    except (OSError, ValueError, AttributeError):
        return []
    if not isinstance(claimed, dict):
        return []
    actual = file_digests(incident_dir) if actual is None else actual
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


@dataclass(frozen=True)
class Judged:
    """One incident's verdict, its record when main, and how they were reached."""

    verdict: Verdict
    record: BenchmarkRecord | None
    how: How


def _decide(
    evidence: IncidentEvidence,
    checksums: list[Problem],
    extra: list[Problem],
    policy: RecoveryPolicy,
) -> tuple[Verdict, BenchmarkRecord | None]:
    """The verdict on ``evidence`` given the checksum problems and the run-wide ones
    (``extra``), and its record if main."""
    problems = checksums + run_checks(evidence) + extra
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
    return verdict, record if group == Group.MAIN else None


def judge_incident(
    incident_dir: Path,
    stage_dir: Path | None = None,
    policy: RecoveryPolicy | str = DEFAULT_POLICY,
    found: Mapping[str, list[Problem]] | None = None,
    *,
    keep: bool = True,
    written: Mapping[Phase, WrittenLogs] | None = None,
) -> Judged:
    """The verdict on one raw incident and, when it is main, its record under ``policy``
    (a policy or a shipped policy's name: worker processes get the name).

    ``written``: the log lines of phases the collector has just written, summarised
    instead of parsed from the files again (``evidence.WrittenLogs``); ignored with
    ``stage_dir``, which needs the parsed rows.

    What ``judged.json`` holds is used when the incident's files and the gate's code are
    those it was judged with (``quality_gate.judged``); otherwise the files are read and,
    with ``keep``, the new judgement is stored for the next audit. With ``stage_dir``, a
    main incident read from its files has its parsed logs written there. ``found`` holds
    problems only the whole run shows (lanes interfering), by incident id.
    """
    policy = policy_named(policy) if isinstance(policy, str) else policy
    digests = file_digests(incident_dir)
    checksums = raw_checksum_problems(incident_dir, digests)
    extra = list((found or {}).get(incident_dir.name, []))
    files, code = judged.files_digest(incident_dir, digests), judged.code_digest()
    stored = judged.load(incident_dir)
    if stored is not None and stored.files == files and stored.code == code:
        if stored.policy == str(policy) and not extra:
            return Judged(stored.verdict, stored.record, "reused")
        verdict, record = _decide(stored.evidence, checksums, extra, policy)
        return Judged(verdict, record, "relabelled")
    evidence = gather(incident_dir, None if stage_dir is not None else written)
    verdict, record = _decide(evidence, checksums, [], policy)
    if keep:
        evidence_only = dataclasses.replace(
            evidence,
            phases={
                name: dataclasses.replace(p, log_table=None) for name, p in evidence.phases.items()
            },
        )
        judged.store(
            incident_dir,
            judged.Judgement(files, code, str(policy), evidence_only, verdict, record),
        )
    if extra:
        verdict, record = _decide(evidence, checksums, extra, policy)
    if record is not None and stage_dir is not None:
        stage_logs(evidence, stage_dir / f"{evidence.incident_id}.parquet")
    return Judged(verdict, record, "judged")


def audit_incident(
    incident_dir: Path,
    stage_dir: Path | None = None,
    policy: RecoveryPolicy | str = DEFAULT_POLICY,
    found: Mapping[str, list[Problem]] | None = None,
) -> tuple[Verdict, BenchmarkRecord | None]:
    """``judge_incident`` without the how: the verdict and the record when main."""
    done = judge_incident(incident_dir, stage_dir, policy, found)
    return done.verdict, done.record


def _results(
    dirs: list[Path], workers: int, stage_dir: Path, policy: RecoveryPolicy
) -> Iterator[Judged]:
    found = run_interference(dirs)  # lanes on shared nodes: a property of the whole run
    one = functools.partial(judge_incident, stage_dir=stage_dir, policy=str(policy), found=found)
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
        hows: dict[str, How] = {}
        for done in _results(
            [i.root for i in incidents], workers or default_workers(), stage_dir, policy
        ):
            verdict, record = done.verdict, done.record
            verdicts.append(verdict)
            hows[verdict.incident_id] = done.how
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
    return AuditResult(out, verdicts, hows)


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
