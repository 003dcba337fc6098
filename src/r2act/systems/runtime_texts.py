"""Texts of the libraries a system's services are built on, which the engine prints too.

A Go gRPC client's ``err.Error()`` is grpc-go's status text around the transport's dial
error, itself Go's ``net`` package's; a system's renderers compose them into the chains
its clients log, and the engine prints the same fragments in probe failures and Chaos
Mesh's errors. Neither software is in the reference folder, so each carries an ``ext:``
source listed in ``docs/simulator.md`` ("Texts and their sources"). The engine's table
(``cluster/sim/texts.py``) joins these with every system's own texts and its own.
"""

from __future__ import annotations

from r2act.systems.texts import EXT, Text
from r2act.systems.texts import text as _t

RUNTIME_TEXTS: tuple[Text, ...] = (
    # --- grpc-go client errors and Go's net package ------------------------------------
    _t(
        "grpc.status",
        "rpc error: code = {} desc = {err}",
        EXT + "grpc/grpc-go:internal/status/status.go",
    ),
    _t(
        "grpc.conn_error",
        'connection error: desc = "transport: Error while dialing: {err}"',
        EXT + "grpc/grpc-go:internal/transport/transport.go",
    ),
    _t(
        "grpc.no_addresses",
        "name resolver error: produced zero addresses",
        EXT + "grpc/grpc-go:clientconn.go",
    ),
    _t("go.refused", "dial tcp {}: connect: connection refused", EXT + "golang/go:src/net/net.go"),
    _t("go.io_timeout", "dial tcp {}: i/o timeout", EXT + "golang/go:src/net/net.go"),
    _t("go.canceled", "context canceled", EXT + "golang/go:src/context/context.go"),
    _t("go.deadline", "context deadline exceeded", EXT + "golang/go:src/context/context.go"),
)
"""grpc-go's client errors and Go's dial and context errors."""
