"""``audit/report.md``: counts per group, a reasons histogram and the main-set cell table.

Plain Markdown with no timestamps, so the same raw store always gives the same report.
"""

from __future__ import annotations

from collections import Counter

from r2act.campaigns.quotas import CellKey, shortfall
from r2act.quality_gate.problems import Group, Verdict
from r2act.schema import FaultType


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def cell_counts(verdicts: list[Verdict]) -> dict[tuple[str, str], int]:
    """Main incidents per (service, fault type)."""
    counts: Counter[tuple[str, str]] = Counter(
        (v.service, v.fault_type.value)
        for v in verdicts
        if v.group == Group.MAIN and v.service and v.fault_type
    )
    return dict(counts)


def shortfalls(verdicts: list[Verdict]) -> dict[CellKey, tuple[int, int]]:
    """Cells (service, fault type, intensity) with a quota that ended with fewer main
    incidents than it: cell -> (main, quota). Spares exist to make this empty."""
    cells = [
        (v, (v.service, v.fault_type, v.intensity))
        for v in verdicts
        if v.quota is not None and v.service and v.fault_type and v.intensity
    ]
    wanted = {cell: v.quota for v, cell in cells if v.quota is not None}
    return shortfall(wanted, [cell for v, cell in cells if v.group == Group.MAIN])


def render_report(campaign: str, verdicts: list[Verdict]) -> str:
    """The whole report as Markdown text."""
    groups = Counter(v.group for v in verdicts)
    lines = [f"# Quality audit: {campaign}", ""]
    lines.append(
        f"{len(verdicts)} raw incidents: "
        + ", ".join(f"{groups.get(g, 0)} {g.value}" for g in Group)
        + ". Only main incidents become benchmark records; the rest stay in the audit trail."
    )
    lines += ["", "## Groups", ""]
    lines += _table(["group", "incidents"], [[g.value, str(groups.get(g, 0))] for g in Group])

    reasons: Counter[tuple[str, str]] = Counter()
    for v in verdicts:
        for code in v.reasons:
            severity = next(p.severity.value for p in v.problems if p.code == code)
            reasons[(code, severity)] += 1
    lines += ["", "## Reasons", ""]
    if reasons:
        rows = [
            [code, severity, str(n)]
            for (code, severity), n in sorted(reasons.items(), key=lambda kv: (-kv[1], kv[0]))
        ]
        lines += _table(["reason", "severity", "incidents"], rows)
    else:
        lines.append("No problems found.")

    cells = cell_counts(verdicts)
    services = sorted({s for s, _ in cells})
    faults = [f.value for f in FaultType if any(f.value == k[1] for k in cells)]
    lines += ["", "## Main incidents per service x fault type", ""]
    if cells:
        rows = [
            [
                s,
                *(str(cells.get((s, f), 0) or "") for f in faults),
                str(sum(cells.get((s, f), 0) for f in faults)),
            ]
            for s in services
        ]
        totals = [str(sum(cells.get((s, f), 0) for s in services)) for f in faults]
        rows.append(["**total**", *totals, str(sum(cells.values()))])
        lines += _table(["service", *faults, "total"], rows)
        lines.append("")
        lines.append(f"{len(cells)} non-empty cells.")
    else:
        lines.append("No main incidents.")

    short = shortfalls(verdicts)
    if short:
        lines += ["", "## Cells below quota", ""]
        lines.append(
            f"{len(short)} cells lack {sum(q - m for m, q in short.values())} main incidents "
            "(raise the campaign's spares and rerun collect; the rerun collects only new ones)."
        )
        lines.append("")
        lines += _table(
            ["service", "fault type", "intensity", "main", "quota"],
            [[*cell, str(m), str(q)] for cell, (m, q) in short.items()],
        )

    trail = [v for v in verdicts if v.group != Group.MAIN]
    lines += ["", "## Audit trail (non-main incidents)", ""]
    if trail:
        lines += _table(
            ["incident", "group", "reasons"],
            [[v.incident_id, v.group.value, ", ".join(v.reasons) or "-"] for v in trail],
        )
    else:
        lines.append("None.")
    return "\n".join(lines) + "\n"
