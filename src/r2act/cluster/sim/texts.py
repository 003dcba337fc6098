"""Every text the simulator renders, each with the upstream line it reproduces: one table
joining every installed system's own texts (``System.texts``, e.g.
``systems/onlineboutique/texts.py``), the runtimes' a system's renderers share with the
engine (grpc-go, Go's net package: ``systems/runtime_texts.py``) and the engine's own
(Locust, the kubelet and controllers, Chaos Mesh, Redis), which are defined here.

A method trained on simulated telemetry learns its strings, so no string may be invented:
each message, error fragment, banner, kubelet and chaos-controller event the simulator
prints is a :class:`Text` here, naming the file (under ``shared/reference``) and line it
comes from. ``{}`` marks a value the simulator fills in; ``{err}`` marks a nested error
text that must itself be one of these templates (an error chain such as ``could not
retrieve <what>: rpc error: code = ...``). Texts of software that is not in the reference
folder (the kubelet, grpc-go, grpcio, grpc-dotnet, Go's net package, Redis) carry an
``ext:`` source: the repository path they come from, and they are listed in
``docs/simulator.md`` ("Texts and their sources"), which the conformance test checks them
against. Renderers take their fixed text from here (``TEXTS[key].fmt``), never from literals.
"""

from __future__ import annotations

import re

from r2act.systems import INSTALLED
from r2act.systems.runtime_texts import RUNTIME_TEXTS
from r2act.systems.texts import EXT, Text
from r2act.systems.texts import text as _t

__all__ = ["CM", "EXT", "LC", "LOCUST_HEADER", "TEXTS", "T", "Text"]

CM = "chaos-mesh-v2.8.3/"
LC = "locust-2.43.0/"


LOCUST_HEADER = (
    f"{'Type':<8} {'Name':<76} {'# reqs':>7} {'# fails':>12} |{'Avg':>7} {'Min':>7} "
    f"{'Max':>7}{'Med':>7} | {'req/s':>7} {'failures/s':>11}"
)
"""Locust's stats header without a TTY (stats.py L833-835, name column 80 - 8 + 4 wide)."""


_ENGINE: tuple[Text, ...] = (
    # --- redis (redis:alpine, default config) -----------------------------------------
    _t(
        "rd.banner",
        "oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo",
        EXT + "redis/redis:src/server.c",
    ),
    _t(
        "rd.no_config",
        "Warning: no config file specified, using the default config. In order to specify a "
        "config file use redis-server /path/to/redis.conf",
        EXT + "redis/redis:src/server.c",
    ),
    _t("rd.mode", "Running mode=standalone, port=6379.", EXT + "redis/redis:src/server.c"),
    _t("rd.init", "Server initialized", EXT + "redis/redis:src/server.c"),
    _t("rd.ready", "Ready to accept connections tcp", EXT + "redis/redis:src/server.c"),
    _t("rd.clock", "monotonic clock: POSIX clock_gettime", EXT + "redis/redis:src/server.c"),
    _t("rd.save", "{} changes in {} seconds. Saving...", EXT + "redis/redis:src/server.c"),
    _t("rd.bgsave", "Background saving started by pid {}", EXT + "redis/redis:src/rdb.c"),
    _t("rd.saved", "DB saved on disk", EXT + "redis/redis:src/rdb.c"),
    _t(
        "rd.cow",
        "Fork CoW for RDB: current {} MB, peak {} MB, average {} MB",
        EXT + "redis/redis:src/server.c",
    ),
    _t("rd.bgsave_ok", "Background saving terminated with success", EXT + "redis/redis:src/rdb.c"),
    # --- Locust 2.43.0 (the load generator) -------------------------------------------
    _t("lo.starting", "Starting Locust {}", LC + "locust/main.py", 180),
    _t("lo.no_limit", "No run time limit set, use CTRL+C to interrupt", LC + "locust/main.py", 573),
    _t("lo.sigterm", "Got SIGTERM signal", LC + "locust/main.py", 654),
    _t("lo.shutting_down", "Shutting down (exit code {})", LC + "locust/main.py", 632),
    _t(
        "lo.header",
        "Type{}Name{}# reqs{}# fails{}Avg{}Min{}Max{}Med{}req/s{}failures/s",
        LC + "locust/stats.py",
        835,
        pattern=re.escape(LOCUST_HEADER),
    ),
    _t(
        "lo.row",
        "{} |{} | {}",
        LC + "locust/stats.py",
        567,
        pattern=r"(?:GET      |POST     |         )[ A-Za-z0-9/_.-]{76} [ 0-9]{7} [ 0-9().%]{12} \|"
        r"[ 0-9]{7} [ 0-9]{7} [ 0-9]{7}[ 0-9]{7} \| [ 0-9.]{7} [ 0-9.]{11}",
    ),
    _t(
        "lo.separator",
        "{}|{}",
        LC + "locust/stats.py",
        837,
        pattern=r"-{8}\|-{76}\|-{7}\|-{13}\|-{7}\|-{7}\|-{7}\|-{7}\|-{8}\|-{11}",
    ),
    _t("lo.aggregated", "Aggregated", LC + "locust/stats.py", 259),
    _t("lo.error_report", "Error report", LC + "locust/stats.py", 885),
    _t("lo.error_header", "# occurrences", LC + "locust/stats.py", 886),
    _t(
        "lo.error_row",
        "{} {} {}: {}",
        LC + "locust/stats.py",
        890,
        pattern=r"[0-9]+ +(?:GET|POST) \S+: LocustBadStatusCode\(code=[0-9]+\) *",
    ),
    _t(
        "lo.error_separator",
        "{}|{}",
        LC + "locust/stats.py",
        887,
        pattern=r"-{18}\|-{141}",
    ),
    _t("lo.bad_status", "LocustBadStatusCode({})", LC + "locust/contrib/fasthttp.py", 693),
    # --- kubelet and controllers (kubernetes v1.32, not in the reference folder) -------
    _t(
        "k8s.scheduled",
        "Successfully assigned {}/{} to {}",
        EXT + "kubernetes/kubernetes:pkg/scheduler/schedule_one.go",
    ),
    _t(
        "k8s.pulled",
        'Container image "{}" already present on machine',
        EXT + "kubernetes/kubernetes:pkg/kubelet/images/image_manager.go",
    ),
    _t(
        "k8s.created",
        "Created container: {}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go",
    ),
    _t(
        "k8s.started",
        "Started container {}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go",
    ),
    _t(
        "k8s.stopping",
        "Stopping container {}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_container.go",
    ),
    _t(
        "k8s.definition_changed",
        "Container {} definition changed, will be restarted",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go",
    ),
    _t(
        "k8s.liveness_restart",
        "Container {} failed liveness probe, will be restarted",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go",
    ),
    _t(
        "k8s.backoff",
        "Back-off restarting failed container {} in pod {}_{}({})",
        EXT + "kubernetes/kubernetes:pkg/kubelet/kuberuntime/kuberuntime_manager.go",
    ),
    _t(
        "k8s.probe_failed",
        "{} probe failed: {err}",
        EXT + "kubernetes/kubernetes:pkg/kubelet/prober/prober.go",
    ),
    _t(
        "k8s.grpc_connect",
        'timeout: failed to connect service "{}" within 1s: {err}',
        EXT + "kubernetes/kubernetes:pkg/probe/grpc/grpc.go",
    ),
    _t(
        "k8s.grpc_rpc",
        "timeout: health rpc did not complete within 1s",
        EXT + "kubernetes/kubernetes:pkg/probe/grpc/grpc.go",
    ),
    _t(
        "k8s.http_get",
        'Get "http://{}/_healthz": {err}',
        EXT + "golang/go:src/net/http/client.go",
    ),
    _t(
        "k8s.http_timeout",
        "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
        EXT + "golang/go:src/net/http/client.go",
    ),
    _t(
        "k8s.tcp_refused",
        "dial tcp {}: connect: connection refused",
        EXT + "kubernetes/kubernetes:pkg/probe/tcp/tcp.go",
    ),
    _t(
        "k8s.scaled",
        "Scaled {} replica set {} from {} to {}",
        EXT + "kubernetes/kubernetes:pkg/controller/deployment/sync.go",
    ),
    _t(
        "k8s.rs_create",
        "Created pod: {}",
        EXT + "kubernetes/kubernetes:pkg/controller/controller_utils.go",
    ),
    _t(
        "k8s.rs_delete",
        "Deleted pod: {}",
        EXT + "kubernetes/kubernetes:pkg/controller/controller_utils.go",
    ),
    # --- Chaos Mesh controller-manager events -----------------------------------------
    _t(
        "cm.finalizer",
        "Finalizer has been inited",
        CM + "controllers/utils/recorder/finalizer.go",
        30,
    ),
    _t(
        "cm.started",
        "Experiment has started",
        CM + "controllers/utils/recorder/desiredphase.go",
        75,
    ),
    _t(
        "cm.finalizer_removed",
        "Finalizer has been removed",
        CM + "controllers/utils/recorder/finalizer.go",
        45,
    ),
    _t(
        "cm.deleted",
        "Experiment has been deleted",
        CM + "controllers/utils/recorder/desiredphase.go",
        30,
    ),
    _t(
        "cm.timeup",
        "Time up according to the duration",
        CM + "controllers/utils/recorder/desiredphase.go",
        45,
    ),
    _t(
        "cm.applied",
        "Successfully apply chaos for {}",
        CM + "controllers/utils/recorder/common.go",
        35,
    ),
    _t(
        "cm.recovered",
        "Successfully recover chaos for {}",
        CM + "controllers/utils/recorder/common.go",
        51,
    ),
    _t(
        "cm.updated",
        "Successfully update {} of resource",
        CM + "controllers/utils/recorder/controller.go",
        35,
    ),
    _t("cm.failed", "Failed to {}: {err}", CM + "controllers/utils/recorder/error.go", 37),
    # chaos-daemon's failing DNSChaos apply (h11-mech: lifecycle / chaos.apply_error)
    _t(
        "cm.daemon_error",
        "error code: {}, msg: {err}",
        EXT + "chaos-mesh/chaos-mesh:pkg/chaosdaemon/util/util.go",
    ),
    _t(
        "go.exec_not_found",
        'exec: "{}": executable file not found in $PATH',
        EXT + "golang/go:src/os/exec/lp_unix.go",
    ),
    _t(
        "busybox.cp_create",
        "cp: can't create '{}': Read-only file system",
        EXT + "mirror/busybox:libbb/copy_file.c",
    ),
    _t(
        "cm.no_target",
        "no target has been selected",
        CM + "controllers/common/records/controller.go",
        98,
    ),
)

_ALL: tuple[Text, ...] = (
    *(t for s in INSTALLED.values() for t in s.texts),
    *RUNTIME_TEXTS,
    *_ENGINE,
)
"""Every installed system's own texts, then the runtimes' they share with the engine
(``systems/runtime_texts.py``), then the engine's."""

TEXTS: dict[str, Text] = {t.key: t for t in _ALL}
"""Every template by key."""
if len(TEXTS) != len(_ALL):  # pragma: no cover - a duplicate key is a programming error
    raise RuntimeError("duplicate text keys in r2act.cluster.sim.texts")


def T(key: str) -> Text:  # noqa: N802 - reads as a constant lookup at call sites
    """The template ``key`` (a KeyError names a text that has no source)."""
    return TEXTS[key]
