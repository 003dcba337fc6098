"""RCAEval's methods as baselines: run them unchanged in their own interpreter, map their ranks.

``r2act baseline rcaeval --method baro --python ENV/bin/python`` exports the dataset in
RCAEval's layout (``r2act dataset export --format rcaeval``), runs
:mod:`r2act.baselines.rcaeval_driver` with that interpreter (RCAEval's stack cannot share
r2act's), and turns each case's ranks into a prediction here.

RCAEval ranks *series* (``cartservice_cpu``, ``frontend_latency``), best first, and its own
scoring reads the service before the first underscore. r2act needs a service and one of its
fault types, so a fixed, documented table (:data:`METRIC_FAULTS`, mapping
``r2act-rcaeval/1``) names the fault type a series points to, by what it measures: CPU ->
``cpu_saturation``, memory -> ``memory_pressure``, restarts and readiness ->
``pod_failure``, latency and traffic -> ``network_delay``, request errors -> ``http_error``.
No series singles out ``http_abort``, ``dns_fault`` or ``dns_random``, so a ranked answer
never names them: their RCA-T is 0 by construction, which the table says and the docs
repeat. The top series whose service is one of the system's gives the RCA answer, and the
plan comes from the record's policy's mapper, as for every RCA-only baseline. The distinct
(service, fault type) pairs of the ranking, best first, stay in the line's
``evidence.ranks`` (with RCAEval's own top series), so ``r2act evaluate --mapper`` and
:func:`accuracy_at` give AC@k.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from pydantic import JsonValue

from r2act.baselines.base import abstain, mapped, policy_of
from r2act.baselines.reader import DatasetReader
from r2act.errors import DataError, R2actError
from r2act.schema import BenchmarkRecord, FaultType, Prediction

MAPPING: Final = "r2act-rcaeval/1"
METRIC_FAULTS: Final[dict[str, FaultType]] = {
    "cpu": FaultType.CPU_SATURATION,
    "cpu-throttled": FaultType.CPU_SATURATION,
    "mem": FaultType.MEMORY_PRESSURE,
    "memory-limit": FaultType.MEMORY_PRESSURE,
    "restarts": FaultType.POD_FAILURE,
    "ready": FaultType.POD_FAILURE,
    "replicas-available": FaultType.POD_FAILURE,
    "last-terminated-reason": FaultType.POD_FAILURE,
    "latency": FaultType.NETWORK_DELAY,
    "latency-50": FaultType.NETWORK_DELAY,
    "latency-90": FaultType.NETWORK_DELAY,
    "network-receive": FaultType.NETWORK_DELAY,
    "network-transmit": FaultType.NETWORK_DELAY,
    "error": FaultType.HTTP_ERROR,
}
"""The fault type each exported series points to (``<service>_<series>``), by what it measures."""
KS: Final = (1, 3, 5)
DRIVER: Final = Path(__file__).with_name("rcaeval_driver.py")
_TOP: Final = 10


@dataclass(frozen=True)
class DriverRun:
    """What the driver wrote: one ranks line per case, and the cases it could not rank."""

    ranks: dict[str, list[str]]
    failed: dict[str, str]
    seconds: float


def entry(series: str) -> tuple[str, FaultType | None]:
    """(service, fault type) of one RCAEval rank (the service is before the first ``_``)."""
    service, _, metric = series.partition("_")
    return service, METRIC_FAULTS.get(metric)


def ranked_pairs(ranks: Sequence[str], services: set[str]) -> list[tuple[str, FaultType]]:
    """Distinct (service, fault type) pairs of a ranking, best first (unknown series skipped)."""
    pairs: list[tuple[str, FaultType]] = []
    for series in ranks:
        service, fault = entry(series)
        if service in services and fault is not None and (service, fault) not in pairs:
            pairs.append((service, fault))
    return pairs


def check_python(python: Path) -> None:
    """Refuse an interpreter that is missing or cannot import RCAEval, with the fix."""
    if not (python.is_file() and os.access(python, os.X_OK)):
        raise DataError(
            f"--python {python}: no such interpreter (build an RCAEval environment: "
            "docs/rcaeval.md)"
        )
    done = subprocess.run(
        [str(python), "-c", "import RCAEval, pandas, numpy"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["exit code " + str(done.returncode)])[-1]
        raise DataError(
            f"--python {python}: cannot import RCAEval ({last}); install it there: docs/rcaeval.md"
        )


def run_driver(
    python: Path,
    export: Path,
    method: str,
    workdir: Path,
    *,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> DriverRun:
    """Run RCAEval's ``method`` over ``export`` with ``python``; the ranks per case id."""
    # absolute: the driver runs in workdir, where a relative path would point elsewhere
    workdir, export = workdir.resolve(), export.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    # A copy of its own in workdir: run from src/r2act/baselines, the script's directory
    # would come first on sys.path and r2act's modules (keyword.py) would shadow the stdlib.
    script = workdir / "r2act_rcaeval_driver.py"
    shutil.copyfile(DRIVER, script)
    out = workdir / f"{method}.ranks.jsonl"
    command = [str(python), str(script), "--method", method, "--export", str(export)]
    command += ["--out", str(out), "--seed", str(seed)]
    started = time.perf_counter()
    tail: list[str] = []
    with subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=workdir
    ) as process:
        assert process.stderr is not None
        for line in process.stderr:
            text = line.rstrip("\n")
            if text.startswith("case ") and progress is not None:
                progress(text)
            else:
                tail = [*tail[-19:], text]
    if process.returncode != 0:
        detail = " | ".join(t for t in tail if t.strip())[-600:]
        raise R2actError(f"RCAEval {method} stopped with exit code {process.returncode}: {detail}")
    ranks: dict[str, list[str]] = {}
    failed: dict[str, str] = {}
    for raw in out.read_text(encoding="utf-8").splitlines():
        line = json.loads(raw)
        if line.get("error"):
            failed[str(line["case_id"])] = str(line["error"])
        ranks[str(line["case_id"])] = [str(r) for r in line.get("ranks") or []]
    return DriverRun(ranks, failed, time.perf_counter() - started)


def predictions(reader: DatasetReader, run: DriverRun, method: str) -> list[Prediction]:
    """One prediction per record, in record order: the top mapped pair through the mapper."""
    out: list[Prediction] = []
    for record in reader.records:
        case = record.case_id or record.incident_id
        topology = reader.topology(record)
        ranks = run.ranks.get(case)
        if ranks is None or case in run.failed:
            reason = run.failed.get(case, "no ranks from the driver")
            out.append(abstain(record.incident_id, method, f"RCAEval failed: {reason}"))
            continue
        pairs = ranked_pairs(ranks, set(topology.names))
        if not pairs:
            out.append(abstain(record.incident_id, method, "no ranked series of a service"))
            continue
        service, fault = pairs[0]
        evidence: JsonValue = {
            "ranks": [{"service": s, "fault_type": f.value} for s, f in pairs[:20]],
            "rcaeval": {"top": list[JsonValue](ranks[:_TOP]), "mapping": MAPPING},
        }
        out.append(
            mapped(
                record.incident_id,
                record.action_space,
                topology,
                service,
                fault,
                method=method,
                evidence=evidence,
                policy=policy_of(record),
            )
        )
    return out


@dataclass(frozen=True)
class Accuracy:
    """AC@k of one stratum: service-level and (service, fault type)-level, over n cases."""

    n: int
    service: dict[int, float]
    pair: dict[int, float]


def _hits(predicted: Prediction, record: BenchmarkRecord) -> tuple[int, int]:
    """The 1-based rank of the true service and of the true pair (0: not ranked)."""
    evidence = predicted.evidence if isinstance(predicted.evidence, dict) else {}
    ranks = evidence.get("ranks")
    entries = [r for r in ranks if isinstance(r, dict)] if isinstance(ranks, list) else []
    services = list(dict.fromkeys(str(r.get("service")) for r in entries))
    pairs = [(str(r.get("service")), str(r.get("fault_type"))) for r in entries]
    truth = (record.labels.service, record.labels.fault_type.value)
    service_rank = services.index(truth[0]) + 1 if truth[0] in services else 0
    pair_rank = pairs.index(truth) + 1 if truth in pairs else 0
    return service_rank, pair_rank


def accuracy_at(
    lines: Sequence[Prediction], records: Sequence[BenchmarkRecord]
) -> dict[str, Accuracy]:
    """AC@1/3/5 per fault type and ``all`` (a case without ranks counts as a miss)."""
    by_id = {p.incident_id: p for p in lines}
    strata: dict[str, list[tuple[int, int]]] = {}
    for record in records:
        line = by_id.get(record.incident_id)
        hit = _hits(line, record) if line is not None else (0, 0)
        for name in (record.labels.fault_type.value, "all"):
            strata.setdefault(name, []).append(hit)

    def share(ranks: list[int], k: int) -> float:
        return round(sum(1 for r in ranks if 0 < r <= k) / len(ranks), 3)

    return {
        name: Accuracy(
            len(hits),
            {k: share([h[0] for h in hits], k) for k in KS},
            {k: share([h[1] for h in hits], k) for k in KS},
        )
        for name, hits in sorted(strata.items(), key=lambda kv: (kv[0] == "all", kv[0]))
    }


def write_predictions(lines: Sequence[Prediction], out: Path) -> None:
    """Write ``lines`` as JSON Lines through a temporary sibling (never a half file)."""
    if out.is_dir():
        raise DataError(f"{out}: is a directory (pass a .jsonl file as --out)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8", newline="\n") as handle:
            for line in lines:
                handle.write(line.model_dump_json() + "\n")
        os.replace(tmp, out)
    finally:
        with suppress(OSError):
            tmp.unlink(missing_ok=True)


def export_cases(export: Path) -> int:
    """How many cases an RCAEval export indexes (0 when it has no ``cases.csv``)."""
    index = export / "cases.csv"
    if not index.is_file():
        return 0
    with index.open(encoding="utf-8", newline="") as handle:
        return sum(1 for _ in csv.DictReader(handle))


__all__ = [
    "KS",
    "MAPPING",
    "METRIC_FAULTS",
    "Accuracy",
    "DriverRun",
    "accuracy_at",
    "check_python",
    "entry",
    "export_cases",
    "predictions",
    "ranked_pairs",
    "run_driver",
    "write_predictions",
]
