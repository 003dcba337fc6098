"""The gate's verdict on one raw incident as soon as it is collected, for stopping a full cell.

The collector stops collecting a cell's spares once enough of its incidents are clean
(``campaigns.quotas.next_round``). "Clean" must mean what the audit will decide, so this
runs the audit's own per-incident path (``audit.audit_incident``: checksums, every check of
``checks.py``, record building under the default policy), never a second rule.

What it cannot see: checks that need the whole run (lanes interfering on a shared node,
``interference.py``). The final audit may therefore still reject an incident judged clean
here; its cell then ends below quota and the audit report lists the shortfall.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from r2act.quality_gate.audit import judge_incident
from r2act.quality_gate.evidence import WrittenLogs
from r2act.quality_gate.problems import Group, Verdict
from r2act.schema import Phase


def judge(incident_dir: Path, written: Mapping[Phase, WrittenLogs] | None = None) -> Verdict:
    """The audit's verdict on the complete raw incident at ``incident_dir``, with the audit's
    defaults (the default recovery policy, no staged logs) and no cross-incident checks.

    The verdict and the evidence summaries are kept in the incident's ``judged.json``, so
    the audit does not read the files again (``quality_gate.judged``). ``written``: the
    log lines the collector has just written, by phase, summarised without parsing the
    log files back (``evidence.WrittenLogs``)."""
    return judge_incident(incident_dir, written=written).verdict


def is_clean(verdict: Verdict) -> bool:
    """Passed every per-incident check (main, or pilot in a pilot campaign)."""
    return verdict.group in {Group.MAIN, Group.PILOT, Group.SPARE}
