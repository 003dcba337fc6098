"""Bench: audit + dataset build of a paper-scale run versus merely parsing its raw files.

Usage::

    r2act collect campaigns/r2act-302.yaml          # makes r2act-runs/r2act-302/
    python bench/build.py [RUN_DIR] [--workers N]

Each measured stage runs in a fresh child process, so its peak RSS is its own (plus its
workers'). The reference is the time to decompress and parse every raw file once and do
nothing else, measured two ways: the plain stdlib way (gzip + ``json.loads`` per line) and
the fastest parser available here (pyarrow's C++ JSON reader); the ratio is printed
against both. Targets (DESIGN section 11): audit + build <= 60 s, peak RSS <= 1.5 GiB,
and <= 3x the parse-only time. The dataset goes to a temporary directory.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

LIMIT_S = 60.0
LIMIT_RSS = 1.5 * 2**30
LIMIT_RATIO = 3.0


def _gzip_json_rows(path: Path) -> int:
    rows = 0
    with gzip.open(path, "rb") as handle:
        for line in handle:
            json.loads(line)
            rows += 1
    return rows


def _arrow_rows(path: Path) -> int:
    from r2act.quality_gate.rawstore import read_logs

    return int(read_logs(path).num_rows)


def _parse(run: Path, log_rows: Callable[[Path], int]) -> int:
    """Read every raw file of the run; logs through ``log_rows``, which returns their count."""
    import pyarrow.parquet as pq

    rows = 0
    for incident in sorted((run / "raw").iterdir()):
        if incident.name.startswith("."):
            continue
        json.loads((incident / "incident.json").read_bytes())
        for phase in ("pre", "during", "post"):
            root = incident / phase
            if not root.is_dir():
                continue
            rows += log_rows(root / "logs.jsonl.gz")
            for line in (root / "events.jsonl").read_bytes().splitlines():
                json.loads(line)
            pq.read_table(root / "metrics.parquet")
            json.loads((root / "state.json").read_bytes())
            json.loads((root / "chaos_status.json").read_bytes())
    return rows


def _stage(name: str, run: Path, out: Path, workers: int | None) -> dict[str, float]:
    """Run one stage in this process and report its time and peak RSS."""
    start = time.perf_counter()
    detail: dict[str, float] = {}
    if name == "parse_stdlib":
        detail["rows"] = _parse(run, _gzip_json_rows)
    elif name == "parse_arrow":
        detail["rows"] = _parse(run, _arrow_rows)
    elif name == "audit_build":
        from r2act.datasets import build_dataset
        from r2act.quality_gate import Group, run_audit

        audit = run_audit(run, workers=workers)
        detail["audit_s"] = time.perf_counter() - start
        detail["main"] = audit.count(Group.MAIN)
        result = build_dataset(run, out, workers=workers)
        detail["build_s"] = time.perf_counter() - start - detail["audit_s"]
        detail["log_records"] = result.composition.log_records.total
    seconds = time.perf_counter() - start
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime
    return {
        "seconds": seconds,
        "cpu": cpu,
        "rss_self": me.ru_maxrss * 1024,
        "rss_children": kids.ru_maxrss * 1024,
        **detail,
    }


def _measure(name: str, run: Path, out: Path, workers: int | None) -> dict[str, float]:
    command = [sys.executable, __file__, str(run), "--stage", name, "--out", str(out)]
    if workers:
        command += ["--workers", str(workers)]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def _newest_run() -> Path:
    runs = [p for p in Path("r2act-runs").glob("*/raw") if p.is_dir()]
    if not runs:
        sys.exit("no run found: pass RUN_DIR or run `r2act collect campaigns/r2act-302.yaml`")
    return max(runs, key=lambda p: p.stat().st_mtime).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", nargs="?", type=Path)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--stage", default=None)
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    run = args.run or _newest_run()
    if args.stage:
        print(json.dumps(_stage(args.stage, run, args.out, args.workers)))
        return
    with tempfile.TemporaryDirectory(prefix="r2act-bench-") as tmp:
        out = Path(tmp) / "dataset"
        _measure("parse_arrow", run, out, args.workers)  # warm the page cache
        stdlib = _measure("parse_stdlib", run, out, args.workers)
        arrow = _measure("parse_arrow", run, out, args.workers)
        ours = _measure("audit_build", run, out, args.workers)
    from r2act.quality_gate.audit import default_workers

    workers = args.workers or default_workers()
    peak = ours["rss_self"] + workers * ours["rss_children"]  # upper bound: all at their peak
    print(f"run: {run}  ({int(arrow['rows']):,} log records, {int(ours['main'])} main incidents)")
    print(f"load average now             : {os.getloadavg()[0]:7.2f}  (2 cores; shared box?)")
    print(f"parse only, stdlib gzip+json : {stdlib['seconds']:7.1f} s  cpu {stdlib['cpu']:.1f} s")
    print(f"parse only, pyarrow          : {arrow['seconds']:7.1f} s  cpu {arrow['cpu']:.1f} s")
    print(f"audit                        : {ours['audit_s']:7.1f} s")
    print(f"dataset build                : {ours['build_s']:7.1f} s")
    print(
        f"audit + build                : {ours['seconds']:7.1f} s  cpu {ours['cpu']:.1f} s "
        f"(limit {LIMIT_S:.0f} s wall)"
    )
    print(
        f"peak RSS parent + workers    : {peak / 2**30:7.2f} GiB (limit 1.5 GiB; parent "
        f"{ours['rss_self'] / 2**20:.0f} MiB + {workers} x worker "
        f"{ours['rss_children'] / 2**20:.0f} MiB)"
    )
    ratio_stdlib = ours["seconds"] / stdlib["seconds"]
    ratio_arrow = ours["seconds"] / arrow["seconds"]
    print(f"ratio vs stdlib parse        : {ratio_stdlib:7.2f}x  (limit {LIMIT_RATIO:.0f}x)")
    print(f"ratio vs pyarrow parse       : {ratio_arrow:7.2f}x  (stricter reference)")
    ok = ours["seconds"] <= LIMIT_S and peak <= LIMIT_RSS and ratio_stdlib <= LIMIT_RATIO
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
