"""The simulated cluster's persisted state: what a real cluster's etcd would remember.

A real cluster outlives the process that talks to it, so the simulator keeps its state on
disk (``<workspace>/.sim/<name>/state.json``) and every mutating call writes it
atomically. Only *history* is stored (pods with their lifetimes, chaos objects with their
creation and deletion times, discrete events, the clock); everything observable at a time
``t`` (readiness, restarts, telemetry) is derived from that history, which is what makes
the simulator deterministic and lets a new process pick up where a crashed one stopped.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from r2act.cluster.sim.seeding import k8s_suffix
from r2act.errors import DataError
from r2act.schema import KubeEvent, Topology, memory_bytes
from r2act.systems import DEFAULT_SYSTEM

STATE_VERSION = 1
EPOCH = 1_767_225_600.0
"""Where every simulated clock starts: 2026-01-01T00:00:00Z (fixed, so runs are comparable)."""
RETENTION_S = 3600.0
"""History older than this is dropped, as Kubernetes drops events after an hour."""
INITIAL_POD_AGE_S = 86_400.0
"""Pods of a fresh cluster were created a day before the clock starts: settled and ready."""

_MODEL = ConfigDict(extra="forbid")


class TemplateRec(BaseModel):
    """A deployment's pod template, reduced to what plans change."""

    model_config = _MODEL

    revision: int = Field(description="deployment.kubernetes.io/revision of this template.")
    memory_limit: int = Field(description="Main container memory limit, bytes.")
    annotations: dict[str, str] = Field(default_factory=dict, description="Template annotations.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Main container env over the manifest's (ConfigFault)."
    )
    memory_request: int | None = Field(
        default=None, description="Main container memory request, bytes (None: the manifest's)."
    )


class DeploymentRec(BaseModel):
    """One deployment: desired replicas, current template and the templates it replaced."""

    model_config = _MODEL

    name: str = Field(description="Deployment name (= app label).")
    replicas: int = Field(description="spec.replicas.")
    template: TemplateRec = Field(description="Current pod template.")
    history: list[TemplateRec] = Field(
        default_factory=list, description="Previous templates, oldest first (for rollback)."
    )
    annotations: dict[str, str] = Field(
        default_factory=dict, description="metadata.annotations (r2act.io/config-fault)."
    )


class PodRec(BaseModel):
    """One pod's lifetime; ``deleted_at`` may lie in the future (a rollout in progress)."""

    model_config = _MODEL

    name: str = Field(description="Pod name.")
    app: str = Field(description="app label.")
    revision: int = Field(description="Template revision the pod runs.")
    memory_limit: int = Field(description="Main container memory limit, bytes.")
    env: dict[str, str] = Field(
        default_factory=dict, description="Env its template set over the manifest's."
    )
    created_at: float = Field(description="Creation time.")
    ready_at: float = Field(description="When its containers first become ready.")
    deleted_at: float | None = Field(default=None, description="Termination time, if any.")

    def exists(self, t: float) -> bool:
        """The pod is in the API at ``t``."""
        return self.created_at <= t and (self.deleted_at is None or t < self.deleted_at)


class ChaosRec(BaseModel):
    """One Chaos Mesh object as created, with the simulator's decisions about it."""

    model_config = _MODEL

    kind: str = Field(description="Chaos Mesh kind.")
    name: str = Field(description="metadata.name.")
    namespace: str = Field(description="metadata.namespace.")
    labels: dict[str, str] = Field(default_factory=dict, description="metadata.labels.")
    annotations: dict[str, str] = Field(default_factory=dict, description="metadata.annotations.")
    spec: dict[str, JsonValue] = Field(description="The object's spec as sent.")
    created_at: float = Field(description="creationTimestamp.")
    applied_at: float = Field(description="When the records were (or failed to be) applied.")
    duration_s: float | None = Field(default=None, description="spec.duration in seconds.")
    pods: list[str] = Field(default_factory=list, description="Selected pods, fixed at creation.")
    containers: list[str] = Field(default_factory=list, description="Container names, if any.")
    injection_failed: bool = Field(default=False, description="Glitch: records never applied.")
    metric_gap: tuple[float, float] | None = Field(default=None, description="Glitch: scrape gap.")
    heal_s: float = Field(description="Seconds the system needs to heal once the fault stops.")
    deleted_at: float | None = Field(default=None, description="Deletion time.")
    removed_by: str | None = Field(default=None, description="'api' or the plan that removed it.")

    def effect_end(self) -> float | None:
        """When the fault stops acting (deletion or duration), before healing; None = running."""
        ends = [t for t in (self.deleted_at, self._expiry()) if t is not None]
        return min(ends) if ends else None

    def _expiry(self) -> float | None:
        return None if self.duration_s is None else self.created_at + self.duration_s

    def expired(self, t: float) -> bool:
        """The duration ran out by ``t`` (desiredPhase Stop, object still present)."""
        expiry = self._expiry()
        return expiry is not None and t >= expiry


class FailedLoad(BaseModel):
    """Failed user requests per second per route over one settled stretch of the past
    (``loadgen.settle``): what the load generator's cumulative counters integrate once the
    history that made them is pruned."""

    model_config = _MODEL

    start: float = Field(description="Start of the stretch.")
    end: float = Field(description="End of the stretch.")
    failed: dict[str, float] = Field(description="Route scope -> failed requests per second.")


class SimState(BaseModel):
    """Everything a simulated cluster remembers between calls and processes."""

    model_config = _MODEL

    version: int = Field(default=STATE_VERSION, description="State file format version.")
    name: str = Field(description="Simulated cluster name.")
    seed: int = Field(description="Seed of every random choice.")
    namespace: str = Field(description="The namespace the system runs in.")
    system: str = Field(
        default=DEFAULT_SYSTEM,
        description="The installed system it runs (``systems.INSTALLED``), so a reconnect "
        "rebuilds the same topology.",
    )
    now: float = Field(default=EPOCH, description="Virtual clock.")
    calls: int = Field(default=0, description="API calls so far (keys transient-error draws).")
    saved: str = Field(
        default="", description="Token of the last full save; a clock file must carry it."
    )
    pod_counter: int = Field(default=0, description="Pods created so far (keys pod names).")
    deployments: dict[str, DeploymentRec] = Field(description="Deployments by name.")
    pods: list[PodRec] = Field(description="Pods, including recently deleted ones.")
    chaos: list[ChaosRec] = Field(default_factory=list, description="Chaos objects ever created.")
    events: list[KubeEvent] = Field(default_factory=list, description="Discrete events so far.")
    failed_load: list[FailedLoad] = Field(
        default_factory=list,
        description="The users' failed requests per route over the settled past, stretch by "
        "stretch where any failed (``loadgen.settle``); kept past the history's pruning.",
    )
    failed_load_before: dict[str, float] = Field(
        default_factory=dict,
        description="Failed requests per route of the stretches folded out of "
        "``failed_load`` (older than the logs' retention).",
    )
    load_settled: float | None = Field(
        default=None,
        description="Until when ``failed_load`` is settled (None: nothing settled yet).",
    )

    def live_chaos(self, kind: str, name: str) -> ChaosRec | None:
        """The not-deleted object of that kind and name, if any."""
        for rec in self.chaos:
            if rec.kind == kind and rec.name == name and rec.deleted_at is None:
                return rec
        return None

    def pods_of(self, app: str, t: float) -> list[PodRec]:
        """Pods of ``app`` existing at ``t``, oldest first."""
        return [p for p in self.pods if p.app == app and p.exists(t)]

    def pods_of_apps(self, apps: tuple[str, ...], t: float) -> list[PodRec]:
        """Pods of any of ``apps`` existing at ``t``, oldest first."""
        return [p for p in self.pods if p.app in apps and p.exists(t)]

    def prune(self) -> None:
        """Forget history older than the retention horizon."""
        horizon = self.now - RETENTION_S
        self.events = [e for e in self.events if e.ts >= horizon]
        self.pods = [p for p in self.pods if p.deleted_at is None or p.deleted_at >= horizon]
        # A chaos object's restarts stay in the restart counters of the pods it hit, so it
        # is kept for as long as any of those pods exists (counters never go down).
        kept_pods = {p.name for p in self.pods}
        self.chaos = [
            c
            for c in self.chaos
            if c.deleted_at is None or c.deleted_at >= horizon or kept_pods.intersection(c.pods)
        ]


def replica_set_hash(seed: int, deployment: str, revision: int) -> str:
    """The pod-template-hash of a deployment revision (stable, Kubernetes-shaped)."""
    return k8s_suffix(seed, 10, "rs", deployment, revision)


def new_pod_name(state: SimState, deployment: str, revision: int) -> str:
    """``<deployment>-<template hash>-<5 chars>``, unique within the cluster's history."""
    state.pod_counter += 1
    suffix = k8s_suffix(state.seed, 5, "pod", deployment, state.pod_counter)
    return f"{deployment}-{replica_set_hash(state.seed, deployment, revision)}-{suffix}"


def fresh_state(
    topology: Topology, *, name: str, seed: int, namespace: str, now: float = EPOCH
) -> SimState:
    """A cluster with every deployment of ``topology`` at revision 1, settled and ready, its
    clock at ``now`` and its pods created ``INITIAL_POD_AGE_S`` before that.

    The pods' age is relative to the clock, not to ``EPOCH``: an incident that starts on a
    fresh cluster a year of virtual time after the epoch still finds pods a day old, so the
    load generator's cumulative counters (``# reqs`` since its container started) hold a
    day of requests, not a year of them."""
    state = SimState(
        name=name,
        seed=seed,
        namespace=namespace,
        system=topology.system,
        deployments={},
        pods=[],
        now=now,
        load_settled=now,  # the load generator's failures are counted from here on
    )
    born = now - INITIAL_POD_AGE_S
    for spec in topology.deployments:
        limit = memory_bytes(spec.main.memory_limit)
        state.deployments[spec.name] = DeploymentRec(
            name=spec.name,
            replicas=spec.replicas,
            template=TemplateRec(revision=1, memory_limit=limit),
        )
        for _ in range(spec.replicas):
            state.pods.append(
                PodRec(
                    name=new_pod_name(state, spec.name, 1),
                    app=spec.name,
                    revision=1,
                    memory_limit=limit,
                    created_at=born,
                    ready_at=born + 20.0,
                )
            )
    return state


def state_path(workspace: Path, name: str) -> Path:
    """Where the named simulated cluster keeps its state; always inside ``workspace``.

    The name may come from a manifest or a dataset: a path in it ('../x', '/tmp/x', '.')
    would move the state out of the run directory, so it is refused.
    """
    if not name or name != Path(name).name or name.startswith(".") or "\\" in name:
        raise DataError(
            f"simulated cluster name {name!r} is not a plain name (use letters, digits, '-', "
            "'_' and '.', no path)"
        )
    return Path(workspace) / ".sim" / name / "state.json"


def load_state(path: Path) -> SimState | None:
    """The saved state, or None when there is none; DataError when it is unreadable."""
    if not path.exists():
        return None
    try:
        state = SimState.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise DataError(
            f"{path}: simulated cluster state is unreadable ({exc.__class__.__name__}); "
            "delete the file to start a fresh simulated cluster"
        ) from exc
    if state.version != STATE_VERSION:
        raise DataError(
            f"{path}: state version {state.version} is not {STATE_VERSION} "
            "(delete the file to start a fresh simulated cluster)"
        )
    clock = _read_clock(clock_path(path))
    if clock is not None and clock[0] == state.saved and state.saved:
        state.now = max(state.now, clock[1])
    return state


def clock_path(state_file: Path) -> Path:
    """``clock.json`` beside the state: the clock's ticks since the last full save."""
    return state_file.with_name("clock.json")


def save_clock(state_file: Path, state: SimState) -> None:
    """Persist only the clock: a tick costs a tiny file, not the whole state.

    The file names the full save it extends (``state.saved``), so a clock file left from
    before a later save (a rewind, a reset) is never applied to the newer state."""
    path = clock_path(state_file)
    tmp = path.with_name(f".clock-{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps({"saved": state.saved, "now": state.now}), encoding="utf-8")
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def _read_clock(path: Path) -> tuple[str, float] | None:
    try:
        data = json.loads(path.read_bytes())
        return str(data["saved"]), float(data["now"])
    except (OSError, ValueError, KeyError, TypeError):
        return None


def save_state(path: Path, state: SimState) -> None:
    """Write atomically (temp file + rename), so a crash never leaves half a state."""
    path.parent.mkdir(parents=True, exist_ok=True)
    state.prune()
    state.saved = uuid.uuid4().hex[:12]
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".state-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(state.model_dump_json())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    clock_path(path).unlink(missing_ok=True)  # the state now holds the clock


class Checkpoint(BaseModel):
    """The state at the start of a unit of work (an incident, a replay's baseline)."""

    model_config = _MODEL

    key: str = Field(description="What started there (incident id, 'baseline').")
    state: SimState = Field(description="The cluster as it was then.")


def checkpoint_path(state_file: Path, scope: str) -> Path:
    """``.sim/<name>/checkpoint-<scope>.json`` beside the state."""
    return state_file.parent / f"checkpoint-{scope}.json"


def load_checkpoint(path: Path) -> Checkpoint | None:
    """The saved checkpoint, or None when there is none or it is unreadable (then unused)."""
    try:
        return Checkpoint.model_validate_json(path.read_bytes())
    except (OSError, ValueError):
        return None


def save_checkpoint(path: Path, checkpoint: Checkpoint) -> None:
    """Write atomically, like the state."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".checkpoint-", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(checkpoint.model_dump_json())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
