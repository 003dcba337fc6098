"""Build the static site: read every input once, then write each page with Jinja2.

Layout of ``SITE/`` (every link is relative, so the folder opens from the file system and
can be copied anywhere)::

    index.html                      leaderboard: metrics, Fig. 2, breakdowns, comparisons
    incidents.html                  every incident, searchable, with each method's verdict
    audit.html                      what the quality gate kept out, and why
    incidents/<id>.html             one incident: fault, timeline, logs, plans, predictions
    trajectories/<method>/...       one page per agent case, and an index per method
    data/<id>/series.js, logs-N.js  the incident pages' data, loaded when they are opened
    assets/report.css, report.js    the only script: plain JS, no library, no network

Every string from a dataset, a log line, a prediction or a trajectory is untrusted. Pages
are rendered by Jinja2 with autoescape on; data embedded in a page goes through ``tojson``
(which escapes ``<``, ``>``, ``&`` and quotes, so ``</script>`` inside a string cannot close
the tag); data files hold JSON (a JavaScript expression, whatever the strings say) with
``<`` escaped as well, and log text as base64; the script only ever sets ``textContent``.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import pyarrow as pa
import pyarrow.compute as pc

from r2act import __version__, datasets
from r2act.agents.trajectory import Trajectory
from r2act.datasets import layout
from r2act.errors import DataError
from r2act.evaluation import read_predictions
from r2act.evaluation.metrics import COVERAGE, METRICS
from r2act.evaluation.scoring import IncidentScore
from r2act.quality_gate.problems import Verdict
from r2act.replay import load_outcomes
from r2act.replay.outcomes import ReplayOutcome
from r2act.report import health, text
from r2act.report import observations as obs
from r2act.report.figure import scatter_svg
from r2act.report.inputs import REPLAY_FILE, TRAJECTORIES_SUFFIX, ReportInputs
from r2act.report.scores import GROUPINGS, Scores, score
from r2act.schema import BenchmarkRecord

MARKER = ".r2act-report"
"""File that marks a directory as a report r2act wrote (and may therefore replace)."""
MAX_RESULT_CHARS = 20_000
"""A tool result longer than this is cut on the trajectory page (the file keeps it all)."""
PREVIEW_CHARS = 400
"""Characters of a tool result shown before it is expanded."""

Progress = Callable[[str, int, int], None]


@dataclass
class BuildResult:
    """What was written, for the command's summary and the benchmark."""

    out: Path
    incidents: int
    methods: int
    pages: int = 0
    files: int = 0
    bytes: int = 0
    largest_page: tuple[str, int] = ("", 0)
    largest_file: tuple[str, int] = ("", 0)
    trajectories: int = 0
    excluded: int = 0
    notes: list[str] = field(default_factory=list)


@dataclass
class _Replay:
    name: str
    outcomes: dict[str, ReplayOutcome]


@dataclass
class _Agent:
    method: str
    slug: str
    cases: dict[str, tuple[Path, Trajectory]]
    """Incident id -> (file, trajectory)."""


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("r2act.report", "templates"),
        autoescape=True,  # every {{ }} is HTML-escaped; nothing is marked safe from input
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["value"] = text.value
    env.filters["interval"] = text.interval
    env.filters["sortkey"] = text.sort_key
    env.filters["plan"] = text.plan_text
    env.filters["seconds"] = text.seconds
    return env


def _prepare(out: Path) -> None:
    """Make ``out`` an empty report directory; refuse to empty one r2act did not write."""
    if out.exists():
        if not out.is_dir():
            raise DataError(f"{out}: exists and is not a directory (pass another --out)")
        if any(out.iterdir()) and not (out / MARKER).is_file():
            raise DataError(
                f"{out}: not empty and not a report r2act wrote; pass an empty or new --out "
                "(nothing was changed)"
            )
        for child in out.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text(f"written by r2act {__version__}\n", encoding="utf-8")


class _Writer:
    """Writes files under the site root and keeps the size figures."""

    def __init__(self, root: Path, result: BuildResult) -> None:
        self.root = root
        self.result = result
        self.made: set[Path] = set()

    def write(self, relative: str, content: str | bytes, *, page: bool = False) -> None:
        path = self.root / relative
        if path.parent not in self.made:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.made.add(path.parent)
        data = content.encode("utf-8") if isinstance(content, str) else content
        path.write_bytes(data)
        size = len(data)
        self.result.files += 1
        self.result.bytes += size
        if size > self.result.largest_file[1]:
            self.result.largest_file = (relative, size)
        if page:
            self.result.pages += 1
            if size > self.result.largest_page[1]:
                self.result.largest_page = (relative, size)


def data_script(key: str, payload: object) -> str:
    """A data file: ``r2actData(key, payload)``, JSON with every '<' escaped."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    body = body.replace("<", "\\u003c").replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    return f"r2actData({json.dumps(key)},{body});\n"


def _read_replays(paths: list[Path], known: set[str]) -> list[_Replay]:
    out = []
    taken: set[str] = set()
    for directory in paths:
        outcomes = load_outcomes(directory / REPLAY_FILE)
        name = text.slug(directory.name, taken)
        out.append(_Replay(name, {o.incident_id: o for o in outcomes if o.incident_id in known}))
    return out


def _read_agents(paths: list[Path], aliases: dict[str, str], notes: list[str]) -> list[_Agent]:
    out = []
    taken: set[str] = set()
    for directory in paths:
        method = directory.name.removesuffix(TRAJECTORIES_SUFFIX)
        cases: dict[str, tuple[Path, Trajectory]] = {}
        bad = 0
        for path in sorted(directory.glob("*.json")):
            try:
                trajectory = Trajectory.model_validate_json(path.read_bytes())
            except (OSError, ValueError):
                bad += 1
                continue
            case = trajectory.session_id.split(":", 1)[0]
            incident = aliases.get(case) or aliases.get(path.stem)
            if incident is not None:
                cases[incident] = (path, trajectory)
        if bad:
            notes.append(f"{directory}: {bad} unreadable trajectory file(s) skipped")
        out.append(_Agent(method, text.slug(method, taken), cases))
    return out


def _read_verdicts(inputs: ReportInputs) -> list[Verdict]:
    """The gate's verdicts: the run's audit (every incident), else the dataset's trail."""
    if inputs.audit is not None:
        from r2act.quality_gate.audit import read_verdicts

        return read_verdicts(inputs.audit.parent.parent)
    path = inputs.dataset / layout.AUDIT_TRAIL
    if not path.is_file():
        return []
    import pyarrow.parquet as pq

    try:
        rows = pq.read_table(path, columns=["verdict"]).column("verdict").to_pylist()
        return [Verdict.model_validate_json(row) for row in rows]
    except (OSError, ValueError, pa.ArrowException) as exc:
        raise DataError(
            f"{path}: unreadable audit trail ({exc}); run `r2act dataset validate`"
        ) from None


def build_report(
    inputs: ReportInputs,
    out: Path,
    *,
    pairs: list[tuple[str, str]] | None = None,
    by: str = "fault_type",
    seed: int = 0,
    replicates: int = 10_000,
    progress: Progress | None = None,
) -> BuildResult:
    """Write the whole site for ``inputs`` to ``out`` (see module doc); DataError on bad input."""
    started = time.perf_counter()
    records = datasets.load_records(inputs.dataset)
    if not records:
        raise DataError(f"{inputs.dataset}: the dataset has no incidents")
    aliases = datasets.ids.aliases(records)
    known = {r.incident_id for r in records}
    files = [read_predictions(p) for p in inputs.predictions]
    scores = score(
        records,
        files,
        dataset=str(inputs.dataset),
        dataset_ids=set(aliases),
        pairs=_check_pairs(pairs or [], [f.method for f in files], files),
        by=by,
        seed=seed,
        replicates=replicates,
    )
    result = BuildResult(out=out, incidents=len(records), methods=len(files))
    replays = _read_replays(inputs.replays, known)
    agents = _read_agents(inputs.trajectories, aliases, result.notes)
    verdicts = _read_verdicts(inputs)
    _prepare(out)
    writer = _Writer(out, result)
    env = _environment()
    _assets(writer)
    pages = _Pages(records, scores, replays, agents, verdicts)
    common = {"version": __version__, "dataset": str(inputs.dataset), "generated": pages.nav}
    writer.write("index.html", pages.leaderboard(env, common), page=True)
    writer.write("incidents.html", pages.incident_list(env, common), page=True)
    writer.write("audit.html", pages.audit(env, common), page=True)
    result.excluded = sum(1 for v in verdicts if v.group.value != "main")
    for agent in agents:
        writer.write(
            f"trajectories/{agent.slug}/index.html",
            pages.agent_index(env, common, agent),
            page=True,
        )
        for incident, (path, trajectory) in agent.cases.items():
            writer.write(
                f"trajectories/{agent.slug}/{pages.slugs[incident]}.html",
                pages.trajectory(
                    env,
                    common=common,
                    agent=agent,
                    incident=incident,
                    path=path,
                    trajectory=trajectory,
                ),
                page=True,
            )
            result.trajectories += 1
    _incident_pages(
        inputs.dataset, env=env, common=common, pages=pages, writer=writer, progress=progress
    )
    result.notes.append(f"built in {time.perf_counter() - started:.1f} s")
    return result


def _check_pairs(
    pairs: list[tuple[str, str]], names: list[str], files: list[Any]
) -> list[tuple[str, str]]:
    from r2act.evaluation.evaluate import unique_names

    known = unique_names(names)
    for a, b in pairs:
        for name in (a, b):
            if name not in known:
                raise DataError(
                    f"--compare {a},{b}: no method {name!r} among the predictions "
                    f"({', '.join(known) or 'none given'})"
                )
    del files
    return pairs


def _assets(writer: _Writer) -> None:
    from importlib import resources

    static = resources.files("r2act.report") / "static"
    for name in ("report.css", "report.js"):
        writer.write(f"assets/{name}", (static / name).read_text(encoding="utf-8"))


class _Pages:
    """The page contexts; every value passed to a template is plain data."""

    def __init__(
        self,
        records: list[BenchmarkRecord],
        scores: Scores,
        replays: list[_Replay],
        agents: list[_Agent],
        verdicts: list[Verdict],
    ) -> None:
        self.records = records
        self.scores = scores
        self.replays = replays
        self.agents = agents
        self.verdicts = {v.incident_id: v for v in verdicts}
        taken: set[str] = set()
        self.slugs = {r.incident_id: text.slug(r.incident_id, taken) for r in records}
        method_slugs: set[str] = set()
        self.method_slugs = [text.slug(m.report.name, method_slugs) for m in scores.methods]
        agent_of = {a.method: a for a in agents}
        self.agent_for = [
            agent_of.get(m.report.name) or agent_of.get(Path(m.report.source).stem)
            for m in scores.methods
        ]
        self.nav = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        self.row_of = {r.incident_id: i for i, r in enumerate(records)}

    # -- leaderboard ------------------------------------------------------------------------

    def leaderboard(self, env: jinja2.Environment, common: dict[str, Any]) -> str:
        report = self.scores.evaluation
        methods = []
        for index, method in enumerate(self.scores.methods):
            agent = self.agent_for[index]
            methods.append(
                {
                    "name": method.report.name,
                    "slug": self.method_slugs[index],
                    "source": method.report.source,
                    "metrics": method.report.metrics,
                    "taxonomy": method.report.taxonomy,
                    "parse": method.report.parse,
                    "warnings": method.report.warnings,
                    "breakdowns": method.breakdowns,
                    "agent": None if agent is None else agent.slug,
                    "agent_cases": 0 if agent is None else len(agent.cases),
                }
            )
        breakdowns = {
            name: sorted({v for m in self.scores.methods for v in m.breakdowns[name]})
            for name in GROUPINGS
        }
        replay_rows = [self._replay_summary(r) for r in self.replays]
        return env.get_template("leaderboard.html").render(
            **common,
            title="Leaderboard",
            page="leaderboard",
            root="",
            report=report,
            metrics=[COVERAGE, *METRICS],
            methods=methods,
            figure=scatter_svg(report),
            breakdowns=breakdowns,
            comparisons=self.scores.comparisons,
            replays=replay_rows,
            systems=sorted({r.metadata.system for r in self.records}),
        )

    def _replay_summary(self, replay: _Replay) -> dict[str, Any]:
        outcomes = list(replay.outcomes.values())
        statuses = Counter(o.status for o in outcomes)
        recovered = [o for o in outcomes if o.recovered]
        return {
            "name": replay.name,
            "replayed": len(outcomes),
            "executed": statuses.get("executed", 0),
            "refused": statuses.get("refused", 0),
            "no_effect": statuses.get("no_effect", 0),
            "error": statuses.get("error", 0),
            "recovered": len(recovered),
            "gated": sum(1 for o in outcomes if o.gated_recovered),
            "agree": sum(
                1 for o in outcomes if o.status == "executed" and o.offline_valid == o.recovered
            ),
        }

    # -- incident list ----------------------------------------------------------------------

    def incident_list(self, env: jinja2.Environment, common: dict[str, Any]) -> str:
        rows = []
        for i, record in enumerate(self.records):
            verdict = self.verdicts.get(record.incident_id)
            rows.append(
                {
                    "id": record.incident_id,
                    "slug": self.slugs[record.incident_id],
                    "system": record.metadata.system,
                    "service": record.labels.service,
                    "fault_type": record.labels.fault_type.value,
                    "intensity": record.labels.intensity.value,
                    "group": verdict.group.value if verdict else "main",
                    "methods": [self._cell(m.table.scores[i]) for m in self.scores.methods],
                }
            )
        return env.get_template("incidents.html").render(
            **common,
            title="Incidents",
            page="incidents",
            root="",
            rows=rows,
            methods=[m.report.name for m in self.scores.methods],
        )

    @staticmethod
    def _cell(score: IncidentScore) -> dict[str, str]:
        if score.valid:
            return {"mark": "valid", "title": "valid plan"}
        if score.error is None:
            return {"mark": "invalid", "title": "invalid"}
        return {"mark": score.error.category.value, "title": score.error.detail}

    # -- audit ------------------------------------------------------------------------------

    def audit(self, env: jinja2.Environment, common: dict[str, Any]) -> str:
        verdicts = list(self.verdicts.values())
        excluded = [v for v in verdicts if v.group.value != "main"]
        reasons: Counter[str] = Counter()
        for verdict in excluded:
            reasons.update({p.code for p in verdict.problems} or {"(no problem recorded)"})
        groups = sorted({v.group.value for v in verdicts})
        cells: dict[tuple[str, str], Counter[str]] = {}
        for verdict in verdicts:
            key = (verdict.service or "?", verdict.fault_type.value if verdict.fault_type else "?")
            cells.setdefault(key, Counter())[verdict.group.value] += 1
        in_dataset = {r.incident_id for r in self.records}
        return env.get_template("audit.html").render(
            **common,
            title="Audit",
            page="audit",
            root="",
            total=len(verdicts),
            from_trail=bool(verdicts) and all(v.group.value != "main" for v in verdicts),
            records=len(self.records),
            groups=groups,
            group_counts=Counter(v.group.value for v in verdicts),
            reasons=reasons.most_common(),
            cells=[
                {"service": s, "fault_type": f, "counts": c, "total": sum(c.values())}
                for (s, f), c in sorted(cells.items())
            ],
            excluded=[
                {
                    "id": v.incident_id,
                    "group": v.group.value,
                    "service": v.service,
                    "fault_type": v.fault_type.value if v.fault_type else None,
                    "intensity": v.intensity.value if v.intensity else None,
                    "problems": v.problems,
                    "slug": self.slugs.get(v.incident_id) if v.incident_id in in_dataset else None,
                }
                for v in sorted(excluded, key=lambda v: v.incident_id)
            ],
        )

    # -- trajectories -----------------------------------------------------------------------

    def agent_index(self, env: jinja2.Environment, common: dict[str, Any], agent: _Agent) -> str:
        rows = []
        for incident, (path, trajectory) in sorted(agent.cases.items()):
            final = trajectory.final_metrics
            extra = final.extra if final else {}
            rows.append(
                {
                    "id": incident,
                    "slug": self.slugs.get(incident, text.slug(incident)),
                    "file": path.name,
                    "steps": len(trajectory.steps),
                    "tool_calls": sum(len(s.tool_calls or []) for s in trajectory.steps),
                    "prompt_tokens": final.total_prompt_tokens if final else None,
                    "completion_tokens": final.total_completion_tokens if final else None,
                    "cost": final.total_cost_usd if final else None,
                    "latency": extra.get("latency_s"),
                    "outcome": extra.get("outcome"),
                    "failure": extra.get("failure"),
                }
            )
        return env.get_template("agent_index.html").render(
            **common,
            title=f"Trajectories: {agent.method}",
            page="trajectories",
            root="../../",
            agent=agent.method,
            rows=rows,
        )

    def trajectory(
        self,
        env: jinja2.Environment,
        *,
        common: dict[str, Any],
        agent: _Agent,
        incident: str,
        path: Path,
        trajectory: Trajectory,
    ) -> str:
        results: dict[str, str] = {}
        steps = []
        for step in trajectory.steps:
            observation = step.observation.results if step.observation else []
            for item in observation:
                if item.source_call_id is not None:
                    results[item.source_call_id] = item.content or ""
            steps.append(step)
        rendered = []
        for step in steps:
            calls = []
            for call in step.tool_calls or []:
                calls.append(
                    {
                        "name": call.function_name,
                        "id": call.tool_call_id,
                        "arguments": json.dumps(call.arguments, indent=1, ensure_ascii=False),
                        "result": _cut(results.get(call.tool_call_id)),
                    }
                )
            loose = [
                _cut(r.content)
                for r in (step.observation.results if step.observation else [])
                if r.source_call_id is None
            ]
            metrics = step.metrics
            rendered.append(
                {
                    "id": step.step_id,
                    "source": step.source,
                    "timestamp": step.timestamp,
                    "message": _cut(step.message),
                    "calls": calls,
                    "loose": loose,
                    "prompt_tokens": metrics.prompt_tokens if metrics else None,
                    "completion_tokens": metrics.completion_tokens if metrics else None,
                    "cost": metrics.cost_usd if metrics else None,
                    "latency": step.extra.get("latency_s"),
                    "retries": step.extra.get("retries"),
                }
            )
        final = trajectory.final_metrics
        index = self.row_of.get(incident)
        method_index = next((i for i, a in enumerate(self.agent_for) if a is agent), None)
        scored = None
        if index is not None and method_index is not None:
            scored = self._prediction(method_index, index)
        return env.get_template("trajectory.html").render(
            **common,
            title=f"{agent.method}: {incident}",
            page="trajectories",
            root="../../",
            agent=agent.method,
            incident=incident,
            incident_slug=self.slugs.get(incident),
            file=str(path),
            session=trajectory.session_id,
            model=trajectory.agent.model_name,
            agent_name=f"{trajectory.agent.name} {trajectory.agent.version}",
            steps=rendered,
            final=final,
            final_extra=final.extra if final else {},
            scored=scored,
        )

    # -- one incident -----------------------------------------------------------------------

    def _prediction(self, method_index: int, row: int) -> dict[str, Any]:
        method = self.scores.methods[method_index]
        record = self.records[row]
        parsed = method.file.predictions.get(record.incident_id)
        score_ = method.table.scores[row]
        error = score_.error
        return {
            "method": method.report.name,
            "covered": parsed is not None,
            "service": parsed.rca.service if parsed and parsed.rca else None,
            "fault_type": parsed.rca.fault_type if parsed and parsed.rca else None,
            "plan": None
            if parsed is None or parsed.plan is None
            else parsed.plan.model_dump(mode="json"),
            "plan_state": parsed.plan_state if parsed else "missing",
            "raw": None
            if parsed is None
            else {"operation": parsed.raw_operation, "target": parsed.raw_target},
            "score": score_,
            "category": None if error is None else error.category.value,
            "detail": None if error is None else error.detail,
            "placement": None
            if error is None or error.placement is None
            else error.placement.value,
        }

    def incident(
        self,
        env: jinja2.Environment,
        common: dict[str, Any],
        record: BenchmarkRecord,
        context: dict[str, Any],
    ) -> str:
        row = self.row_of[record.incident_id]
        predictions = [self._prediction(i, row) for i in range(len(self.scores.methods))]
        for i, item in enumerate(predictions):
            agent = self.agent_for[i]
            item["trajectory"] = (
                f"../trajectories/{agent.slug}/{self.slugs[record.incident_id]}.html"
                if agent is not None and record.incident_id in agent.cases
                else None
            )
        replays = [
            {
                "name": r.name,
                "outcome": r.outcomes[record.incident_id],
                "health": health.strip(r.outcomes[record.incident_id].health),
            }
            for r in self.replays
            if record.incident_id in r.outcomes
        ]
        verdict = self.verdicts.get(record.incident_id)
        return env.get_template("incident.html").render(
            **common,
            title=record.incident_id,
            page="incident",
            root="../",
            record=record,
            fault=record.fault.model_dump(mode="json"),
            verdict=verdict,
            gold=record.gold_plan.model_dump(mode="json"),
            valid=[p.model_dump(mode="json", exclude_none=True) for p in record.valid_plans],
            invalid=[
                {
                    "plan": p.plan.model_dump(mode="json"),
                    "mode": p.failure_mode.value,
                    "why": p.rationale,
                }
                for p in record.invalid_plans
            ],
            space=record.action_space.model_dump(mode="json"),
            predictions=predictions,
            replays=replays,
            **context,
        )


def _cut(content: str | None) -> dict[str, Any]:
    """A text for a page: whole if short, else a preview plus the rest (capped)."""
    content = content or ""
    whole = content[:MAX_RESULT_CHARS]
    return {
        "preview": whole[:PREVIEW_CHARS],
        "rest": whole[PREVIEW_CHARS:],
        "length": len(content),
        "cut": len(content) > MAX_RESULT_CHARS,
    }


def _incident_pages(
    dataset: Path,
    *,
    env: jinja2.Environment,
    common: dict[str, Any],
    pages: _Pages,
    writer: _Writer,
    progress: Progress | None,
) -> None:
    """One page per incident with its data files, streaming the logs case by case."""
    by_case = {(r.case_id or r.incident_id): r for r in pages.records}
    events = _whole(dataset / layout.EVENTS)
    metrics = _whole(dataset / layout.METRICS)
    traces = _whole(dataset / obs.TRACES)
    site = _Site(env, common, pages, writer, events, metrics, traces)
    seen: set[str] = set()
    logs_path = dataset / layout.LOGS
    stream = (
        obs.cases_of(logs_path, ["phase", "ts", "pod", "service", "line"])
        if logs_path.is_file()
        else iter(())
    )
    total = len(pages.records)
    for case, logs in stream:
        record = by_case.get(case)
        if record is None or record.incident_id in seen:
            continue
        seen.add(record.incident_id)
        _one_incident(record, case, logs, site)
        if progress is not None:
            progress("incidents", len(seen), total)
    empty = pa.table(
        {
            "phase": pa.array([], pa.string()),
            "ts": pa.array([], pa.float64()),
            "pod": pa.array([], pa.string()),
            "service": pa.array([], pa.string()),
            "line": pa.array([], pa.string()),
        }
    )
    for record in pages.records:  # incidents without a single log line still get a page
        if record.incident_id not in seen:
            seen.add(record.incident_id)
            case = record.case_id or record.incident_id
            _one_incident(record, case, empty, site)
            if progress is not None:
                progress("incidents", len(seen), total)


def _whole(path: Path) -> dict[str, pa.Table] | None:
    if not path.is_file():
        return None
    return dict(obs.cases_of(path))


@dataclass(frozen=True)
class _Site:
    """What every incident page is written with."""

    env: jinja2.Environment
    common: dict[str, Any]
    pages: _Pages
    writer: _Writer
    events: dict[str, pa.Table] | None
    metrics: dict[str, pa.Table] | None
    traces: dict[str, pa.Table] | None


def _one_incident(record: BenchmarkRecord, case: str, logs: pa.Table, site: _Site) -> None:
    env, common, pages, writer = site.env, site.common, site.pages, site.writer
    events, metrics, traces = site.events, site.metrics, site.traces
    slug = pages.slugs[record.incident_id]
    case_events = None if events is None else events.get(case)
    case_metrics = None if metrics is None else metrics.get(case)
    case_spans = None if traces is None else traces.get(case)
    windows = obs.phase_windows([case_events, case_metrics])
    first = pc.min(logs.column("ts")).as_py() if logs.num_rows else None
    t0 = min(
        windows.start if windows.phases else math.inf, first if first is not None else math.inf
    )
    t0 = 0.0 if math.isinf(t0) else float(t0)
    prepared = obs.prepare(logs, t0)
    obs.log_windows(prepared, t0, windows)
    width = obs.bucket_width(windows)
    buckets = max(1, int((windows.end - t0) // width) + 1)
    index, chunks = obs.log_chunks(prepared)
    for number, payload in enumerate(chunks, 1):
        writer.write(f"data/{slug}/logs-{number}.js", payload)
    series = {
        "width": width,
        "buckets": buckets,
        "volume": obs.log_volume(prepared, 0.0, width, buckets),
        "metrics": obs.moved_series(case_metrics, t0),
        "events": obs.event_rows(case_events, t0),
        "spans": obs.span_rows(case_spans, t0),
        "traces_table": traces is not None,
    }
    writer.write(f"data/{slug}/series.js", data_script("series", series))
    windows_rel = {
        p: [round(windows.phases[p][0] - t0, 3), round(windows.phases[p][1] - t0, 3)]
        for p in obs.PHASES
        if p in windows.phases
    }
    meta = {
        "slug": slug,
        "t0": t0,
        "windows": windows_rel,
        "logs": {
            "lines": index.lines,
            "chunks": index.chunks,
            "services": index.services,
            "pods": index.pods,
            "errors": index.errors,
            "cut": index.cut,
            "phases": list(obs.PHASES),
        },
    }
    context = {
        "meta": meta,
        "windows": windows_rel,
        "t0": t0,
        "log_index": index,
        "case": case,
    }
    writer.write(f"incidents/{slug}.html", pages.incident(env, common, record, context), page=True)
