"""The evidence digest of prompt mode: one case's view summarised within a token budget.

The paper's single-shot setting gives a model the evidence in its prompt. Raw logs of one
case run to ~10k lines, so the digest keeps what a diagnosis needs, in priority order:
the call graph and routes, the action space, warning events, cluster-state anomalies,
metrics that moved between ``pre`` and ``during``, then log templates whose counts rose
(numbers, ids and hex collapsed so repeats group). Sections are added whole while they fit
the budget (tokens estimated as characters / 4, the usual rule of thumb for English and
JSON; the endpoint's own count is what the trajectory records); the rest are named as
left out, so a reader of the prompt knows what the model did not see.
"""

from __future__ import annotations

import json
import re
from collections import Counter

from r2act.agents.cases import CaseInputs

CHARS_PER_TOKEN = 4
DEFAULT_BUDGET = 6000
_NUMBERISH = re.compile(r"0x[0-9a-f]+|[0-9a-f]{8}-[0-9a-f-]{27,}|\b[0-9A-Z]{10}\b|\d+(\.\d+)?")
_NOISY = re.compile(
    r"error|fail|exception|refused|timeout|timed out|unavailable|no such host|deadline|"
    r"oom|killed|unreachable|reset|status\":5|\"severity\":\"(warn|error)|level\":\"(warn|error)",
    re.IGNORECASE,
)
_TEMPLATE_CHARS = 240


def template(line: str) -> str:
    """A log line with numbers, ids and hex collapsed to ``#``, cut to a readable length."""
    return _NUMBERISH.sub("#", line)[:_TEMPLATE_CHARS]


def _topology(case: CaseInputs) -> str:
    lines = []
    for d in case.topology.deployments:
        calls = ",".join(d.calls) or "-"
        lines.append(
            f"{d.name} endpoint={d.endpoint or '-'} calls={calls} "
            f"memory_limit={d.main.memory_limit} env={json.dumps(d.env, sort_keys=True)}"
        )
    routes = "; ".join(f"{r.scope} -> {','.join(r.services)}" for r in case.topology.routes)
    return "Deployments:\n" + "\n".join(lines) + f"\nRoutes of {case.topology.entrypoint}: {routes}"


def _action_space(case: CaseInputs) -> str:
    return "Action space: " + case.action_space.model_dump_json()


def _events(case: CaseInputs) -> str | None:
    events = case.events
    if events is None:
        return None
    warn = events[(events["type"] == "Warning") | (events["phase"] == "during")]
    grouped = Counter(
        (str(e.phase), str(e.reason), str(e.object_name), template(str(e.message)))
        for e in warn.itertuples(index=False)
    )
    if not grouped:
        return "Events: none of note."
    rows = [f"[{p}] {r} {o}: {m} (x{n})" for (p, r, o, m), n in sorted(grouped.items())]
    return "Events:\n" + "\n".join(rows)


def _state(case: CaseInputs) -> str | None:
    if not case.states:
        return None
    rows = []
    for phase, snapshot in sorted(case.states.items()):
        for d in snapshot.deployments:
            if d.ready_replicas < d.replicas:
                rows.append(f"[{phase}] deployment {d.name}: {d.ready_replicas}/{d.replicas} ready")
        for p in snapshot.pods:
            for c in p.containers:
                if not c.ready or c.reason or c.last_terminated_reason:
                    rows.append(
                        f"[{phase}] pod {p.name} container {c.name}: ready={c.ready} "
                        f"state={c.state} reason={c.reason} restarts={c.restart_count} "
                        f"last_terminated={c.last_terminated_reason} limit={c.memory_limit}"
                    )
    return "Cluster state anomalies:\n" + ("\n".join(rows) or "none")


def _metrics(case: CaseInputs) -> str | None:
    metrics = case.metrics
    if metrics is None:
        return None
    rows = []
    grouped: dict[tuple[str, str], dict[str, float]] = {}
    means = metrics.groupby(["query", "labels", "phase"])["value"].mean()
    for key, value in means.to_dict().items():
        parts: tuple[object, ...] = tuple(key)  # type: ignore[arg-type]
        query_name, label_text, phase_name = (str(k) for k in parts)
        grouped.setdefault((query_name, label_text), {})[phase_name] = float(value)
    for (query, labels), values in sorted(grouped.items()):
        pre, during = values.get("pre"), values.get("during")
        if pre is None or during is None:
            continue
        if abs(during - pre) > max(0.2 * abs(pre), 1e-6):
            pod = json.loads(str(labels)).get("pod", str(labels))
            rows.append(f"{query} {pod}: pre={pre:.4g} during={during:.4g}")
    return "Metrics that moved (mean pre -> during):\n" + ("\n".join(sorted(rows)) or "none")


def _logs(case: CaseInputs, per_service: int = 6) -> str:
    logs = case.logs
    rows = []
    for service, part in logs.groupby("service", sort=True):
        counts: dict[str, Counter[str]] = {p: Counter() for p in ("pre", "during", "post")}
        for phase, line in zip(part["phase"], part["line"], strict=True):
            if _NOISY.search(str(line)):
                counts[str(phase)][template(str(line))] += 1
        rose = [
            (n - counts["pre"].get(t, 0), t, n)
            for t, n in counts["during"].items()
            if n > counts["pre"].get(t, 0)
        ]
        for _, text, n in sorted(rose, key=lambda r: (-r[0], r[1]))[:per_service]:
            rows.append(f"{service} (during x{n}, pre x{counts['pre'].get(text, 0)}): {text}")
    return "Log templates that rose during the fault window:\n" + ("\n".join(rows) or "none")


def digest(case: CaseInputs, budget_tokens: int = DEFAULT_BUDGET) -> str:
    """The case's evidence as text of at most ``budget_tokens`` (estimated) tokens."""
    sections = [
        ("topology", _topology(case)),
        ("action space", _action_space(case)),
        ("events", _events(case)),
        ("state", _state(case)),
        ("metrics", _metrics(case)),
        ("logs", _logs(case)),
    ]
    budget = budget_tokens * CHARS_PER_TOKEN
    kept, dropped = [], []
    for name, text in sections:
        if text is None:
            continue
        if len(text) + 2 <= budget:
            kept.append(text)
            budget -= len(text) + 2
        elif name == "logs" and budget > 200:
            kept.append(text[: budget - 40].rsplit("\n", 1)[0] + "\n[log templates cut]")
            budget = 0
        else:
            dropped.append(name)
    if dropped:
        kept.append(f"[left out to fit {budget_tokens} tokens: {', '.join(dropped)}]")
    return "\n\n".join(kept)
