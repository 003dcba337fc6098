"""A signal during start-up gives the documented 128+N and one line, never -N or a traceback.

Start-up (typer, rich, pydantic, the verb modules, then the verb's own imports before collect
arms its cleanup guard) takes half a second to seconds. The child below is the real program,
entered exactly as the console script (``[project.scripts]``) or ``python -m r2act`` enters it;
an import hook only announces on stdout when a chosen slow module starts loading and holds
the import there for a moment, and the test then sends the signal from outside.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
SMOKE = REPO / "campaigns" / "smoke.yaml"

_CHILD = """
import importlib.abc, os, signal, sys, time

TRIGGER, ENTRY = sys.argv[1], sys.argv[2]
sys.argv = ["r2act", *sys.argv[3:]]
# started as from a terminal, even when the suite itself runs under nohup or in a shell's
# background job (which start it with SIGHUP or SIGINT ignored: the program rightly keeps
# an inherited ignored signal, so it would never arrive)
signal.signal(signal.SIGHUP, signal.SIG_DFL)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
signal.signal(signal.SIGINT, signal.default_int_handler)

class Hold(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == TRIGGER:
            sys.meta_path.remove(self)
            os.write(1, b"loading\\n")
            time.sleep(10)  # the parent's signal arrives here, inside the slow import
        return None

sys.meta_path.insert(0, Hold())
if ENTRY == "-m":
    import runpy
    runpy.run_module("r2act", run_name="__main__", alter_sys=True)
else:
    module, _, function = ENTRY.partition(":")
    sys.exit(getattr(__import__(module, fromlist=[function]), function)())
"""

_PROBE = """
import importlib.abc, json, signal, sys

module, _, function = sys.argv[1].partition(":")
sys.argv = ["r2act", "--version"]
seen = {}

class Probe(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        top = name.partition(".")[0]
        if top in {"typer", "click", "rich", "pydantic", "pandas", "yaml"} and not seen:
            seen.update(
                module=name,
                handlers=[
                    signal.getsignal(s) in (signal.SIG_DFL, None)
                    for s in (signal.SIGTERM, signal.SIGHUP)
                ],
            )
        return None

sys.meta_path.insert(0, Probe())
try:
    getattr(__import__(module, fromlist=[function]), function)()
except SystemExit:
    pass
print(json.dumps(seen))
"""


def _console_script() -> str:
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    return str(scripts["r2act"])


def test_the_console_script_installs_handlers_before_its_first_slow_import() -> None:
    child = subprocess.run(
        [sys.executable, "-c", _PROBE, _console_script()],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    seen = json.loads(child.stdout.strip().splitlines()[-1])
    assert seen["handlers"] == [False, False], (
        f"SIGTERM/SIGHUP still had their default (silent kill) handlers when {seen['module']} "
        "started loading"
    )


@pytest.mark.parametrize(
    ("trigger", "signum", "entry"),
    [
        ("typer", signal.SIGTERM, "script"),
        ("typer", signal.SIGHUP, "script"),
        ("typer", signal.SIGINT, "script"),
        ("rich.console", signal.SIGTERM, "-m"),
        ("pydantic", signal.SIGINT, "-m"),  # the verb modules' imports (the 2 s Ctrl-C)
        ("r2act.collector", signal.SIGHUP, "script"),  # inside collect, before its guard
        ("r2act.collector", signal.SIGINT, "-m"),
    ],
)
def test_a_signal_during_start_up_exits_128_plus_n_with_one_line(
    trigger: str, signum: signal.Signals, entry: str, tmp_path: Path
) -> None:
    argv = ["collect", str(SMOKE), "--out", str(tmp_path / "run"), "-q"]
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _CHILD,
            trigger,
            "-m" if entry == "-m" else _console_script(),
            *argv,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    try:
        assert process.stdout.readline() == "loading\n", "the child never reached the import"
        process.send_signal(signum)
        _out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert process.returncode == 128 + signum, (process.returncode, err)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and f"interrupted by {signum.name}" in lines[0], err
    assert not (tmp_path / "run" / "raw").exists()  # nothing was collected
