"""Live replay: validity gate, re-injection, plan execution, health window, restore, report.

Works against the ``Cluster`` protocol only, so the same code replays on the simulated
cluster and on a real one. ``run_replay`` drives a predictions file; ``replay_one`` does one
prediction; ``summarize`` turns outcomes into the per-fault-type and agreement report.
"""

from r2act.replay.outcomes import ClusterCall, ReplayOutcome
from r2act.replay.report import ReplayReport, summarize, to_markdown
from r2act.replay.run import ReplayRun, load_outcomes, run_replay
from r2act.replay.runner import ReplayRequest, ReplaySettings, replay_one

__all__ = [
    "ClusterCall",
    "ReplayOutcome",
    "ReplayReport",
    "ReplayRequest",
    "ReplayRun",
    "ReplaySettings",
    "load_outcomes",
    "replay_one",
    "run_replay",
    "summarize",
    "to_markdown",
]
