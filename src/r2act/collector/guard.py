"""The cleanup guard: whatever happens, the chaos object r2act created is removed.

An object is *armed* just before it is sent to the cluster (its reference is known from the
rendered object, so even a crash inside ``inject`` is covered) and *disarmed* once removal
succeeded. Removal runs from the lifecycle's ``finally`` and, as a last resort, when the
guard exits.

Every arm and disarm is also handed to ``on_arm``/``on_disarm`` (the run's ledger), so what
a SIGKILL leaves behind is on disk for the next command and for ``r2act cleanup``.

Signals: the first SIGINT, SIGTERM or SIGHUP (a closed terminal, a dropped SSH session)
raises ``Interrupted`` where the program is, which unwinds into those ``finally`` blocks.
Later signals never raise: a second Ctrl-C while the fault is being removed only says
"still cleaning up", so the cleanup finishes before the process exits. Only SIGKILL (or a
power loss) can leave an object behind; then the ledger makes the next command refuse to start
and points to ``r2act cleanup``.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any

from r2act.errors import ClusterError, ForeignObjectError
from r2act.schema import ChaosRef

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interrupted(KeyboardInterrupt):
    """Raised at the point where SIGINT, SIGTERM or SIGHUP arrived."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")

    @property
    def exit_code(self) -> int:
        """Conventional shell exit status for death by this signal."""
        return 128 + self.signum


class CleanupGuard:
    """Tracks armed chaos objects and turns signals into orderly cleanup."""

    def __init__(
        self,
        remove: Callable[[ChaosRef], None],
        notify: Callable[[str], None] = lambda _message: None,
        on_arm: Callable[[ChaosRef], None] = lambda _ref: None,
        on_disarm: Callable[[ChaosRef], None] = lambda _ref: None,
    ) -> None:
        self._remove = remove
        self._notify = notify
        self._on_arm = on_arm
        self._on_disarm = on_disarm
        self._armed: dict[tuple[str, str, str], ChaosRef] = {}
        self._previous: dict[int, Any] = {}
        self.signals = 0
        self.last_signum: int | None = None
        self._shielded = 0

    @property
    def interrupted(self) -> bool:
        """A signal arrived."""
        return self.signals > 0

    def arm(self, ref: ChaosRef) -> None:
        """Remember an object that must be removed before the process ends.

        Remembered before the ledger is written: a signal arriving during that (fsynced)
        write must still find the object armed, or the ledger would list a fault that no
        cleanup in this process ever clears."""
        previous = self._armed.get(_key(ref))
        self._armed[_key(ref)] = ref
        if previous != ref:
            self._on_arm(ref)

    def disarm(self, ref: ChaosRef) -> None:
        """Forget an object that is gone."""
        if self._armed.pop(_key(ref), None) is not None:
            self._on_disarm(ref)

    def is_armed(self, ref: ChaosRef) -> bool:
        """Whether ``ref`` still needs removing."""
        return _key(ref) in self._armed

    @contextmanager
    def shielded(self) -> Iterator[None]:
        """Signals arriving inside do not raise: the block (a cleanup) runs to its end."""
        self._shielded += 1
        try:
            yield
        finally:
            self._shielded -= 1

    def remove_all(self) -> None:
        """Remove every armed object (shielded); the lifecycle normally leaves none."""
        with self.shielded():
            for ref in list(self._armed.values()):
                try:
                    self._remove(ref)
                except ForeignObjectError as error:
                    self._notify(f"left {ref.kind}/{ref.name} alone: {error}")
                    self.disarm(ref)  # not ours: our object is not there
                except ClusterError as error:
                    self._notify(f"could not remove {ref.kind}/{ref.name}: {error}")
                else:
                    self.disarm(ref)

    def __enter__(self) -> CleanupGuard:
        if threading.current_thread() is threading.main_thread():
            for signum in SIGNALS:
                self._previous[signum] = signal.signal(signum, self._handle)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            self.remove_all()
        finally:
            for signum, previous in self._previous.items():
                # After an interrupt the process is on its way out: a late second Ctrl-C must
                # not kill it (exit status -2) between the cleanup and its orderly exit.
                signal.signal(signum, signal.SIG_IGN if self.signals else previous)
            self._previous.clear()

    def raise_if_interrupted(self) -> None:
        """Raise ``Interrupted`` for a signal that arrived while cleanup was shielded."""
        if self.last_signum is not None:
            raise Interrupted(self.last_signum)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        self.signals += 1
        self.last_signum = signum
        if self.signals == 1 and not self._shielded:
            raise Interrupted(signum)
        self._notify("still removing the injected fault; exiting as soon as it is gone")


def _key(ref: ChaosRef) -> tuple[str, str, str]:
    return (ref.kind, ref.namespace, ref.name)
