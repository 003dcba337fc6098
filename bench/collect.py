"""Bench: collect campaigns/r2act-302.yaml on the simulated cluster, against its floor.

The floor (issue 26 item 2) is the CPU time of merely compressing and writing the same log
bytes with the same codec and level the run used (zstd level 1 now; gzip level 1 for a run
collected before): every log file of the collected run is decompressed (not timed) and
compressed and written again (timed). Collection runs in a child process; its CPU is that
of its whole process tree (``cputree``). Pass/fail, never on wall time: collect CPU at most
5x the floor, peak RSS at most 1.5 GiB. Also printed: CPU per incident (flat in campaign
size: compare ``--limit 60`` with the whole campaign), the CPU spent inside cluster reads
(the simulated cluster generating telemetry) and the collector's own CPU outside them, the
CPU spent judging incidents (stored with each incident, reused by the audit), the spares
taken and skipped.

``--codecs`` measures the raw-store codec on the collected logs: gzip (zlib) against zstd
(the ``zstandard`` package) for write (compress + write) and read (decompress + pyarrow's
JSON parse), in CPU seconds and bytes. ``--floor RUN`` prints only the floor of an existing
run (for a run collected by another version, with its CPU given by ``--cpu``).

With ``--lanes 1 2 4 8`` it collects the campaign once per lane count (issue 16) and reports,
per count: CPU time of the whole process tree, the virtual wall-clock (the busiest lane's
cluster time: what a real run would take), and whether the raw store equals the first
count's (same complete incidents, byte-identical observation files). Pass/fail is decided on
ratios of one run: the virtual wall-clock of N lanes within 15% of the busiest lane's share
(ceil(incidents / N) over incidents), identical data, and the CPU time of two lanes at most
1.25x one lane's, so that on two idle cores two lanes take about CPU / 2.

``--all-spares`` collects every spare, as before the stop-when-full rule.

``--traces RATE`` collects the campaign with a ``traces: {sample: RATE}`` section (issue 24)
whatever its own says (``--traces 0`` removes it), and prints the spans written and their
bytes: run it with and without to read the collection CPU traces add (target: under 25%).

    .venv/bin/python bench/collect.py [--limit N] [--profile] [--keep DIR] [--codecs]
                                      [--lanes 1 2 4 8] [--all-spares] [--floor RUN]
                                      [--traces RATE]
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import json
import os
import pstats
import resource
import sys
import tempfile
import time
import zlib
from dataclasses import replace
from pathlib import Path

import yaml
import zstandard
from cputree import TreeSampler, run_stage, self_cpu_s, stage_cpu  # bench/cputree.py

REPO = Path(__file__).resolve().parent.parent
LIMIT_RATIO = 5.0
BUDGET_RSS_GIB = 1.5
LANE_CPU_RATIO = 1.25
LANE_CLOCK_TOLERANCE = 0.15
PROVENANCE = {"incident.json", "journal.jsonl", "COMPLETE", "judged.json"}
LEVEL = 1
"""The level the collector uses for either codec (``CollectSettings.log_level``)."""


def _log_files(run: Path) -> list[Path]:
    raw = run / "raw"
    return sorted(p for p in raw.glob("*/*/logs.jsonl.*") if p.suffix in {".zst", ".gz"})


def _decompress(path: Path) -> bytes:
    data = path.read_bytes()
    if path.suffix == ".gz":
        return zlib.decompress(data, 31)
    return zstandard.ZstdDecompressor().decompressobj().decompress(data)


def _compress(codec: str, level: int, data: bytes) -> bytes:
    if codec == "gzip":
        stream = zlib.compressobj(level, zlib.DEFLATED, 31)
        return stream.compress(data) + stream.flush()
    return zstandard.ZstdCompressor(level=level, write_checksum=True).compress(data)


def floor(run: Path) -> dict[str, float]:
    """CPU seconds to compress and write every log file of ``run`` again, same codec."""
    cpu = 0.0
    raw_bytes = packed = 0
    files = _log_files(run)
    with tempfile.TemporaryDirectory(prefix="r2act-floor-", dir=run) as tmp:
        target = Path(tmp) / "logs"
        for path in files:
            data = _decompress(path)
            codec = "gzip" if path.suffix == ".gz" else "zstd"
            start = time.process_time()
            with open(target, "wb") as handle:
                handle.write(_compress(codec, LEVEL, data))
            cpu += time.process_time() - start
            raw_bytes += len(data)
            packed += path.stat().st_size
    codecs = sorted({"gzip" if p.suffix == ".gz" else "zstd" for p in files})
    return {"cpu": cpu, "bytes": raw_bytes, "packed": packed, "codec": ",".join(codecs)}


def codecs(run: Path) -> None:
    """Compare the codecs on the run's log bytes: write and read CPU, size."""
    import pyarrow.json as pa_json

    datas = [_decompress(p) for p in _log_files(run)]
    total = sum(map(len, datas))
    options = pa_json.ReadOptions(use_threads=False, block_size=1 << 20)
    print(f"codecs on {len(datas)} log files, {total / 2**20:,.0f} MiB of JSON lines")
    print("codec      level  write CPU s  MiB/s  size MiB  ratio  read CPU s (decompress+parse)")
    with tempfile.TemporaryDirectory(prefix="r2act-codecs-") as tmp:
        for codec, level in (("gzip", 1), ("gzip", 6), ("zstd", 1), ("zstd", 3)):
            path = Path(tmp) / ("logs.jsonl.gz" if codec == "gzip" else "logs.jsonl.zst")
            write = read = 0.0
            size = 0
            for data in datas:
                start = time.process_time()
                with open(path, "wb") as handle:
                    handle.write(_compress(codec, level, data))
                write += time.process_time() - start
                size += path.stat().st_size
                start = time.process_time()
                pa_json.read_json(path, read_options=options)
                read += time.process_time() - start
            print(
                f"{codec:9s}  {level:5d}  {write:11.2f}  {total / write / 2**20:5.0f}"
                f"  {size / 2**20:8.1f}  {size / total:5.3f}  {read:10.2f}"
            )


def _collect_stage(args: argparse.Namespace) -> None:
    """In the child: collect into ``args.keep``, print the summary as JSON."""
    from r2act.collector import collect, plan_collection

    plan = plan_collection(args.campaign)
    if args.limit:
        plan = plan_collection(args.campaign, [i.incident.id for i in plan.items[: args.limit]])
        plan = replace(plan, stop_full_cells=False, judge=False)
    if args.all_spares:
        plan = replace(plan, stop_full_cells=False, judge=False)
    profiler = cProfile.Profile() if args.profile else None
    if profiler:
        profiler.enable()
    start = time.perf_counter()
    summary = collect(plan, args.keep)
    wall = time.perf_counter() - start
    if profiler:
        profiler.disable()
        pstats.Stats(profiler, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    spares = summary.spares
    judged = [r for r in summary.results if r.clean is not None]
    print(
        json.dumps(
            {
                "campaign": plan.manifest.name,
                "incidents": len(summary.results),
                "completed": summary.completed,
                "failed": summary.failed,
                "log_records": summary.log_records,
                "generation_cpu_s": summary.generation_cpu_s,
                "judge_cpu_s": summary.judge_cpu_s,
                "judged": len(judged),
                "rejected": sum(not r.clean for r in judged),
                "spares": None
                if spares is None
                else [spares.taken, spares.planned, spares.not_needed, len(spares.short)],
                "wall_s": wall,
                "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
                **stage_cpu(),
            }
        )
    )


def main() -> int:
    """Run the bench; exit 1 when over budget."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--campaign", type=Path, default=REPO / "campaigns" / "r2act-302.yaml")
    parser.add_argument("--limit", type=int, default=0, help="collect only the first N incidents")
    parser.add_argument("--profile", action="store_true", help="print the top cProfile entries")
    parser.add_argument("--keep", type=Path, help="collect into this directory and keep it")
    parser.add_argument("--lanes", type=int, nargs="+", help="lane counts to compare (1 2 4 8)")
    parser.add_argument("--codecs", action="store_true", help="compare gzip and zstd too")
    parser.add_argument("--floor", type=Path, help="only the floor of this existing run")
    parser.add_argument("--cpu", type=float, help="with --floor: that run's collect CPU (s)")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    parser.add_argument(
        "--all-spares", action="store_true", help="collect every spare, even of full cells"
    )
    parser.add_argument(
        "--traces", type=float, help="collect with traces at this sample rate (0: without)"
    )
    args = parser.parse_args()
    if args.stage == "collect":
        _collect_stage(args)
        return 0
    if args.floor:
        return _floor_only(args.floor, args.cpu)
    if args.lanes:
        return _lanes(args.campaign, args.lanes, args.limit, args.keep)
    with tempfile.TemporaryDirectory(prefix="r2act-bench-") as tmp:
        run = args.keep or Path(tmp) / "run"
        if args.traces is not None:
            args.campaign = _with_traces(args.campaign, args.traces, Path(tmp))
        command = [sys.executable, __file__, "--stage", "collect", "--keep", str(run)]
        command += ["--campaign", str(args.campaign)]
        command += ["--limit", str(args.limit)] if args.limit else []
        command += ["--profile"] if args.profile else []
        command += ["--all-spares"] if args.all_spares else []
        load = os.getloadavg()[0]
        stage = run_stage(command)
        done = json.loads(stage.stdout.strip().splitlines()[-1])
        size = sum(p.stat().st_size for p in run.rglob("*") if p.is_file())
        spans = _spans(run)
        base = floor(run)
        if args.codecs:
            codecs(run)
    cpu, n = stage.cpu_s, max(int(done["incidents"]), 1)
    generation = float(done["generation_cpu_s"])
    peak_gib = float(done["rss"]) / 2**30
    print(f"campaign            {done['campaign']} ({n} incidents collected)")
    print(f"completed / failed  {done['completed']} / {done['failed']}")
    print(f"log records         {int(done['log_records']):,}")
    print(f"raw store size      {size / 2**20:,.0f} MiB")
    if spans is not None:
        count, packed = spans
        print(
            f"traces              {count:,} spans kept, {packed / 2**20:,.1f} MiB "
            f"({packed / n / 2**10:,.0f} KiB per incident)"
        )
    print(
        f"FLOOR               {base['cpu']:.2f} s CPU: {base['codec']} level {LEVEL} compress + "
        f"write of the same {base['bytes'] / 2**30:.2f} GiB of log lines"
    )
    print(
        f"collect CPU         {cpu:.1f} s (process tree: {stage.own_cpu_s:.1f} s collector, "
        f"{stage.descendants_cpu_s:.1f} s in {stage.descendants} child processes)"
    )
    print(f"CPU per incident    {cpu / n:.3f} s")
    print(f"inside cluster reads {generation:.1f} s CPU (the simulated cluster generating data)")
    print(
        f"outside them        {cpu - generation:.1f} s CPU (encoding, compression, Parquet, "
        f"judging, journals): {(cpu - generation) / base['cpu']:.2f}x the floor"
    )
    if done["judged"]:
        print(
            f"judging CPU         {done['judge_cpu_s']:.1f} s ({done['judge_cpu_s'] / cpu:.1%}); "
            f"gate rejected {done['rejected']} of {done['judged']} (verdicts kept for the audit)"
        )
    if done["spares"] is not None:
        taken, planned, skipped, short = done["spares"]
        print(
            f"spares              {taken} of {planned} collected, {skipped} skipped, {short} short"
        )
    print(f"wall time           {done['wall_s']:.1f} s (load average {load:.1f}; not judged)")
    print(f"peak RSS            {peak_gib:.2f} GiB (limit {BUDGET_RSS_GIB} GiB)")
    ratio = cpu / base["cpu"]
    print(f"ratio collect/floor {ratio:.2f}x (limit {LIMIT_RATIO:.0f}x)")
    ok = ratio <= LIMIT_RATIO and peak_gib <= BUDGET_RSS_GIB
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _with_traces(campaign: Path, rate: float, directory: Path) -> Path:
    """A copy of ``campaign`` in ``directory`` whose ``traces`` section samples at ``rate``
    (none at 0)."""
    document = yaml.safe_load(campaign.read_text())
    document.pop("traces", None)
    if rate > 0:
        document["traces"] = {"sample": rate}
    copy = directory / campaign.name
    copy.write_text(yaml.safe_dump(document, sort_keys=False))
    return copy


def _spans(run: Path) -> tuple[int, int] | None:
    """(spans, compressed bytes) of the run's trace files; None when it wrote none."""
    files = sorted((run / "raw").glob("*/*/traces.jsonl.zst"))
    if not files:
        return None
    count = sum(_decompress(p).count(b"\n") for p in files)
    return count, sum(p.stat().st_size for p in files)


def _floor_only(run: Path, cpu: float | None) -> int:
    base = floor(run)
    print(
        f"FLOOR {base['cpu']:.2f} s CPU: {base['codec']} level {LEVEL} compress + write of "
        f"{base['bytes'] / 2**30:.2f} GiB of log lines ({base['packed'] / 2**20:.0f} MiB packed)"
    )
    if cpu is not None:
        print(f"ratio {cpu:.1f} s / floor = {cpu / base['cpu']:.2f}x")
    return 0


def _digest(run_dir: Path) -> dict[str, str]:
    """Per complete incident: SHA-256 over its observation files (not incident.json/journal)."""
    from r2act.collector import layout

    out = {}
    for incident in sorted(layout.raw_dir(run_dir).iterdir()):
        if not layout.is_complete(incident):
            continue
        digest = hashlib.sha256()
        for path in sorted(incident.rglob("*")):
            if path.is_file() and path.name not in PROVENANCE:
                digest.update(path.relative_to(incident).as_posix().encode() + b"\0")
                digest.update(path.read_bytes())
        out[incident.name] = digest.hexdigest()
    return out


def _lanes(campaign: Path, counts: list[int], limit: int, keep: Path | None) -> int:
    from r2act.campaigns.estimate import format_duration
    from r2act.collector import plan_collection
    from r2act.collector.lanes import collect_lanes

    data = yaml.safe_load(campaign.read_text())
    rows = []
    ok = True
    with tempfile.TemporaryDirectory(prefix="r2act-bench-lanes-") as tmp:
        root = keep or Path(tmp)
        reference: dict[str, str] | None = None
        for count in counts:
            data["target"]["lanes"] = count
            manifest = root / f"lanes-{count}.yaml"
            manifest.write_text(yaml.safe_dump(data, sort_keys=False))
            plan = plan_collection(manifest)
            if limit:
                plan = plan_collection(manifest, [i.incident.id for i in plan.items[:limit]])
            run = root / f"run-{count}"
            load = os.getloadavg()[0]
            sampler = TreeSampler(os.getpid())
            cpu0, wall0 = self_cpu_s(), time.perf_counter()
            done = collect_lanes(plan, run)
            wall = time.perf_counter() - wall0
            cpu = self_cpu_s() - cpu0 + sampler.stop().seconds
            digest = _digest(run)
            reference = reference if reference is not None else digest
            # the busiest lane's share, round after round (a round waits for the previous one)
            per_lane = sum(-(-len(ids) // count) for ids in done.rounds)
            rows.append(
                (
                    count,
                    wall,
                    cpu,
                    done.cluster_s,
                    per_lane,
                    digest == reference,
                    load,
                    done.summary.completed,
                )
            )
    base = rows[0]
    print(f"campaign {campaign.name}: {base[7]} incidents per lane count")
    print("lanes  wall s   CPU s  CPU/1   virtual wall-clock   ratio  ideal  same data  load")
    print("(CPU: the whole process tree, lane processes included; wall is shown, not judged)")
    for count, wall, cpu, clock, per_lane, same, load, _ in rows:
        ratio, ideal = clock / base[3], per_lane / base[4]
        cpu_ratio = cpu / base[2]
        fine = same and abs(ratio - ideal) <= LANE_CLOCK_TOLERANCE * ideal
        fine = fine and (count != 2 or cpu_ratio <= LANE_CPU_RATIO)  # two lanes on two cores
        ok = ok and fine
        print(
            f"{count:5d}  {wall:6.1f}  {cpu:6.1f}  {cpu_ratio:5.2f}  {format_duration(clock):>19}"
            f"  {ratio:5.3f}  {ideal:5.3f}  {'yes' if same else 'NO':>9}  {load:4.1f}"
            f"{'' if fine else '  <- FAIL'}"
        )
    print("within budget" if ok else "OVER BUDGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
