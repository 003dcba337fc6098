"""``r2act agent run``: an LLM (OpenAI-compatible endpoint) or a program over a dataset's cases.

Thin: check the options, build the solver from :mod:`r2act.agents`, run, print the run
summary. Exit 1 when infrastructure failures (rate limits, server errors, timeouts) left
cases without a prediction line; rerunning the same command resumes them.
"""

from __future__ import annotations

import json
import os
import shlex
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from r2act.cli._choices import VIEW_NAMES
from r2act.cli._datasets import dataset_dir
from r2act.cli._verify import NO_VERIFY_HELP, verify_dataset
from r2act.cli.app import app, console, console_err
from r2act.errors import DataError

if TYPE_CHECKING:
    from r2act.agents.llm import Price

agent_app = typer.Typer(
    name="agent",
    help=(
        "Evaluate an agent: an LLM behind an OpenAI-compatible endpoint, or any program.\n\n"
        "Example: [bold]r2act agent run --command 'my-agent {case_dir}' --out agent.jsonl[/]"
    ),
    no_args_is_help=True,
)
app.add_typer(agent_app, name="agent")


class Mode(StrEnum):
    """How the LLM sees a case."""

    PROMPT = "prompt"
    TOOLS = "tools"


DatasetOpt = Annotated[
    Path | None,
    typer.Option(
        "--dataset", help="Dataset directory (default: the newest ./r2act-runs/*/dataset)."
    ),
]
ViewOpt = Annotated[
    str, typer.Option("--view", help=f"Observation view: {' | '.join(VIEW_NAMES)}.")
]


def _prices(path: Path | None, model: str) -> Price | None:
    from r2act.agents.llm import Price

    if path is None:
        return None
    try:
        table: Any = json.loads(path.read_text("utf-8"))
        entry = table[model]
        return Price(
            input=float(entry["input"]),
            output=float(entry["output"]),
            cached_input=None
            if entry.get("cached_input") is None
            else float(entry["cached_input"]),
        )
    except OSError as error:
        raise DataError(f"{path}: cannot read the price table ({error.strerror})") from None
    except (ValueError, KeyError, TypeError) as error:
        raise DataError(
            f"{path}: no usable price for model {model!r} ({type(error).__name__}: {error}); "
            'write {"MODEL": {"input": USD_per_1M, "output": USD_per_1M, "cached_input": ...}}'
        ) from None


@agent_app.command()
def run(  # noqa: PLR0917 - typer maps parameters to options
    out: Annotated[Path, typer.Option("--out", help="Predictions file to write (JSON Lines).")],
    dataset: DatasetOpt = None,
    model: Annotated[
        str | None, typer.Option("--model", help="Model name at the endpoint.")
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", help="OpenAI-compatible base URL, e.g. http://localhost:8000/v1."
        ),
    ] = None,
    api_key_env: Annotated[
        str, typer.Option("--api-key-env", help="Environment variable holding the API key.")
    ] = "OPENAI_API_KEY",
    mode: Annotated[
        Mode,
        typer.Option(
            "--mode", help="prompt: one shot with an evidence digest; tools: function calling."
        ),
    ] = Mode.PROMPT,
    view: ViewOpt = "full",
    max_steps: Annotated[
        int, typer.Option("--max-steps", min=1, help="Model turns per case in tools mode.")
    ] = 12,
    concurrency: Annotated[
        int, typer.Option("--concurrency", min=1, max=64, help="Cases in parallel.")
    ] = 1,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only this case id (repeatable).")
    ] = None,
    command: Annotated[
        str | None,
        typer.Option(
            "--command", help="Run a program per case instead, e.g. 'my-agent {case_dir}'."
        ),
    ] = None,
    timeout: Annotated[
        float,
        typer.Option(
            "--timeout",
            min=0.1,
            help="Seconds per model call (per program run with --command: 10x).",
        ),
    ] = 60.0,
    attempts: Annotated[
        int,
        typer.Option("--attempts", min=1, max=20, help="Tries per model call on 429/5xx/timeouts."),
    ] = 4,
    backoff: Annotated[
        float, typer.Option("--backoff", min=0.0, help="First retry wait in seconds (doubles).")
    ] = 1.0,
    digest_tokens: Annotated[
        int, typer.Option("--digest-tokens", min=500, help="Evidence budget of prompt mode.")
    ] = 6000,
    prices: Annotated[
        Path | None,
        typer.Option(
            "--prices",
            help="JSON price table: MODEL -> input/output/cached_input USD per 1M tokens.",
        ),
    ] = None,
    method: Annotated[
        str | None,
        typer.Option(
            "--method",
            help="Method name written into predictions (default: llm:MODEL[MODE] or "
            "command:PROGRAM).",
        ),
    ] = None,
    stop_after: Annotated[
        int,
        typer.Option(
            "--stop-after",
            min=0,
            help="Stop after this many cases in a row fail on the endpoint (0: never).",
        ),
    ] = 3,
    no_verify: Annotated[bool, typer.Option("--no-verify", help=NO_VERIFY_HELP)] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No per-case lines.")] = False,
) -> None:
    """Solve every case of a dataset and write predictions, trajectories and a summary.

    Writes OUT, OUT_STEM.trajectories/CASE.json (ATIF) and OUT_STEM.summary.json. Cases that
    already have a line in OUT are skipped (resume).

    Example: [bold]r2act agent run --model M --base-url http://localhost:11434/v1 --out p.jsonl[/]
    """
    from r2act.agents.cases import CaseSource
    from r2act.agents.run import run_cases

    if view not in VIEW_NAMES:
        raise DataError(f"--view {view!r}: use one of {', '.join(VIEW_NAMES)}")
    if method is not None and not 1 <= len(method.strip()) <= 200:
        raise DataError("--method: give a name of 1 to 200 characters")
    if command is None:
        if not model or not base_url:
            raise DataError(
                "agent run: give --model and --base-url (or --command 'prog {case_dir}')"
            )
        check_base_url(base_url)
    directory = dataset_dir(dataset)
    verify_dataset(directory, verify=not no_verify, command="agent run")
    source = CaseSource(directory, view)
    solver: Any
    if command is not None:
        from r2act.agents.command import CommandAgent

        solver = CommandAgent(
            command, out.with_name(out.stem + ".cases"), timeout_s=timeout * 10, method=method
        )
    else:
        assert model is not None and base_url is not None
        from r2act.agents.llm import LlmAgent, LlmSettings

        key = os.environ.get(api_key_env)
        if key is None and api_key_env != "OPENAI_API_KEY":
            raise DataError(f"--api-key-env {api_key_env}: that variable is not set")
        settings = LlmSettings(
            model=model,
            base_url=base_url,
            api_key=key or "unused",
            mode=mode.value,
            max_steps=max_steps,
            timeout_s=timeout,
            attempts=attempts,
            backoff_s=backoff,
            digest_tokens=digest_tokens,
            price=_prices(prices, model),
            method_name=method,
        )
        solver = LlmAgent(settings)
    told: set[str] = set()

    def show(result: Any) -> None:
        status = "ok" if result.failure is None else result.failure
        cause = getattr(solver, "last_error", "")
        if result.failure is not None and result.prediction is None and status not in told:
            told.add(status)  # the first failure of each kind says where and why, once
            where = getattr(solver, "endpoint", None) or solver.method
            console_err.print(f"{result.case_id}: {status} ({where}: {cause})", highlight=False)
        elif not quiet:
            console_err.print(f"{result.case_id}: {status}", highlight=False)

    report = run_cases(
        source, solver, out, only=only, concurrency=concurrency, progress=show,
        stop_after=stop_after if command is None else None,
    )  # fmt: skip
    if report.stopped:
        console_err.print(f"[red]run stopped[/]: {report.stopped}", highlight=False)
    summary = report.summary
    failures = ", ".join(f"{k} {v}" for k, v in summary["failures"].items()) or "none"
    cost = summary["cost_usd"]
    console.print(
        f"{report.ran} case(s) run, {report.skipped} already done; {report.written} line(s) "
        f"written; failures: {failures}; tokens {summary['prompt_tokens']}+"
        f"{summary['completion_tokens']}{'' if cost is None else f'; cost ${cost:.4f}'}; "
        f"p50 {summary['seconds_per_case']['p50']} s per case",
        highlight=False,
    )
    score = shlex.join(["r2act", "evaluate", str(out), "--dataset", str(source.root)])
    console.print(
        f"predictions: {out}  (score them: {score})",
        highlight=False,
    )
    missing = len(source.select(only)) - len(_lines(out))
    if missing > 0:
        console_err.print(
            f"[yellow]{missing} case(s) have no prediction[/] (infrastructure failures); "
            "rerun the same command to resume them",
            highlight=False,
        )
        raise typer.Exit(1)


def check_base_url(base_url: str) -> None:
    """DataError (exit 2) for a base URL no request could go to, before any case runs."""
    from urllib.parse import urlsplit

    fix = "write it like http://localhost:8000/v1"
    try:
        parts = urlsplit(base_url)
        port = parts.port
    except ValueError as error:
        raise DataError(f"--base-url {base_url!r}: {error}; {fix}") from None
    if parts.scheme not in {"http", "https"}:
        raise DataError(f"--base-url {base_url!r}: the scheme must be http or https; {fix}")
    if not parts.hostname:
        raise DataError(f"--base-url {base_url!r}: no host; {fix}")
    if parts.netloc.endswith(":") and port is None:
        raise DataError(f"--base-url {base_url!r}: empty port after ':'; {fix}")
    if any(c.isspace() for c in base_url):
        raise DataError(f"--base-url {base_url!r}: contains whitespace; {fix}")


def _lines(out: Path) -> set[str]:
    from r2act.agents.run import finished_ids

    return finished_ids(out)


@agent_app.command()
def cases(
    dataset: DatasetOpt = None,
) -> None:
    """List the case ids of a dataset (what --only takes).

    Example: [bold]r2act agent cases --dataset r2act-runs/smoke/dataset[/]
    """
    from r2act.agents.cases import CaseSource

    for case_id in CaseSource(dataset_dir(dataset), "logs").ids():
        console.print(case_id, highlight=False)
