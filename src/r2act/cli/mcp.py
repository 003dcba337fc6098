"""``r2act mcp serve``: the case tools as an MCP server (stdio or streamable HTTP).

Thin: resolve the dataset, build the server from :mod:`r2act.agents.mcp_server`, run it.
On stdio, standard output belongs to the protocol, so everything said goes to stderr.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from r2act.cli._choices import VIEW_NAMES
from r2act.cli._datasets import dataset_dir
from r2act.cli.app import app, console_err
from r2act.errors import DataError

mcp_app = typer.Typer(
    name="mcp",
    help=(
        "Serve a dataset's cases to MCP-capable agents.\n\n"
        "Example: [bold]r2act mcp serve --dataset r2act-runs/smoke/dataset --view full[/]"
    ),
    no_args_is_help=True,
)
app.add_typer(mcp_app, name="mcp")


class Transport(StrEnum):
    """How clients connect."""

    STDIO = "stdio"
    HTTP = "http"


@mcp_app.command()
def serve(  # noqa: PLR0917 - typer maps parameters to options
    dataset: Annotated[
        Path | None,
        typer.Option(
            "--dataset", help="Dataset directory (default: the newest ./r2act-runs/*/dataset)."
        ),
    ] = None,
    view: Annotated[
        str, typer.Option("--view", help=f"Observation view: {' | '.join(VIEW_NAMES)}.")
    ] = "full",
    out: Annotated[
        Path, typer.Option("--out", help="Predictions file submissions are appended to.")
    ] = Path("mcp-predictions.jsonl"),
    transport: Annotated[
        Transport, typer.Option("--transport", help="stdio, or http (streamable HTTP at /mcp).")
    ] = Transport.STDIO,
    host: Annotated[str, typer.Option("--host", help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP port.")] = 8765,
    method: Annotated[
        str, typer.Option("--method", help="Method name written into predictions.")
    ] = "mcp-agent",
) -> None:
    """Serve list_cases, select_case, the observation tools and submit over MCP.

    Example: [bold]r2act mcp serve --dataset r2act-runs/smoke/dataset --out mcp.jsonl[/]
    """
    from r2act.agents.cases import CaseSource
    from r2act.agents.mcp_server import build_server

    if view not in VIEW_NAMES:
        raise DataError(f"--view {view!r}: use one of {', '.join(VIEW_NAMES)}")
    source = CaseSource(dataset_dir(dataset), view)
    server = build_server(source, out, method)
    console_err.print(
        f"serving {len(source.ids())} case(s) of {source.root} (view {view}) over "
        f"{transport.value}; submissions -> {out}",
        highlight=False,
    )
    if transport == Transport.STDIO:
        server.run("stdio")
    else:
        server.run("streamable-http", host=host, port=port)
