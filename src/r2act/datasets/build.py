"""``r2act dataset build``: publish the main incidents of an audited run (DESIGN section 7).

Inputs are ``RUN/audit`` (verdicts and records) and ``RUN/raw`` (observations). The build
streams incident by incident: worker processes parse one incident's raw files each, the
parent appends them to the Parquet writers in id order (one row group per incident), so
memory is bounded by a few incidents and the output does not depend on scheduling. It
writes into a temporary sibling directory and swaps it in at the end, so a failed build
never leaves a half dataset, and a rebuild of the same run gives byte-identical files.

Several audited runs (of one system or of several, e.g. an Online Boutique campaign and an
Astronomy Shop one) build one dataset: their main incidents are pooled and published exactly
as one run's would be (one salt and case-id set over all answers, folds stratified over all
records, one SHA256SUMS), each incident's observations read from the run it was collected in.
Two runs holding the same incident id are refused (merge shards of one campaign with
``r2act merge`` first); the scorer reports such a dataset per system (``by_system``).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import threading
from collections import Counter, deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from r2act import __version__
from r2act.datasets import figures, ids, layout, tables
from r2act.datasets.card import BuildInfo, entry_point, render_card
from r2act.datasets.checksums import read_sums, sha256_file, write_sums
from r2act.datasets.composition import Composition, compose
from r2act.datasets.folds import DEFAULT_SEED, Folds, make_folds
from r2act.datasets.observations import IncidentObservations, read_incident
from r2act.datasets.schemas import write_schemas
from r2act.errors import DataError
from r2act.quality_gate import (
    AUDIT_DIR,
    RECORDS_DIR,
    REPORT_MD,
    STAGED_LOGS_DIR,
    Group,
    Verdict,
    read_verdicts,
)
from r2act.quality_gate.audit import default_workers
from r2act.quality_gate.rawstore import RAW_DIR
from r2act.schema import BenchmarkRecord
from r2act.systems import INSTALLED

DATASET_DIR = "dataset"
_PARALLEL_MIN = 8
_FREE_TEXT = frozenset({"line", "message", "labels", "state", "data", "record", "verdict"})
"""Columns too varied for dictionary encoding; trying it only costs time."""


@dataclass(frozen=True)
class BuildResult:
    """Where the dataset went and what is in it."""

    out: Path
    composition: Composition
    trail: int


def main_records(run_dir: Path, verdicts: list[Verdict]) -> list[BenchmarkRecord]:
    """The record of every main incident, sorted by id; DataError if one is missing."""
    records = []
    for verdict in sorted(verdicts, key=lambda v: v.incident_id):
        if verdict.group != Group.MAIN:
            continue
        path = run_dir / AUDIT_DIR / RECORDS_DIR / f"{verdict.incident_id}.json"
        try:
            records.append(BenchmarkRecord.model_validate_json(path.read_bytes()))
        except (OSError, ValueError) as exc:
            raise DataError(
                f"{path}: record of a main incident is missing or invalid (rerun `r2act audit`)"
            ) from exc
    return records


@dataclass(frozen=True)
class _Runs:
    """The audited runs a dataset is built from, pooled: verdicts, main records (sorted by
    incident id) and the run each incident was collected in."""

    dirs: tuple[Path, ...]
    verdicts: list[Verdict]
    records: list[BenchmarkRecord]
    run_of: dict[str, Path]

    @property
    def name(self) -> str:
        """What the card says the dataset was built from: the runs' directory names."""
        return ", ".join(d.resolve().name for d in self.dirs)


def _gather(run_dirs: Sequence[Path]) -> _Runs:
    """Every run's verdicts and main records; DataError when two runs share an incident."""
    verdicts: list[Verdict] = []
    records: list[BenchmarkRecord] = []
    run_of: dict[str, Path] = {}
    seen: dict[str, Path] = {}
    for run in run_dirs:
        own = read_verdicts(run)
        for verdict in own:
            if verdict.incident_id in seen:
                raise DataError(
                    f"{run}: incident {verdict.incident_id} is also in {seen[verdict.incident_id]}"
                    " (build from distinct campaigns; merge shards of one with `r2act merge`)"
                )
            seen[verdict.incident_id] = run
        verdicts += own
        for record in main_records(run, own):
            records.append(record)
            run_of[record.incident_id] = run
    records.sort(key=lambda r: r.incident_id)
    return _Runs(tuple(run_dirs), verdicts, records, run_of)


def _observations(
    dirs: list[tuple[Path, str, Path]], workers: int
) -> Iterator[IncidentObservations]:
    """Each incident's observations in order, read ahead by ``workers`` threads.

    Threads, not processes: parsing (pyarrow's JSON reader) and Parquet encoding release
    the GIL, so reading the next incidents overlaps with writing this one, without
    pickling tens of megabytes per incident between processes. At most ``2 * workers``
    incidents are in memory at once.
    """
    if workers <= 1 or len(dirs) < _PARALLEL_MIN:
        yield from (read_incident(raw, case, staged) for raw, case, staged in dirs)
        return
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="r2act-read") as pool:
        pending: deque[Future[IncidentObservations]] = deque()
        for raw, case, staged in dirs:
            pending.append(pool.submit(read_incident, raw, case, staged))
            if len(pending) >= 2 * workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _writer(path: Path, schema: pa.Schema, **change: Any) -> pq.ParquetWriter:
    """One Parquet writer with the dataset's settings (``change``: for measuring others).

    zstd at its default level, dictionary encoding and statistics on every column but free
    text, one row group per incident (a reader takes one case by its statistics). Measured
    with ``bench/build.py --parquet DATASET`` on 40 paper-scale incidents' logs (1.5M rows,
    CPU on a loaded 2-core machine, so +-10%): these settings write in 1.38 s to 28.2 MiB;
    zstd level 3 costs 8% more for 2% more bytes, lz4 and snappy save 20-25% of the write
    for 1.8-2.1x the bytes, statistics on the keys only or none change nothing measurable.
    Writing without any dictionary was faster (1.05 s) and smaller (25.4 MiB) on logs, but
    ``load`` reads the key columns as categoricals (``read_dictionary``), which a dictionary
    page hands over as is; that trade is left for a measurement of the readers too.
    """
    plain = [f.name for f in schema if f.name not in _FREE_TEXT]
    settings: dict[str, Any] = {
        "compression": "zstd",
        "use_dictionary": plain,
        "write_statistics": plain,
        **change,
    }
    return pq.ParquetWriter(path, schema, **settings)


def write_table(path: Path, table: pa.Table) -> None:
    """Write a whole (small) table as one row group."""
    writer = _writer(path, table.schema)
    try:
        writer.write_table(table, row_group_size=max(table.num_rows, 1))
    finally:
        writer.close()


_STREAMED = (layout.LOGS, layout.EVENTS, layout.METRICS, layout.STATE, layout.REQUESTS)
_PROVENANCE = (
    layout.ANNOTATIONS,
    layout.CHAOS_OBJECTS,
    layout.CHAOS_STATUS,
    layout.CHAOS_EVENTS,
)


class _Writers:
    """The Parquet writers the per-incident rows stream into (one row group per incident)."""

    def __init__(self, out: Path) -> None:
        (out / layout.OBSERVATIONS).mkdir()
        (out / layout.PROVENANCE).mkdir(parents=True)
        self.out = out
        self.tables = {
            path: _writer(out / path, layout.TABLES[path]) for path in (*_STREAMED, *_PROVENANCE)
        }

    def _traces(self, table: pa.Table | None) -> None:
        """Append an incident's spans; the table is opened by the first incident that has
        traces, so a dataset without any keeps exactly its old files."""
        if table is None:
            return
        writer = self.tables.get(layout.TRACES)
        if writer is None:
            writer = self.tables[layout.TRACES] = _writer(
                self.out / layout.TRACES, layout.TRACE_TABLE
            )
        if table.num_rows:
            writer.write_table(table.combine_chunks(), row_group_size=table.num_rows)

    def add(self, obs: IncidentObservations) -> dict[str, int]:
        counts = {}
        tables = {
            layout.LOGS: obs.logs,
            layout.EVENTS: obs.events,
            layout.METRICS: obs.metrics,
            layout.STATE: obs.state,
            layout.REQUESTS: obs.requests,
            **{name: obs.provenance_table(name) for name in _PROVENANCE},
        }
        for path, table in tables.items():
            counts[path] = table.num_rows
            if table.num_rows:
                # one chunk per column: the bytes written must not depend on how the rows
                # were read (staged by the audit, or parsed here when verdicts were reused)
                self.tables[path].write_table(table.combine_chunks(), row_group_size=table.num_rows)
        self._traces(obs.traces)
        return counts

    def close(self) -> None:
        for writer in self.tables.values():
            writer.close()


def _check_counts(record: BenchmarkRecord, counts: dict[str, int]) -> None:
    expected = {
        layout.LOGS: record.observations.log_records,
        layout.EVENTS: record.observations.event_records,
        layout.METRICS: record.observations.metric_samples,
    }
    found = {k: counts[k] for k in expected}
    if expected != found:
        raise DataError(
            f"{record.incident_id}: raw files changed since the audit ({found} rows, record "
            f"says {expected}); rerun `r2act audit`"
        )


def _write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _build_info(
    runs: _Runs,
    records: list[BenchmarkRecord],
    folds_seed: int,
    out: Path,
) -> BuildInfo:
    def distinct(values: list[str]) -> list[str]:
        return sorted(set(values)) or ["-"]

    dates = [r.metadata.collected_at for r in records]
    counts = Counter(v.group.value for v in runs.verdicts)
    campaigns = distinct([r.metadata.campaign for r in records])
    return BuildInfo(
        name=f"r2act recovery benchmark: {', '.join(campaigns)}",
        campaigns=campaigns,
        tool_version=__version__,
        target_kinds=distinct([r.metadata.target_kind for r in records]),
        systems=distinct([r.metadata.system for r in records]),
        mechanisms=sorted({r.labels.mechanism for r in records}),
        fault_types=len({r.labels.fault_type for r in records}),
        manifest_sha256=distinct([r.metadata.manifest_sha256 for r in records]),
        noise_levels=distinct(
            [r.metadata.noise.value if r.metadata.noise else "not recorded" for r in records]
        ),
        folds_seed=folds_seed,
        built_from=runs.name,
        date=max(dates)[:10] if dates else "1970-01-01",
        audit_counts={g.value: counts.get(g.value, 0) for g in Group},
        matplotlib=figures.matplotlib_version(),
        empty_tables=tuple(
            t for t in layout.present_tables(out) if pq.ParquetFile(out / t).metadata.num_rows == 0
        ),
        optional_tables=tuple(t for t in layout.OPTIONAL_TABLES if (out / t).is_file()),
    )


def build_dataset(
    run_dir: Path | Sequence[Path],
    out: Path | None = None,
    *,
    folds_seed: int = DEFAULT_SEED,
    workers: int | None = None,
    progress: Callable[[str], None] | None = None,
) -> BuildResult:
    """Build the dataset of ``run_dir`` (one run, or several pooled) into ``out``.

    ``out`` defaults to ``RUN/dataset`` for one run; several runs need it (DataError).
    """
    dirs = [run_dir] if isinstance(run_dir, Path) else list(run_dir)
    if len(set(d.resolve() for d in dirs)) != len(dirs):
        raise DataError(f"{dirs}: a run is named twice (name each run once)")
    if out is None and len(dirs) != 1:
        raise DataError(f"{len(dirs)} runs: say where the pooled dataset goes (--out DIR)")
    runs = _gather(dirs)
    if not runs.records:
        why = ", ".join(str(d / AUDIT_DIR / REPORT_MD) for d in dirs)
        raise DataError(
            f"{', '.join(map(str, dirs))}: the audit admitted no main incident; nothing to "
            f"publish (why: {why}; fix the campaign or cluster and collect again)"
        )
    out = out or dirs[0] / DATASET_DIR
    if out.exists() and not _replaceable(out):
        raise DataError(
            f"{out}: exists and is not an r2act dataset; refusing to replace it "
            "(choose another --out or remove it)"
        )
    tmp = out.with_name(f".{out.name}.building")
    previous = _unwind_on_stop()
    try:
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        _write_all(
            runs,
            tmp,
            folds_seed=folds_seed,
            workers=workers or default_workers(),
            progress=progress,
        )
        if out.exists():
            shutil.rmtree(out)
        os.replace(tmp, out)
    except OSError as exc:
        raise DataError(
            f"{out}: cannot write the dataset: {exc} (free space or fix permissions)"
        ) from exc
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    trail = sum(v.group != Group.MAIN for v in runs.verdicts)
    return BuildResult(out, compose(runs.records), trail)


def _unwind_on_stop() -> dict[int, Any]:
    """SIGTERM and SIGHUP unwind like Ctrl-C, so the scratch directory is removed on them too.

    (A SIGKILL leaves it; the next build removes it first.) Returns the handlers to restore.
    """
    if threading.current_thread() is not threading.main_thread():
        return {}

    def stop(signum: int, _frame: object) -> None:
        stopped = KeyboardInterrupt(f"stopped by {signal.Signals(signum).name}")
        stopped.signum = signum  # type: ignore[attr-defined] # the CLI exits 128+signum
        raise stopped

    return {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}


def _replaceable(out: Path) -> bool:
    """An empty directory, or an earlier dataset holding nothing but its own files.

    Every file must be listed in its SHA256SUMS: a directory that merely contains files
    named like a dataset's, next to a user's own, is never replaced (it would be deleted).
    """
    if not out.is_dir():
        return False
    if not any(out.iterdir()):
        return True
    records = (out / layout.INCIDENTS).is_file() or (out / "incidents.jsonl").is_file()
    if not ((out / layout.SHA256SUMS).is_file() and records):  # either layout
        return False
    try:
        listed = set(read_sums(out)) | {layout.SHA256SUMS}
    except (OSError, ValueError):
        return False
    present = {p.relative_to(out).as_posix() for p in out.rglob("*") if not p.is_dir()}
    return present <= listed


def _write_all(
    runs: _Runs,
    out: Path,
    *,
    folds_seed: int,
    workers: int,
    progress: Callable[[str], None] | None,
) -> None:
    salt, records = ids.assign(runs.records)
    composition = compose(records)
    entry = entry_point([r.metadata.system for r in records])
    drawn = figures.write_async(composition, out)  # beside the tables, in its own process
    try:
        _write_tables(runs, out, records, salt, folds_seed, workers, progress)
        write_schemas(out / layout.SCHEMA_DIR, entry, layout.present_tables(out))
    finally:
        drawn.exception()  # wait: nothing may still write into ``out`` once we return
    drawn.result()
    info = _build_info(runs, records, folds_seed, out)
    (out / layout.README).write_text(render_card(info, composition), encoding="utf-8")
    sums = {name: sha256_file(out / name) for name in layout.present_tables(out)}
    from r2act.datasets.croissant import render_croissant  # mlcroissant: seconds to import

    croissant = render_croissant(
        name=info.name,
        description=_description(composition.incidents, info.systems),
        version=__version__,
        date=info.date,
        sha256=sums,
        entry=entry,
    )
    _write_json(out / layout.CROISSANT, croissant)
    write_sums(out)


def _description(incidents: int, systems: list[str]) -> str:
    """The Croissant description: it names the systems when there are several (one-system
    datasets keep the sentence they always had)."""
    text = f"{incidents} quality-audited Kubernetes recovery incidents"
    if len(systems) <= 1:
        return f"{text}."
    titles = [INSTALLED[s].title if s in INSTALLED else s for s in systems]
    return f"{text} on {len(systems)} systems ({', '.join(titles)}), scored per system."


def _write_tables(  # noqa: PLR0917
    runs: _Runs,
    out: Path,
    records: list[BenchmarkRecord],
    salt: str,
    folds_seed: int,
    workers: int,
    progress: Callable[[str], None] | None,
) -> None:
    writers = _Writers(out)
    try:
        dirs = [
            (
                run / RAW_DIR / r.incident_id,
                str(r.case_id),
                run / AUDIT_DIR / STAGED_LOGS_DIR / f"{r.incident_id}.parquet",
            )
            for r in records
            for run in (runs.run_of[r.incident_id],)
        ]
        for record, obs in zip(records, _observations(dirs, workers), strict=True):
            _check_counts(record, writers.add(obs))
            if progress is not None:
                progress(record.incident_id)
    finally:
        writers.close()
    folds: Folds = make_folds(records, seed=folds_seed)
    _write_json(out / layout.FOLDS, folds.model_dump(mode="json"))
    write_table(out / layout.CASES, tables.cases_table(records, folds))
    write_table(out / layout.INCIDENTS, tables.incidents_table(records))
    write_table(out / layout.AUDIT_TRAIL, tables.trail_table(runs.verdicts))
    _write_json(out / layout.KEY, ids.key_document(salt))
