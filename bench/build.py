"""Bench: audit + dataset build of a paper-scale run versus merely parsing its raw files.

Usage::

    r2act collect campaigns/r2act-302.yaml          # makes r2act-runs/r2act-302/
    python bench/build.py [RUN_DIR] [--workers N]

Each stage runs in a fresh child process of its own; its CPU is that of its whole process
tree (``cputree``: the audit's forkserver workers and the build's threads included), so
neither the machine's other load nor the OS's accounting of waited-for children distorts it.

The floor is the CPU time of decompressing and parsing every raw file once and doing
nothing else, with the fastest parser available here (pyarrow's C++ JSON reader, the one the
gate uses). The plain stdlib way (``gzip``/``zstandard`` + ``json.loads`` per line) is
printed too. Pass/fail (DESIGN section 11, issue 26 item 3): audit + build CPU at most 3x the
floor's CPU, peak RSS at most 1.5 GiB. Wall time is printed, never judged.

Two audits are measured: ``audit (fresh)`` judges every incident from its files (the
collector's stored verdicts removed), ``audit`` reuses what the collector stored, as a
normal ``r2act audit`` after ``r2act collect`` does. The ratio is judged on the latter;
both are printed. The dataset goes to a temporary directory; the run's own ``audit/`` is
left as the last audit wrote it.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from cputree import StageRun, run_stage, stage_cpu  # bench/cputree.py

LIMIT_RSS = 1.5 * 2**30
LIMIT_RATIO = 3.0


def _stdlib_rows(path: Path) -> int:
    rows = 0
    if path.suffix == ".zst":
        import io

        import zstandard

        with path.open("rb") as raw, zstandard.ZstdDecompressor().stream_reader(raw) as z:
            for line in io.BufferedReader(z):  # type: ignore[arg-type]
                json.loads(line)
                rows += 1
        return rows
    import gzip

    with gzip.open(path, "rb") as handle:
        for line in handle:
            json.loads(line)
            rows += 1
    return rows


def _arrow_rows(path: Path) -> int:
    from r2act.quality_gate.rawstore import read_logs

    return int(read_logs(path).num_rows)


def _log_file(phase_dir: Path) -> Path:
    for name in ("logs.jsonl.zst", "logs.jsonl.gz"):
        if (phase_dir / name).is_file():
            return phase_dir / name
    raise FileNotFoundError(phase_dir / "logs.jsonl.*")


def _parse(run: Path, log_rows: Callable[[Path], int]) -> int:
    """Read every raw file of the run; logs through ``log_rows``, which returns their count."""
    import pyarrow.parquet as pq

    rows = 0
    for incident in sorted((run / "raw").iterdir()):
        if incident.name.startswith(".") or not (incident / "COMPLETE").is_file():
            continue
        json.loads((incident / "incident.json").read_bytes())
        for phase in ("pre", "during", "post"):
            root = incident / phase
            if not root.is_dir():
                continue
            rows += log_rows(_log_file(root))
            for line in (root / "events.jsonl").read_bytes().splitlines():
                json.loads(line)
            pq.read_table(root / "metrics.parquet")
            json.loads((root / "state.json").read_bytes())
            json.loads((root / "chaos_status.json").read_bytes())
    return rows


def _stage(name: str, run: Path, out: Path, workers: int | None) -> dict[str, float]:
    """Run one stage in this process; report its figures and its own CPU."""
    start = time.perf_counter()
    detail: dict[str, float] = {}
    if name == "parse_stdlib":
        detail["rows"] = _parse(run, _stdlib_rows)
    elif name == "parse_arrow":
        detail["rows"] = _parse(run, _arrow_rows)
    elif name in ("audit", "audit_fresh"):
        from r2act.quality_gate import Group, run_audit

        audit = run_audit(run, workers=workers)
        detail["main"] = audit.count(Group.MAIN)
        detail["reused"] = getattr(audit, "reused", 0)
    elif name == "build":
        from r2act.datasets import build_dataset

        result = build_dataset(run, out, workers=workers)
        detail["log_records"] = result.composition.log_records.total
        detail["heavy_modules"] = sum(m in sys.modules for m in ("matplotlib", "mlcroissant"))
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "seconds": time.perf_counter() - start,
        "rss_self": me.ru_maxrss * 1024,
        "rss_children": kids.ru_maxrss * 1024,
        **detail,
        **stage_cpu(),
    }


def _measure(
    name: str, run: Path, out: Path, workers: int | None
) -> tuple[StageRun, dict[str, float]]:
    command = [sys.executable, __file__, str(run), "--stage", name, "--out", str(out)]
    if workers:
        command += ["--workers", str(workers)]
    done = run_stage(command)
    return done, json.loads(done.stdout.strip().splitlines()[-1])


_PARQUET_VARIANTS = {
    "built (zstd, dictionary + statistics on all but free text)": {},
    "no statistics": {"write_statistics": False},
    "statistics on the keys only": {"write_statistics": ["case_id", "phase"]},
    "dictionary on every column": {"use_dictionary": True},
    "no dictionary": {"use_dictionary": False},
    "zstd level 3": {"compression_level": 3},
    "lz4": {"compression": "lz4"},
    "snappy": {"compression": "snappy"},
}


def parquet_settings(dataset: Path, groups: int) -> None:
    """Rewrite the first ``groups`` row groups (incidents) of the dataset's logs table with
    each variant of the writer's settings: write CPU, size and read CPU."""
    import pyarrow.parquet as pq

    from r2act.datasets.build import _writer
    from r2act.datasets.layout import LOGS

    source = pq.ParquetFile(dataset / LOGS)
    tables = [source.read_row_group(i) for i in range(min(groups, source.num_row_groups))]
    rows = sum(t.num_rows for t in tables)
    print(f"logs.parquet, {len(tables)} row groups (one per incident), {rows:,} rows")
    with tempfile.TemporaryDirectory(prefix="r2act-parquet-") as tmp:
        path = Path(tmp) / "logs.parquet"
        for name, change in _PARQUET_VARIANTS.items():
            start = time.process_time()
            writer = _writer(path, tables[0].schema, **change)
            for table in tables:
                writer.write_table(table, row_group_size=table.num_rows)
            writer.close()
            write = time.process_time() - start
            start = time.process_time()
            pq.read_table(path)
            read = time.process_time() - start
            size = path.stat().st_size / 2**20
            print(f"  {name:58s} write {write:5.2f} s  {size:6.1f} MiB  read {read:5.2f} s")


def _newest_run() -> Path:
    runs = [p for p in Path("r2act-runs").glob("*/raw") if p.is_dir()]
    if not runs:
        sys.exit("no run found: pass RUN_DIR or run `r2act collect campaigns/r2act-302.yaml`")
    return max(runs, key=lambda p: p.stat().st_mtime).parent


def _hide_stored_verdicts(run: Path, aside: Path) -> list[tuple[Path, Path]]:
    """Move the collector's stored verdicts out of the run (for the fresh audit)."""
    moved = []
    for path in sorted((run / "raw").glob("*/judged.json")):
        target = aside / path.parent.name
        shutil.move(path, target)
        moved.append((target, path))
    return moved


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", type=Path)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--stage", default=None)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--no-fresh", action="store_true", help="skip the fresh audit")
    parser.add_argument("--quick", action="store_true", help="no warm-up and no stdlib parse")
    parser.add_argument("--parquet", type=Path, help="measure Parquet settings on DATASET")
    args = parser.parse_args()
    if args.parquet:
        parquet_settings(args.parquet, 40)
        return
    run = args.run or _newest_run()
    if not (run / "raw").is_dir():
        print(
            f"{run}: not a run directory (no raw/ in it); pass one `r2act collect` made",
            file=sys.stderr,
        )
        sys.exit(2)
    if args.stage:
        print(json.dumps(_stage(args.stage, run, args.out, args.workers)))
        return
    with tempfile.TemporaryDirectory(prefix="r2act-bench-") as tmp:
        out = Path(tmp) / "dataset"
        stdlib = None
        if not args.quick:
            _measure("parse_arrow", run, out, args.workers)  # warm the page cache
            stdlib, _ = _measure("parse_stdlib", run, out, args.workers)
        arrow, parsed = _measure("parse_arrow", run, out, args.workers)
        fresh = None
        if not args.no_fresh:
            aside = Path(tmp) / "stored"
            aside.mkdir()
            moved = _hide_stored_verdicts(run, aside)
            try:
                fresh, _ = _measure("audit_fresh", run, out, args.workers)
            finally:
                for src, dst in moved:
                    shutil.move(src, dst)
        audit, audited = _measure("audit", run, out, args.workers)
        build, built = _measure("build", run, out, args.workers)
    from r2act.quality_gate.audit import default_workers

    workers = args.workers or default_workers()
    rss = max(
        audited["rss_self"] + workers * audited["rss_children"],
        built["rss_self"] + workers * built["rss_children"],
    )
    floor = arrow.cpu_s
    ours = audit.cpu_s + build.cpu_s
    print(f"run: {run}  ({int(parsed['rows']):,} log records, {int(audited['main'])} main)")
    print(f"load average now             : {os.getloadavg()[0]:7.2f} on {os.cpu_count()} cores")
    if stdlib is not None:
        print(f"parse only, stdlib           : cpu {stdlib.cpu_s:7.1f} s")
    print(f"FLOOR parse only, pyarrow    : cpu {floor:7.1f} s  (decompress + parse every file)")
    if fresh is not None:
        print(
            f"audit (fresh, from files)    : cpu {fresh.cpu_s:7.1f} s  "
            f"({fresh.descendants} worker processes: {fresh.descendants_cpu_s:.1f} s; the OS "
            f"accounts {fresh.waited_cpu_s:.1f} s to waited-for children)"
        )
    print(
        f"audit (reusing verdicts)     : cpu {audit.cpu_s:7.1f} s  "
        f"({int(audited['reused'])} verdicts reused)"
    )
    print(
        f"dataset build                : cpu {build.cpu_s:7.1f} s  "
        f"(heavy modules imported: {int(built['heavy_modules'])})"
    )
    print(
        f"audit + build                : cpu {ours:7.1f} s  "
        f"(wall {audited['seconds'] + built['seconds']:.1f} s, not judged)"
    )
    print(f"peak RSS parent + workers    : {rss / 2**30:7.2f} GiB (limit 1.5 GiB, upper bound)")
    ratio = ours / floor
    print(f"ratio vs pyarrow parse floor : {ratio:7.2f}x  (limit {LIMIT_RATIO:.0f}x)")
    if stdlib is not None:
        print(f"ratio vs stdlib parse        : {ours / stdlib.cpu_s:7.2f}x")
    if fresh is not None:
        print(f"fresh audit + build vs floor : {(fresh.cpu_s + build.cpu_s) / floor:7.2f}x")
    ok = ratio <= LIMIT_RATIO and rss <= LIMIT_RSS
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
