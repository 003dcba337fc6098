"""Feature-flag faults, as a vocabulary an engine can simulate without naming a service.

Some applications ship their own faults: a flag in a flag service (flagd, LaunchDarkly,
...) that a service's code reads on every call and that changes what the call does. Such
a fault is not a Chaos Mesh object and not a change to a pod template: it lives in the
flag service's configuration, so restarting the service that reads it does not clear it
(the new pod reads the same flag), and only reverting the flag does. This module says,
for one flag, what its code path does (a :class:`FlagEffect` with its parameters), which
service reads it, which variant each intensity turns on, and whether r2act can realise it
on its deployment, with the upstream lines that show it. A system lists its flags per
application version (``systems/<name>/flags.py``); the engine reads only this vocabulary.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from r2act.schema import Intensity

FlagValue = bool | int | float
"""A variant's value as the flag file states it (flagd: boolean, number)."""


class FlagEffect(StrEnum):
    """What a flag's code path does to the service that reads it, in engine terms."""

    CALL_ERRORS = "call_errors"
    """A share of one operation's calls fail with an error (``operation``, ``share``,
    ``error``)."""
    DIAL_FAILURE = "dial_failure"
    """The reader dials a wrong address for one callee (``callee``, ``operation``): the
    call fails in the reader and never reaches the callee."""
    CPU_BURN = "cpu_burn"
    """Busy threads in the reader's process (``share`` unused; the thread count is in the
    verdict)."""
    GC_PAUSES = "gc_pauses"
    """Forced full garbage collections on the reader's calls (``operation``)."""
    MEMORY_LEAK = "memory_leak"
    """The working set grows with each call of ``operation``, by the variant's value as a
    multiplier, until the memory limit kills the container."""
    UNREADY = "unready"
    """The reader's readiness check fails: the kubelet takes it out of its Service."""
    REQUEST_DELAY = "request_delay"
    """A proxy holds one route's requests for the variant's value in milliseconds."""
    LOAD_SURGE = "load_surge"
    """The load generator multiplies one route's requests by the variant's value."""
    QUEUE_FLOOD = "queue_flood"
    """A producer sends the variant's value of extra copies of each message and the
    consumer slows down: consumer lag grows."""
    NONE = "none"
    """Nothing an operator's telemetry would call a failure (a wrong answer, say)."""


@dataclass(frozen=True)
class FlagStore:
    """Where a system's flag service reads its flags on the shipped deployment: the
    ConfigMap and data key holding the flag file, and the Deployment whose restart makes
    the service read it again. A FlagFault names all three, so the injector assumes none."""

    config_map: str
    key: str
    deployment: str


@dataclass(frozen=True)
class Source:
    """One upstream line a flag's claim rests on, and the code that line must contain.

    ``code`` is a fragment of the line as it is in the pinned source (the flag key, the
    call, the constant), so a test can read the file and fail when the line moved."""

    path: str
    """Path under ``shared/reference`` (e.g. ``opentelemetry-demo-2.2.0/src/ad/...``)."""
    line: int
    code: str


@dataclass(frozen=True)
class FlagStatus:
    """The error a flag's failed call ends in, as the reader's code sets it: what a caller's
    client receives (and wraps its own way), so a caller's line can print the flag's own
    message where a real caller prints it.

    ``via`` names the service that answered with this status when the reader's code makes
    a call fail that it then fails on itself (a cache-miss branch calling a look-up with a
    wrong argument): the reader fails as it fails on any error of that call. ``None``: the
    reader's own handler answers with it."""

    code: str
    """The status code by grpc-go's name (``Internal``, ``Unavailable``, ``Unknown``), or an
    HTTP status (``429``) for an HTTP call."""
    message: str
    """The status message the code path sets (empty when it sets none)."""
    via: str | None = None


FLAG_ERROR = "flag_error"
"""The engine's failure kind of a call a flag made fail; :func:`flag_error_kind` adds the
flag's key, by which a system's renderers find the flag's :class:`FlagStatus`."""


def flag_error_kind(key: str) -> str:
    """The failure kind a flag's failed calls carry (``flag_error:<key>``)."""
    return f"{FLAG_ERROR}:{key}"


def flag_of_kind(kind: str) -> str | None:
    """The flag key a failure kind carries (None: the failure is not a flag's); the kind may
    be the root of an ``upstream|<kind>|<service>`` kind's parts."""
    head, _, key = kind.partition(":")
    return key if head == FLAG_ERROR and key else None


@dataclass(frozen=True)
class FlagVariant:
    """One variant of a flag, by the name and value the flag file gives it."""

    name: str
    value: FlagValue


@dataclass(frozen=True)
class FeatureFlag:
    """One feature flag of one application version: what it does and whether r2act can use it.

    The labelled root-cause service is ``service``, the service whose code path reads the
    flag and changes behaviour: a label is a place a method can point at, and the flag's
    reader is where the wrong behaviour is (for a dial to a wrong address, the caller, as
    its callee is never reached). ``readers`` lists every service whose code reads the key,
    so a flag read in two places (producer and consumer) is still one fault."""

    key: str
    service: str
    readers: tuple[str, ...]
    variants: tuple[FlagVariant, ...]
    """Every variant of the flag file, in the file's order."""
    off: str
    """The default variant (the healthy state a revert restores)."""
    intensities: tuple[tuple[Intensity, str], ...]
    """Which variant each intensity turns on; a flag without graded variants turns its one
    on-variant for both."""
    effect: FlagEffect
    realizable: bool
    """Whether the fault can be injected on r2act's deployment and its signal reaches
    what r2act collects (cAdvisor, kube-state-metrics, logs, the load generator's stats)."""
    user_visible: bool
    """Whether users' requests fail or slow down (the load generator's stats show it); when
    not, the health oracle cannot judge a recovery and replay reports ``no_effect``."""
    verdict: str
    """One sentence: why (not) realizable, from the flag's code path."""
    sources: tuple[Source, ...]
    evidence: str
    """Where the per-flag evidence is (a document and its section)."""
    operation: str | None = None
    """The operation (RPC, HTTP route, task) whose calls the effect changes."""
    callee: str | None = None
    """For a dial failure, the service whose address the reader gets wrong."""
    share: float | None = None
    """Share of ``operation``'s calls the effect hits, when the code fixes it; ``None``
    when the variant's value is the share (a probability flag) or the effect hits every
    call."""
    error: str | None = None
    """The kind of error a failed call returns (a gRPC status, an exception's text)."""
    status: FlagStatus | None = None
    """For a CALL_ERRORS flag, the status its failed calls answer with (code and message),
    which callers' lines print; None when the flag fails no call."""

    def __post_init__(self) -> None:
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise ValueError(f"flag {self.key}: duplicate variant names {names}; fix: one each")
        if self.off not in names:
            raise ValueError(f"flag {self.key}: default {self.off!r} is not a variant {names}")
        for intensity, name in self.intensities:
            if name not in names or name == self.off:
                raise ValueError(
                    f"flag {self.key}: intensity {intensity} names {name!r}, "
                    f"not an on-variant of {names}; fix: name one of them"
                )
        if {i for i, _ in self.intensities} != set(Intensity):
            raise ValueError(f"flag {self.key}: give a variant for every intensity")
        if not self.sources:
            raise ValueError(f"flag {self.key}: cite at least one upstream line")

    def variant(self, intensity: Intensity) -> FlagVariant:
        """The variant ``intensity`` turns on (its value is the effect's magnitude)."""
        name = dict(self.intensities)[intensity]
        return next(v for v in self.variants if v.name == name)

    @property
    def default(self) -> FlagVariant:
        """The default variant, which reverting the flag restores."""
        return next(v for v in self.variants if v.name == self.off)
