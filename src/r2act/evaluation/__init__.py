"""Offline evaluation: scoring, metrics, error taxonomy, bootstrap statistics, comparison.

Reads a dataset's records and untrusted prediction files; never imports the cluster
package. The core functions take records (``Sequence[BenchmarkRecord]``) and parsed files
so they are testable without a dataset on disk:

- :func:`read_predictions` / :func:`parse_stream` — the never-crashing predictions reader.
- :func:`score_file` — per-incident indicators over the whole population.
- :func:`evaluate` — every metric with 95% bootstrap CIs, breakdowns, taxonomy, warnings.
- :func:`compare` — paired per-stratum differences and the audit paper's summary line.
- :func:`to_markdown`, :func:`comparison_markdown`, :func:`scatter` — report views.
"""

from r2act.evaluation.bootstrap import DEFAULT_REPLICATES, DEFAULT_SEED
from r2act.evaluation.compare import Comparison, compare, comparison_markdown
from r2act.evaluation.evaluate import STRATA, evaluate, strata_of, taxonomy_summary
from r2act.evaluation.metrics import METRICS, Estimate
from r2act.evaluation.plot import scatter
from r2act.evaluation.predictions import (
    IssueKind,
    ParsedPrediction,
    ParseIssue,
    PredictionFile,
    parse_stream,
    read_predictions,
)
from r2act.evaluation.report import REPORT_SCHEMA_VERSION, EvaluationReport, to_markdown
from r2act.evaluation.scoring import IncidentScore, ScoreTable, score_file, score_incident
from r2act.evaluation.taxonomy import Classification, ErrorCategory, Placement, classify

__all__ = [
    "DEFAULT_REPLICATES",
    "DEFAULT_SEED",
    "METRICS",
    "REPORT_SCHEMA_VERSION",
    "STRATA",
    "Classification",
    "Comparison",
    "ErrorCategory",
    "Estimate",
    "EvaluationReport",
    "IncidentScore",
    "IssueKind",
    "ParseIssue",
    "ParsedPrediction",
    "Placement",
    "PredictionFile",
    "ScoreTable",
    "classify",
    "compare",
    "comparison_markdown",
    "evaluate",
    "parse_stream",
    "read_predictions",
    "scatter",
    "score_file",
    "score_incident",
    "strata_of",
    "taxonomy_summary",
    "to_markdown",
]
