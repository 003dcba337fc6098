"""The run lock and the ledger: who owns an output directory, and what it left on a cluster.

Every command that changes a cluster (collect, replay, cleanup) holds an exclusive
``flock`` on ``OUT/.r2act/lock`` for as long as it runs. The kernel drops the lock when the
process dies, SIGKILL and power loss included, so a stale lock never blocks anyone; a live
one makes a second command on the same directory stop at once with one line.

``OUT/.r2act/ledger.jsonl`` is the write-ahead record of what the command did to the
cluster: a fault is written *before* it is sent, a plan *before* it is applied, and its
effect (what to undo) as soon as it is known; removals and undos are written after they
succeeded. Every line is fsynced. What the ledger still lists at the start of the next
command is what a stop left behind, whatever the stop was: the command refuses with one
line pointing to ``r2act cleanup``, and cleanup reverts exactly those entries (plan side
effects first, then faults).

``OUT/.r2act/owner.json`` marks the directory as r2act's and holds its run id, stamped on
every chaos object the run creates (label ``r2act.io/run``), so a removal can prove the
object is its own before deleting it.
"""

from __future__ import annotations

import fcntl
import json
import os
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from r2act.cluster.base import RUN_LABEL
from r2act.errors import DataError, SafetyError
from r2act.schema import ChaosRef, PlanEffect

STATE_DIR = ".r2act"
LOCK_FILE = "lock"
LEDGER_FILE = "ledger.jsonl"
OWNER_FILE = "owner.json"
LEGACY_MARKERS = ("raw", ".sim", "replay.jsonl", "settings.json", "dataset")
"""Entries that show an older r2act wrote a directory before it had ``.r2act/``."""


def state_dir(out: Path) -> Path:
    """``OUT/.r2act``."""
    return out / STATE_DIR


def _translate(error: OSError, path: Path) -> DataError:
    what = error.strerror or type(error).__name__
    return DataError(f"{path}: cannot use the output directory: {what} (choose another --out)")


def check_out_dir(out: Path) -> None:
    """Refuse a ``--out`` that is not a usable directory r2act may write into.

    A dangling or looping symlink, a file, and a non-empty directory r2act did not write
    are refused with one line; nothing is created or deleted.
    """
    if out.is_symlink() and not out.exists():
        try:
            out.resolve(strict=True)
        except RuntimeError:
            raise DataError(f"{out}: is a symlink loop (pass a real directory as --out)") from None
        except OSError:
            pass
        raise DataError(
            f"{out}: is a symlink to {os.readlink(out)}, which does not exist "
            "(create the target or pass another --out)"
        )
    try:
        if out.exists() and not out.is_dir():
            raise DataError(f"{out}: is a file, not a run directory (pass another --out)")
        if not out.is_dir():
            return
        entries = {p.name for p in out.iterdir()}
    except RuntimeError:
        raise DataError(f"{out}: is a symlink loop (pass a real directory as --out)") from None
    except OSError as error:
        raise _translate(error, out) from None
    if entries and not entries & {STATE_DIR, *LEGACY_MARKERS}:
        shown = ", ".join(sorted(entries)[:3])
        raise DataError(
            f"{out}: is not empty and was not written by r2act (holds {shown}); r2act never "
            "writes into it (pass an empty or new --out)"
        )


def holds_run(out: Path) -> bool:
    """Whether r2act ever wrote a run (collect or replay) into ``out``."""
    return out.is_dir() and any((out / name).exists() for name in (STATE_DIR, *LEGACY_MARKERS))


def run_id(out: Path, command: str) -> str:
    """The directory's run id; created (with the owner mark) on first use."""
    path = state_dir(out) / OWNER_FILE
    if path.is_file():
        try:
            found = json.loads(path.read_text(encoding="utf-8"))["run_id"]
        except (OSError, ValueError, KeyError, TypeError):
            raise DataError(
                f"{path}: unreadable r2act owner file (restore it, or pass another --out)"
            ) from None
        return str(found)
    new = uuid.uuid4().hex[:12]
    _write_atomic(path, json.dumps({"tool": "r2act", "run_id": new, "created_by": command}))
    return new


def _write_atomic(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with tmp.open("w", encoding="utf-8") as stream:
            stream.write(text + "\n")
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(tmp, path)
    except OSError as error:
        raise _translate(error, path) from None


@contextmanager
def run_lock(out: Path, command: str) -> Iterator[None]:
    """Hold the directory's exclusive lock for the duration; refuse if another holds it."""
    path = state_dir(out) / LOCK_FILE
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        handle = path.open("a+", encoding="utf-8")
    except OSError as error:
        raise _translate(error, path) from None
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.seek(0)
            holder = handle.read().strip() or "another r2act command"
            raise SafetyError(
                f"{out}: in use by {holder}; wait for it to finish or pass another --out"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"r2act {command} (pid {os.getpid()})")
        handle.flush()
        yield
    finally:
        handle.close()  # closing releases the flock


@dataclass
class Pending:
    """What the ledger still lists: the cluster changes a stopped command did not revert."""

    target: dict[str, Any] = field(default_factory=dict)
    command: str = ""
    run_id: str = ""
    faults: dict[tuple[str, str], ChaosRef] = field(default_factory=dict)
    effects: dict[str, PlanEffect] = field(default_factory=dict)
    intents: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Plans sent without a recorded effect (a stop between send and answer)."""
    preimages: dict[str, PlanEffect] = field(default_factory=dict)
    """For such a plan, its target as it was before the plan was sent (to restore)."""

    @property
    def empty(self) -> bool:
        """Nothing is left to revert."""
        return not (self.faults or self.effects or self.intents)

    def describe(self) -> str:
        """One short phrase: what is left."""
        parts = [f"fault {r.kind}/{r.name}" for r in self.faults.values()]
        parts += [f"plan side effects of {i}" for i in self.effects]
        parts += [f"a plan possibly applied for {i}" for i in self.intents if i not in self.effects]
        return ", ".join(parts)


def pending(out: Path) -> Pending:
    """Replay the ledger: every entry not yet reverted."""
    path = state_dir(out) / LEDGER_FILE
    found = Pending()
    if not path.is_file():
        return found
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as error:
        raise _translate(error, path) from None
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue  # a torn last line: power went while it was written
        _apply(found, entry)
    return found


def _apply(found: Pending, entry: Mapping[str, Any]) -> None:
    op = entry.get("op")
    if op == "begin":
        found.target = dict(entry.get("target") or {})
        found.command = str(entry.get("command", ""))
        found.run_id = str(entry.get("run_id", ""))
    elif op in ("fault", "fault_removed"):
        ref = ChaosRef.model_validate(entry["ref"])
        key = (ref.kind, ref.name)
        if op == "fault":
            found.faults[key] = ref
        else:
            found.faults.pop(key, None)
    elif op == "plan":
        incident = str(entry["incident"])
        found.intents[incident] = dict(entry.get("plan") or {})
        if entry.get("before") is not None:
            found.preimages[incident] = PlanEffect.model_validate(entry["before"])
    elif op == "effect":
        incident = str(entry["incident"])
        found.effects[incident] = PlanEffect.model_validate(entry["effect"])
        found.intents.pop(incident, None)
        found.preimages.pop(incident, None)
    elif op == "undone":
        found.effects.pop(str(entry["incident"]), None)
        found.intents.pop(str(entry["incident"]), None)
        found.preimages.pop(str(entry["incident"]), None)
    elif op == "clean":
        found.faults.clear()
        found.effects.clear()
        found.intents.clear()
        found.preimages.clear()


def refuse_if_pending(out: Path, cleanup_command: str) -> None:
    """SafetyError (one line) when a stopped command left something on the cluster."""
    left = pending(out)
    if not left.empty:
        by = f" by an interrupted `r2act {left.command}`" if left.command else ""
        raise SafetyError(
            f"{out}: the cluster still holds changes left{by}: {left.describe()} "
            f"(run `{cleanup_command}` first)"
        )


class Ledger:
    """Appends fsynced entries to ``OUT/.r2act/ledger.jsonl``."""

    def __init__(self, out: Path, command: str, target: Mapping[str, Any], run: str) -> None:
        self.path = state_dir(out) / LEDGER_FILE
        self.run_id = run
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._handle: IO[str] = self.path.open("a", encoding="utf-8")
        except OSError as error:
            raise _translate(error, self.path) from None
        self.write({"op": "begin", "command": command, "target": dict(target), "run_id": run})

    def write(self, entry: Mapping[str, Any]) -> None:
        """Append one entry and force it to disk."""
        try:
            self._handle.write(json.dumps(entry, sort_keys=True) + "\n")
            self._handle.flush()
            os.fsync(self._handle.fileno())
        except OSError as error:
            raise _translate(error, self.path) from None

    def fault(self, ref: ChaosRef) -> None:
        """A fault is about to be sent."""
        self.write({"op": "fault", "ref": ref.model_dump(mode="json")})

    def fault_removed(self, ref: ChaosRef) -> None:
        """A fault is gone (or was never created by this run)."""
        self.write({"op": "fault_removed", "ref": ref.model_dump(mode="json")})

    def plan(
        self, incident: str, plan: Mapping[str, Any], before: PlanEffect | None = None
    ) -> None:
        """A plan is about to be applied; ``before`` (``Cluster.preimage``) is what undoing
        it needs should the answer never be recorded."""
        entry: dict[str, Any] = {"op": "plan", "incident": incident, "plan": dict(plan)}
        if before is not None:
            entry["before"] = before.model_dump(mode="json")
        self.write(entry)

    def effect(self, incident: str, effect: PlanEffect) -> None:
        """What the plan changed (what cleanup must undo)."""
        self.write({"op": "effect", "incident": incident, "effect": effect.model_dump(mode="json")})

    def undone(self, incident: str) -> None:
        """The plan's side effects are reverted."""
        self.write({"op": "undone", "incident": incident})

    def clean(self) -> None:
        """Cleanup reverted everything listed so far."""
        self.write({"op": "clean"})

    def close(self) -> None:
        """Close the file; entries written stay."""
        self._handle.close()


def stamp(chaos: Mapping[str, Any], run: str) -> dict[str, Any]:
    """A copy of a rendered chaos object carrying the run label (sent, never stored)."""
    body: dict[str, Any] = json.loads(json.dumps(dict(chaos)))
    body.setdefault("metadata", {}).setdefault("labels", {})[RUN_LABEL] = run
    return body
