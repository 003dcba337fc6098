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

from r2act._signals import STOPPING, exit_code, install_signal_handlers


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
