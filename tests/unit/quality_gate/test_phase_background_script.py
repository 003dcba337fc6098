"""``scripts/phase_background.py`` counts what each phase shows besides the load.

A raw incident written by the gate's fixture factory gets known contents (error lines of
an application and of the load generator, stats prints with a cumulative failure count,
visible and Chaos Mesh events), and the script's per-phase figures must be those counts.
"""

from __future__ import annotations

import gzip
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

from gate_rawfactory import RawSpec, write_raw_incident

from r2act.schema import PlannedIncident

SCRIPTS = Path(__file__).resolve().parents[3] / "scripts"


def _script() -> ModuleType:
    sys.path.insert(0, str(SCRIPTS))
    spec = importlib.util.spec_from_file_location(
        "phase_background", SCRIPTS / "phase_background.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _row(name: str, reqs: int, fails: int) -> str:
    """A stats row as Locust 2.43 prints it (``StatsEntry.to_string``, stats.py L562-579)."""
    kind = "" if name == "Aggregated" else "GET "
    cell = f"{fails}({100 * fails / reqs:.2f}%)"
    times = f"|{41:>7d} {12:>7d} {160:>7d}{41:>7d} |"
    return f"{kind:<8} {name:<76} {reqs:>7d} {cell:>12} {times} {1.8:>7.2f} {0.0:>11.2f}"


def _write(directory: Path, logs: list[tuple[str, str]], events: list[dict[str, object]]) -> None:
    rows = [
        json.dumps(
            {"ts": 1.0 + i, "pod": f"{s}-1", "container": "server", "service": s, "line": line}
        )
        for i, (s, line) in enumerate(logs)
    ]
    (directory / "logs.jsonl.gz").write_bytes(
        gzip.compress(("\n".join(rows) + "\n").encode(), mtime=0)
    )
    (directory / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))


def _event(kind: str, name: str, source: str = "kubelet") -> dict[str, object]:
    return {"ts": 5.0, "type": "Normal", "reason": "Started", "object_kind": kind,
            "object_name": name, "message": "Started", "count": 1, "source": source}  # fmt: skip


def test_the_figures_are_the_phases_counts(
    tmp_path: Path, incidents: dict[str, PlannedIncident]
) -> None:
    script = _script()
    incident = next(iter(incidents.values()))
    root = write_raw_incident(tmp_path, incident, RawSpec())
    chaos = json.loads((root / "incident.json").read_text())["chaos"]
    header = f"{'Type':<8} {'Name':<76} {'# reqs':>7} {'# fails':>12} |"
    quiet = [("frontend", '{"message": "request complete"}')] * 8
    _write(
        root / "pre",
        [*quiet, ("loadgenerator", header), ("loadgenerator", _row("Aggregated", 900, 3))],
        [_event("Pod", "frontend-1")],
    )
    _write(
        root / "during",
        [
            *quiet[:4],
            ("frontend", '{"severity": "warning", "message": "failed to retrieve ads"}'),
            ("cartservice", "rpc error: code = Unavailable"),
            ("loadgenerator", header),
            ("loadgenerator", _row("Aggregated", 1000, 5)),
            ("loadgenerator", _row("/cart", 100, 4)),
            ("loadgenerator", _row("Aggregated", 1100, 12)),
        ],
        [
            _event("Pod", "cartservice-1"),
            _event(chaos["kind"], chaos["metadata"]["name"], "records"),
        ],
    )
    _write(root / "post", [*quiet, ("loadgenerator", _row("Aggregated", 1200, 12))], [])

    figures = script.read_run(tmp_path)

    assert figures.incidents == 1
    counts = {p: (c.error_lines, c.events, c.load_failures) for p, c in figures.phases.items()}
    assert counts == {"pre": (0, 1, 0), "during": (2, 1, 7), "post": (0, 0, 0)}
    assert figures.lines == 10 + 10 + 9
    windows = json.loads((root / "incident.json").read_text())["windows"]
    span = sum(end - start for start, end in windows.values())
    pre = windows["pre"][1] - windows["pre"][0]
    assert abs(figures.load_lines - 10 / pre * span) < 1e-6
    text = script.table(figures, None)
    assert "| events | 1.00 | 1.00 | 0.00 |" in text and "41,736" in text
