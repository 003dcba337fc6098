"""CPU time of a whole process tree, for every bench script (issue 26 item 4).

The operating system's accounting misses work on a shared machine in two ways: wall time
counts other processes' load, and ``RUSAGE_CHILDREN`` (what ``/usr/bin/time`` and
``os.wait4`` report) counts only children that were waited for, with their own waited-for
descendants. The audit's pool starts its workers from a ``forkserver``, which nobody waits
for before the measured process exits, so their CPU never reaches the parent's account.

``TreeSampler`` therefore watches the tree itself: a thread reads, every ``interval``
seconds, the user + system time of every descendant of a process (psutil), keeping the
last figure seen per process (pid + start time, so a reused pid is a new process). A
process's own time never decreases, so the last sample is its total up to at most one
interval before it exited: the error is below ``interval`` x busy descendants, and it can
only under-count. The measured process's own time comes exactly from ``RUSAGE_SELF``.
"""

from __future__ import annotations

import resource
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass

import psutil

INTERVAL_S = 0.1


def self_cpu_s() -> float:
    """User + system CPU seconds of this process, all threads (exact)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def waited_children_cpu_s() -> float:
    """What the OS accounts to this process's waited-for children (misses forkserver workers)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class TreeSampler:
    """Samples the CPU time of every descendant of ``pid`` until ``stop``."""

    def __init__(self, pid: int, interval: float = INTERVAL_S) -> None:
        self._root = psutil.Process(pid)
        self._interval = interval
        self._seen: dict[tuple[int, float], float] = {}
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, name="cpu-tree", daemon=True)
        self._thread.start()

    def _sample(self) -> None:
        try:
            kids = self._root.children(recursive=True)
        except psutil.Error:
            return
        for kid in kids:
            try:
                with kid.oneshot():
                    times = kid.cpu_times()
                    key = (kid.pid, kid.create_time())
            except psutil.Error:  # gone between the listing and the read
                continue
            self._seen[key] = max(self._seen.get(key, 0.0), times.user + times.system)

    def _run(self) -> None:
        while not self._done.wait(self._interval):
            self._sample()

    def stop(self) -> TreeCPU:
        """Stop sampling; the descendants' CPU seconds and how many processes were seen."""
        self._sample()
        self._done.set()
        self._thread.join()
        return TreeCPU(sum(self._seen.values()), len(self._seen))


@dataclass(frozen=True)
class TreeCPU:
    """CPU seconds of a set of processes, as sampled."""

    seconds: float
    processes: int


@dataclass(frozen=True)
class StageRun:
    """A bench stage run in a child process: its output and the CPU of its whole tree."""

    stdout: str
    own_cpu_s: float
    """The child's own CPU (exact, from its ``RUSAGE_SELF`` reported on its last line)."""
    descendants_cpu_s: float
    """Its descendants' CPU (lanes, pool and forkserver workers), sampled."""
    descendants: int
    waited_cpu_s: float
    """What the OS accounted to the child's waited-for children (for comparison)."""

    @property
    def cpu_s(self) -> float:
        """CPU seconds of the whole tree."""
        return self.own_cpu_s + self.descendants_cpu_s


def run_stage(command: Sequence[str]) -> StageRun:
    """Run ``command`` (a bench stage printing JSON with ``own_cpu_s`` and ``waited_cpu_s``
    on its last line) and measure the CPU of its whole process tree."""
    child = subprocess.Popen(list(command), stdout=subprocess.PIPE, text=True)
    sampler = TreeSampler(child.pid)
    stdout, _ = child.communicate()
    tree = sampler.stop()
    if child.returncode != 0:
        raise subprocess.CalledProcessError(child.returncode, command, stdout)
    import json

    last = json.loads(stdout.strip().splitlines()[-1])
    return StageRun(
        stdout=stdout,
        own_cpu_s=float(last["own_cpu_s"]),
        descendants_cpu_s=tree.seconds,
        descendants=tree.processes,
        waited_cpu_s=float(last["waited_cpu_s"]),
    )


def stage_cpu() -> dict[str, float]:
    """The two figures a stage reports on its last line (see ``run_stage``)."""
    return {"own_cpu_s": self_cpu_s(), "waited_cpu_s": waited_children_cpu_s()}
