"""Verdicts never depend on order: a file replayed forwards and backwards gives the same ones.

Each prediction on the simulator starts from the same baseline state, so what an earlier
prediction did (a gold plan that rolled a deployment, a no_action that left a pod crash
looping until the fault was removed) cannot leak into the next one.
"""

from __future__ import annotations

import json
from pathlib import Path

from r2act.campaigns import GlitchRates
from r2act.cluster.sim import SimulatedCluster
from r2act.evaluation.predictions import read_predictions
from r2act.replay import ReplaySettings, run_replay
from r2act.schema import BenchmarkRecord

QUIET = GlitchRates(injection_failure=0.0, metric_gap=0.0, slow_recovery=0.0)


def _replay(records: list[BenchmarkRecord], lines: list[str], where: Path) -> dict[str, object]:
    where.mkdir()
    predictions = where / "p.jsonl"
    predictions.write_text("\n".join(lines) + "\n")
    sim = SimulatedCluster(where, name="order", seed=7, glitches=QUIET)
    run = run_replay(
        sim,
        {r.incident_id: r for r in records},
        read_predictions(predictions),
        where / "out",
        ReplaySettings(),
    )
    return {o.incident_id: o.model_dump(mode="json") for o in run.outcomes}


def test_a_file_and_its_reverse_give_the_same_verdicts(
    smoke_records: list[BenchmarkRecord], tmp_path: Path
) -> None:
    memory = [r for r in smoke_records if r.labels.fault_type.value == "memory_pressure"]
    others = [r for r in smoke_records if r.labels.fault_type.value != "memory_pressure"][:4]
    chosen = [*others, *memory]
    assert memory, "the smoke campaign has a memory-pressure incident"
    lines = []
    for number, record in enumerate(chosen):
        plan = (
            record.gold_plan.model_dump(mode="json")
            if number % 2 == 0
            else {"operation": "no_action"}
        )
        lines.append(json.dumps({"incident_id": record.incident_id, "plan": plan}))
    forwards = _replay(chosen, lines, tmp_path / "forwards")
    backwards = _replay(list(reversed(chosen)), list(reversed(lines)), tmp_path / "backwards")
    assert forwards.keys() == backwards.keys() == {r.incident_id for r in chosen}
    assert forwards == backwards  # verdicts, reasons, times: everything
    assert {o["status"] for o in forwards.values()} >= {"executed"}  # type: ignore[index]
