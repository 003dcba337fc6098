"""The ``r2act`` program's first lines: signal handlers before any slow import.

Start-up imports typer, rich, pydantic and the verb modules, which takes from half a second
to several seconds on a loaded machine. Python's own handlers leave SIGTERM and SIGHUP at
their defaults in that window, so a stop there killed the process with no message and no
exit code of ours (-15, -1), and a Ctrl-C printed an import traceback. This module imports
only ``signal`` and ``sys``: the console script and ``python -m r2act`` enter here, install
the handlers and only then import the command line, so a signal at any moment after these
lines gives the documented 128+N with one line on stderr.

The handlers stay for the whole run: a verb that needs its own (collect's cleanup guard,
the lanes) installs them over these and gives them back afterwards. A signal the parent
ignored (``nohup``) stays ignored. Importing ``r2act.cli`` as a library installs nothing.
"""

from __future__ import annotations

import signal
import sys
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


def main() -> None:
    """Entry point of the ``r2act`` console script and of ``python -m r2act``."""
    install_signal_handlers()
    try:
        from r2act.cli import main as cli_main
    except KeyboardInterrupt as stop:  # stopped while the command line itself loads
        code = exit_code(stop)
        for signum in (signal.SIGINT, *STOPPING):
            signal.signal(signum, signal.SIG_IGN)  # a second signal must not cut the exit
        sys.stderr.write(
            f"interrupted by {signal.Signals(code - 128).name} during start-up; nothing was done\n"
        )
        sys.exit(code)
    cli_main()
