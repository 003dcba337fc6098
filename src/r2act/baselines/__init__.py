"""Baseline methods that write predictions files (``r2act baseline NAME``).

Floors (``random``, ``majority``), ``keyword``, ``rule``, naive Bayes (``nb``), the
trace ranking ``tracerank`` (view ``full+traces``) and the gold-RCA + mapper control
(``gold-mapper``). All are RCA-only: their diagnosis goes
through the paper's fixed mapper (``actions.map_rca``). Observations are read one incident
at a time (:class:`DatasetReader`), so a paper-scale dataset never sits in memory.
Start with :func:`run_baseline`; :data:`BASELINES` lists them.
"""

from r2act.baselines.base import Baseline, RunContext, abstain, mapped
from r2act.baselines.folds import Split, splits
from r2act.baselines.reader import Case, DatasetReader
from r2act.baselines.registry import BASELINES, get_baseline
from r2act.baselines.run import RunSummary, run_baseline

__all__ = [
    "BASELINES",
    "Baseline",
    "Case",
    "DatasetReader",
    "RunContext",
    "RunSummary",
    "Split",
    "abstain",
    "get_baseline",
    "mapped",
    "run_baseline",
    "splits",
]
