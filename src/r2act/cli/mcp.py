"""``r2act mcp serve``: the case tools as an MCP server (stdio or streamable HTTP).

Thin: resolve the dataset, build the server from :mod:`r2act.agents.mcp_server`, run it.
On stdio, standard output belongs to the protocol, so everything said goes to stderr.
"""

from __future__ import annotations

import os
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from r2act.cli._choices import VIEW_NAMES
from r2act.cli._datasets import dataset_dir
from r2act.cli._verify import NO_VERIFY_HELP, verify_dataset
from r2act.cli.app import app, console_err
from r2act.errors import DataError

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

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


LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _host_header(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def transport_security(
    host: str, port: int, allow_hosts: list[str], allow_origins: list[str]
) -> TransportSecuritySettings:
    """DNS-rebinding protection for exactly this server: its own Host values and Origins.

    The SDK's default on loopback admits any local port's Origin; a page served by another
    local program could then drive the tools. Only this port's loopback names (and the bind
    address, and what ``--allow-host`` / ``--allow-origin`` add) are accepted.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    names = [*LOOPBACK, *([] if host in LOOPBACK or host in {"0.0.0.0", "::"} else [host])]
    hosts = [_host_header(n, port) for n in names] + list(allow_hosts)
    origins = [f"http://{h}" for h in hosts] + list(allow_origins)
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True, allowed_hosts=hosts, allowed_origins=origins
    )


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
    host: Annotated[
        str, typer.Option("--host", help="HTTP bind address (off loopback needs --token-env).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="HTTP port.")] = 8765,
    method: Annotated[
        str, typer.Option("--method", help="Method name written into predictions.")
    ] = "mcp-agent",
    token_env: Annotated[
        str | None,
        typer.Option(
            "--token-env",
            help="Environment variable holding a bearer token HTTP clients must send "
            "(Authorization: Bearer ...).",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="Extra accepted Host header, e.g. box.lan:8765."),
    ] = None,
    allow_origin: Annotated[
        list[str] | None,
        typer.Option("--allow-origin", help="Extra accepted Origin, e.g. https://ui.example."),
    ] = None,
    allow_no_token: Annotated[
        bool,
        typer.Option(
            "--allow-no-token", help="Serve off loopback without a token (anyone can connect)."
        ),
    ] = False,
    call_timeout: Annotated[
        float,
        typer.Option("--call-timeout", min=0.1, max=600.0, help="Seconds one tool call may take."),
    ] = 20.0,
    max_calls: Annotated[
        int | None,
        typer.Option(
            "--max-calls", min=1, help="Tool calls per case and session (default: no cap)."
        ),
    ] = None,
    no_verify: Annotated[bool, typer.Option("--no-verify", help=NO_VERIFY_HELP)] = False,
) -> None:
    """Serve list_cases, select_case, the observation tools and submit over MCP.

    Each client session has its own selected case, budget and submissions. Over HTTP only
    this server's own Host and Origin are accepted; off loopback a bearer token
    (--token-env) is required.

    Example: [bold]r2act mcp serve --dataset r2act-runs/smoke/dataset --out mcp.jsonl[/]
    """
    from r2act.agents.mcp_server import build_server

    if view not in VIEW_NAMES:
        raise DataError(f"--view {view!r}: use one of {', '.join(VIEW_NAMES)}")
    token = None
    if token_env is not None:
        token = os.environ.get(token_env)
        if not token:
            raise DataError(f"--token-env {token_env}: that variable is not set or empty")
    http = transport == Transport.HTTP
    if http and host not in LOOPBACK and token is None and not allow_no_token:
        raise DataError(
            f"--host {host}: serving off loopback without a token lets anyone who can reach "
            "the port use the tools; pass --token-env VAR (or --allow-no-token to accept that)"
        )
    directory = dataset_dir(dataset)
    verify_dataset(directory, verify=not no_verify, command="mcp serve", files_only=True)
    server = build_server(
        directory, view, out, method, token=token if http else None, call_timeout_s=call_timeout,
        max_calls=max_calls, issuer_url=f"http://{_host_header(host, port)}",
    )  # fmt: skip
    console_err.print(
        f"serving the cases of {directory} (view {view}) over "
        f"{transport.value}; submissions -> {out}",
        highlight=False,
    )
    if not http:
        server.run("stdio")
        return
    security = transport_security(host, port, allow_host or [], allow_origin or [])
    guard = f"bearer token from ${token_env} required" if token else "[yellow]no token[/]"
    console_err.print(
        f"http://{_host_header(host, port)}/mcp; {guard}; accepted Host: "
        f"{', '.join(security.allowed_hosts)}"
        + (
            " (clients reaching this machine by another name: add --allow-host NAME:PORT)"
            if host in {"0.0.0.0", "::"}
            else ""
        ),
        highlight=False,
    )
    server.run("streamable-http", host=host, port=port, transport_security=security)
