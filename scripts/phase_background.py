#!/usr/bin/env python3
"""Per phase, what a run's raw store shows besides the load: issue 22's closing figures.

For every complete incident of ``RUN/raw`` and each phase (pre, during, post) it counts
the application services' error lines (the quality gate's ``ERROR_LINE``: warnings such as
``failed to retrieve ads`` and errors; the load generator's own rows are left out, its
stats header says ``# fails``), the method-visible Kubernetes events (the gate's
provenance split: Chaos Mesh's own events are not counted) and the failures the load
generator's ``Aggregated`` row added between the phase's first and last stats print (the
counter is cumulative since Locust started, ``systems.locust``). It prints their means per
incident, and the log lines per incident from load alone: each incident's pre-window rate
of lines that are not error lines (a healthy window) times the length of its three
windows, next to the paper's 41,736 (its Figure 6(b)). In a pre or post window everything
counted is background; in the during window the fault's marks are counted too, so the
background there is the difference from the same campaign collected at ``noise: none``
(pass that run as ``--clean``).

    python scripts/phase_background.py r2act-runs/r2act-302 --clean r2act-runs/noise/none
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from r2act.quality_gate import rawstore
from r2act.quality_gate.evidence import ERROR_LINE
from r2act.quality_gate.provenance import is_provenance_event
from r2act.schema import PHASES, Phase
from r2act.systems import get_system
from r2act.systems.locust import AGGREGATED_ROW_START, STATS_ROW

PAPER_LINES_PER_INCIDENT = 41_736
"""The R2Act paper's mean log records per incident (its Figure 6(b))."""

_STATS = re.compile(STATS_ROW)


@dataclass
class PhaseCounts:
    """Sums over incidents of one phase's counts."""

    error_lines: int = 0
    events: int = 0
    load_failures: int = 0


@dataclass
class RunFigures:
    """A run's per-phase sums, its incident count and its lines from load alone."""

    incidents: int = 0
    phases: dict[Phase, PhaseCounts] = field(
        default_factory=lambda: {p: PhaseCounts() for p in PHASES}
    )
    load_lines: float = 0.0
    lines: int = 0

    def per_incident(self, phase: Phase, name: str) -> float:
        """Mean of one count per incident (0 for an empty run)."""
        return getattr(self.phases[phase], name) / self.incidents if self.incidents else 0.0


def _failures_added(lines: list[str]) -> int:
    """Cumulative failures of the last ``Aggregated`` row minus those of the first."""
    fails = [int(m["fails"]) for line in lines if (m := _STATS.match(line))]
    return fails[-1] - fails[0] if len(fails) > 1 else 0


def read_run(run: Path) -> RunFigures:
    """The per-phase sums of every complete incident of ``run``."""
    figures = RunFigures()
    for incident in rawstore.list_incidents(run):
        if not incident.complete:
            continue
        annotation = rawstore.read_annotation(incident)
        loadgen = get_system(annotation.incident.system).topology.load_generator
        figures.incidents += 1
        healthy_rate, span = 0.0, 0.0
        for phase in PHASES:
            root = incident.root / phase
            table = rawstore.read_logs(rawstore.logs_file(root))
            lines = table.column("line")
            own = pc.not_equal(table.column("service"), pa.scalar(loadgen or "", pa.string()))
            errors = int(
                pc.sum(pc.and_(own, pc.match_substring_regex(lines, ERROR_LINE))).as_py() or 0
            )
            mine = pc.filter(lines, pc.invert(own)) if loadgen else pa.array([], pa.string())
            aggregated = pc.filter(mine, pc.match_substring_regex(mine, AGGREGATED_ROW_START))
            events = rawstore.read_events(root / rawstore.EVENTS)
            counts = figures.phases[phase]
            counts.error_lines += errors
            counts.events += sum(not is_provenance_event(e, annotation.chaos_name) for e in events)
            counts.load_failures += _failures_added([str(x) for x in aggregated.to_pylist()])
            start, end = annotation.windows[phase]
            span += end - start
            figures.lines += table.num_rows
            if phase == "pre" and end > start:
                healthy_rate = (table.num_rows - errors) / (end - start)
        figures.load_lines += healthy_rate * span
    return figures


def table(figures: RunFigures, clean: RunFigures | None) -> str:
    """The Markdown table of per-incident means (and, with ``clean``, the background)."""
    names = (
        ("error_lines", "error lines"),
        ("events", "events"),
        ("load_failures", "Locust failures"),
    )
    rows = ["| per incident | " + " | ".join(PHASES) + " |", "|---|" + "---|" * len(PHASES)]
    for name, label in names:
        cells = []
        for phase in PHASES:
            value = figures.per_incident(phase, name)
            cell = f"{value:.2f}"
            if clean is not None:
                cell += f" ({value - clean.per_incident(phase, name):+.2f})"
            cells.append(cell)
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    n = figures.incidents or 1
    rows.append(
        f"\n{figures.incidents} incidents; log lines per incident {figures.lines / n:,.0f}, "
        f"from load alone {figures.load_lines / n:,.0f} (paper {PAPER_LINES_PER_INCIDENT:,})"
    )
    if clean is not None:
        rows.append("(in brackets: minus the same campaign at noise none, the background)")
    return "\n".join(rows) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("run", type=Path, help="a run directory (holds raw/)")
    parser.add_argument("--clean", type=Path, help="the same campaign collected at noise none")
    args = parser.parse_args(argv)
    figures = read_run(args.run)
    if not figures.incidents:
        sys.exit(f"{args.run}: no complete incident under raw/")
    clean = read_run(args.clean) if args.clean else None
    sys.stdout.write(table(figures, clean))
    return 0


if __name__ == "__main__":
    sys.exit(main())
