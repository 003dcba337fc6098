"""The signal handlers r2act installs before anything slow: SIGTERM and SIGHUP unwind.

Shared by the start-up module (``r2act._startup``, which installs them before importing the
command line) and by the command line itself (``r2act.cli.main``, which installs them when
it is entered some other way); a module of its own, so neither imports the other.
"""

from __future__ import annotations

import signal
from types import FrameType

STOPPING = (signal.SIGTERM, signal.SIGHUP)
"""Signals whose default action kills the process silently; Ctrl-C (SIGINT) already raises
``KeyboardInterrupt`` under Python's own handler, which also lets ``asyncio.run`` cancel its
main task instead of being cut mid-loop."""


class Signalled(KeyboardInterrupt):
    """SIGTERM or SIGHUP arrived; unwinds like Ctrl-C, carrying which signal it was."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(f"interrupted by {signal.Signals(signum).name}")


def _raise(signum: int, _frame: FrameType | None) -> None:
    raise Signalled(signum)


def install_signal_handlers() -> None:
    """SIGTERM and SIGHUP raise ``Signalled`` from now on, unless ignored or already handled.

    Idempotent; a no-op outside the main thread (Python allows handlers only there)."""
    for signum in STOPPING:
        try:
            if signal.getsignal(signum) == signal.SIG_DFL:
                signal.signal(signum, _raise)
        except ValueError:  # not the main thread: an embedding program owns the signals
            return


def exit_code(stop: BaseException) -> int:
    """128+N for the signal behind ``stop`` (a plain ``KeyboardInterrupt`` is Ctrl-C)."""
    return 128 + int(getattr(stop, "signum", signal.SIGINT))
