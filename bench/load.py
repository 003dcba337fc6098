"""Bench: memory and CPU time of ``r2act.datasets.load(DIR, view)`` on a built dataset.

Usage::

    r2act collect campaigns/r2act-302.yaml && r2act audit && r2act dataset build
    python bench/load.py [DATASET_DIR] [--view full]

Each measurement runs in a fresh child process, so its peak RSS is the load's own (plus
the interpreter and libraries, reported separately as the baseline of a child that only
imports r2act). Also reported: what pandas says the DataFrames hold
(``memory_usage(deep=True)``) and the same load done the plain way (every column as
Python objects), the reference the categorical/Arrow-string reading is measured against.
Target (issue 15 item 6, issue 26 item 6): the paper-scale ``full`` view in at most 4 GiB
of peak RSS, judged on RSS and never on wall time. The floor printed beside the peak is
what the result must hold anyway: its DataFrames' own memory plus the idle interpreter.
CPU is that of the loading process (``load`` starts no other); the plain pandas load is the
reference it is compared against.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

LIMIT_RSS = 4 * 2**30


if TYPE_CHECKING:
    import pandas as pd


def _frames(dataset: object) -> dict[str, pd.DataFrame]:
    names = ("cases", "logs", "events", "metrics", "state", "requests")
    return {n: getattr(dataset, n) for n in names if getattr(dataset, n, None) is not None}


def _plain(root: Path, view: str) -> dict[str, pd.DataFrame]:
    """The reference: every table of the view read with pandas defaults."""
    import pandas as pd

    from r2act.datasets import layout

    return {Path(p).stem: pd.read_parquet(root / p) for p in layout.VIEWS[view]}


def _stage(name: str, root: Path, view: str) -> dict[str, float]:
    import r2act.datasets

    start = time.perf_counter()
    cpu0 = time.process_time()
    frames: dict[str, pd.DataFrame] = {}
    if name == "ours":
        frames = _frames(r2act.datasets.load(root, view=view))
    elif name == "plain":
        frames = _plain(root, view)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu0
    deep = sum(int(f.memory_usage(deep=True).sum()) for f in frames.values())
    rows = sum(len(f) for f in frames.values())
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"seconds": seconds, "cpu": cpu, "rss": rss, "deep": deep, "rows": rows}


def _measure(name: str, root: Path, view: str) -> dict[str, float]:
    command = [sys.executable, __file__, str(root), "--view", view, "--stage", name]
    done = subprocess.run(command, check=True, capture_output=True, text=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dataset", nargs="?", type=Path, default=None)
    parser.add_argument("--view", default="full")
    parser.add_argument("--stage", default=None)
    parser.add_argument("--no-reference", action="store_true", help="Skip the plain load.")
    args = parser.parse_args()
    root = args.dataset
    if root is None:
        found = sorted(Path("r2act-runs").glob("*/dataset"), key=lambda p: p.stat().st_mtime)
        if not found:
            sys.exit("no dataset found: pass DATASET_DIR or run `r2act dataset build`")
        root = found[-1]
    if args.stage:
        print(json.dumps(_stage(args.stage, root, args.view)))
        return
    _measure("ours", root, args.view)  # warm the page cache
    idle = _measure("idle", root, args.view)
    ours = _measure("ours", root, args.view)
    gib = 2**30
    print(f"dataset: {root}  view {args.view}: {int(ours['rows']):,} rows")
    print(f"interpreter + imports peak RSS : {idle['rss'] / gib:6.2f} GiB")
    print(
        f"r2act.datasets.load            : peak RSS {ours['rss'] / gib:6.2f} GiB, "
        f"DataFrames {ours['deep'] / gib:.2f} GiB, cpu {ours['cpu']:.1f} s, "
        f"wall {ours['seconds']:.1f} s (limit {LIMIT_RSS / gib:.0f} GiB peak)"
    )
    print(
        f"floor: the DataFrames themselves plus the interpreter, "
        f"{(ours['deep'] + idle['rss']) / gib:.2f} GiB; peak is "
        f"{ours['rss'] / (ours['deep'] + idle['rss']):.2f}x that floor"
    )
    if not args.no_reference:
        plain = _measure("plain", root, args.view)
        print(
            f"pandas.read_parquet, defaults  : peak RSS {plain['rss'] / gib:6.2f} GiB, "
            f"DataFrames {plain['deep'] / gib:.2f} GiB, cpu {plain['cpu']:.1f} s "
            f"(ratio of peaks {plain['rss'] / ours['rss']:.2f}x)"
        )
    ok = ours["rss"] <= LIMIT_RSS
    print("PASS" if ok else "FAIL")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
