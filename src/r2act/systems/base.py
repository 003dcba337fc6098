"""What a system under test must provide: the typed interface every ``systems/<name>/`` fills.

r2act is a framework for recovery benchmarks; an application is a plugin. Everything true of
one application alone (its pinned version, the upstream manifests it follows, its topology,
routes and load model, its texts and the renderers that print them, its per-service
runtime facts, its fault catalogue with per-cell evidence, where its ``deploy/`` files
are) is declared by one :class:`System` in its own package, and the
engine (``cluster/sim``), the collector and the offline stages read it from here, by the
name a campaign manifest gives (``system:``), through the registry in ``r2act.systems``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from r2act.schema import CHAOS_KIND, FaultType, Topology
from r2act.systems.flags import FeatureFlag, FlagStore
from r2act.systems.policy import RecoveryRules
from r2act.systems.render import LogRelay, Renderers
from r2act.systems.steps import ErrorStep
from r2act.systems.texts import Text
from r2act.systems.tracing import Tracing


@dataclass(frozen=True)
class Call:
    """One RPC (repeated ``count`` times) and the calls its handler makes in turn."""

    callee: str
    op: str
    count: int = 1
    fatal: bool = True
    """The handler fails the request when this call fails (False: it logs and goes on)."""
    children: tuple[Call, ...] = field(default=())
    deadline_ms: float | None = None
    """Per-call deadline the caller sets (context.WithTimeout), if any."""


@dataclass(frozen=True)
class FaultCell:
    """One (service, fault type) cell the shipped deployment can realise, and the evidence."""

    service: str
    fault_type: FaultType
    evidence: str
    """Where the per-cell realizability evidence is (a document and its section)."""


@dataclass(frozen=True)
class TraceStore:
    """Where a system's deployed spans can be read: a Jaeger query service in its namespace.

    A real cluster reaches it through the API server's service proxy at
    ``services/<service>:<port>/proxy<base_path>/api/...`` unless a manifest names a URL
    (``traces.store``)."""

    service: str
    """The query service's Kubernetes Service name."""
    port: int
    """Its HTTP query port."""
    base_path: str = ""
    """The query service's base path (Jaeger's ``query.base_path``), without a trailing
    slash; the API lives under it."""


@dataclass(frozen=True)
class System:
    """One application r2act can benchmark, as its own package declares it."""

    name: str
    """The name a campaign manifest uses (``system: <name>``) and incident ids start with."""
    title: str
    """The application's own name, for people (``Online Boutique``)."""
    version: str
    """The pinned release every simulated text and every deploy file follows."""
    topology: Topology
    """Deployments, call graph, routes and load model of that release."""
    upstream: tuple[str, ...]
    """The upstream files it follows (paths under ``shared/reference``)."""
    deploy_dir: str
    """Where its install files are, relative to the repository root."""
    cells: tuple[FaultCell, ...]
    """Its fault catalogue: every realizable (service, fault type) cell with its evidence."""
    think_s: float
    """Mean think time of its load generator's users (seconds a user waits between two
    tasks)."""
    users: int = 10
    """Concurrent users its shipped load generator runs (what its ``deploy/`` files set):
    the count a campaign manifest records when it names none, so the simulator and the
    provenance say what the deployed load generator does (Locust's own default is 10)."""
    requests_per_task: float = 1.0
    """Requests a user's task sends on average, as the load generator counts them (a task
    may send several before the user waits again); the route weights share them out."""
    redirects: Mapping[str, str] = field(default_factory=dict)
    """Route scope -> the route its success redirects to (a 302 the load generator's
    client follows): the entry point serves that request too, the load generator counts
    one."""
    route_calls: Mapping[str, tuple[Call, ...]] = field(default_factory=dict)
    """Entry-point route scope -> the calls its handler makes, in order (routes missing here
    call each of their services once, directly)."""
    service_ms: Mapping[str, float] = field(default_factory=dict)
    """Own processing time per call, in milliseconds on an unloaded pod, per service."""
    texts: tuple[Text, ...] = ()
    """Every log, event and error template of its own services, with upstream citations
    (the engine's texts, Kubernetes', Chaos Mesh's and the runtimes', are not here)."""
    renderers: Renderers = field(default_factory=Renderers)
    """What its services print per call, failed call, request, start and health check
    (``systems.render``; by default they print nothing)."""
    log_relay: LogRelay | None = None
    """The deployment whose pod prints lines its services send it (a node's log collector)
    and the renderers of those lines (``systems.render.LogRelay``); ``None``: every line
    is on its own pod's log."""
    load_stats: str | None = "stdout"
    """Where its load generator's console appears: ``"stdout"``, its own pod log (a
    headless Locust: its log lines and the stats table its stats printer writes every 2 s,
    ``cluster/sim/loadgen``), or ``None``: no log holds them (Locust with its web UI and
    without ``--print-stats`` starts no stats printer, main.py L516-L519, and serves its
    stats over HTTP only; what it logs goes wherever the system's ``log_relay`` says)."""
    images: Mapping[str, str] = field(default_factory=dict)
    """Per deployment, the image the kubelet's events and cAdvisor's series name, where it
    is not the topology's template image."""
    startup_s: Mapping[str, float] = field(default_factory=dict)
    """Per deployment, seconds from a new pod's creation until it is ready (its probes'
    initial delay and its start-up); the engine's default for the others."""
    probes: Mapping[str, tuple[float, float, float]] = field(default_factory=dict)
    """Per deployment with probes: (readiness period, liveness period, readiness initial
    delay) in seconds, from its manifests (the kubelet's cadence of probe events)."""
    no_shell: Mapping[str, str] = field(default_factory=dict)
    """Deployments whose image has no shell, with why: Chaos Mesh's daemon cannot rewrite
    their ``resolv.conf``, so DNSChaos fails to apply there."""
    path_ids: tuple[str, ...] = ()
    """The values a route's ``*`` takes (a catalogue's ids): the load generator spreads its
    requests over them, the health oracle probes the first."""
    probe_forms: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    """Per POST route scope, the form fields the health oracle sends (what its handler
    validates)."""
    probe_body: Literal["form", "json"] = "form"
    """How the health oracle encodes a POST probe's fields, as its handlers parse them:
    ``form`` (``application/x-www-form-urlencoded``) or ``json`` (one JSON object of the
    fields; a field whose value is a JSON object or array text is sent as that object)."""
    workload_label: str = "app"
    """The pod label whose value is the name of the workload a pod belongs to (its
    Deployment's selector): what a chaos object selects pods by and what a pod's lines and
    state are filed under."""
    error_backend: Callable[[str], str | None] = field(default=lambda _error: None)
    """The backend an entry point's ``request error`` text names, from its outermost wrap
    (``None`` when the text names none): how a method reads which call failed."""
    error_steps: tuple[ErrorStep, ...] = ()
    """The steps its handlers name when they wrap a failed call's error, each with the
    service it calls (``systems.steps``): how a log reader blames the innermost callee."""
    flags: Mapping[str, FeatureFlag] = field(default_factory=dict)
    """Its own feature-flag faults, by flag key, in its flag file's order
    (``systems.flags``): what each flag's code path does, which service it is a fault of
    and whether r2act can realise it. Empty for a system without a flag service."""
    flag_store: FlagStore | None = None
    """Where its flag service reads the flag file (``systems.flags.FlagStore``); ``None``
    for a system without flags."""
    trace_store: TraceStore | None = None
    """The Jaeger query service its ``deploy/`` files install (``TraceStore``); ``None``
    for a system with no trace store."""
    tracing: Tracing = field(default_factory=Tracing)
    """Its spans (``systems.tracing``): which deployments are instrumented and the shape of
    each span their instrumentation opens. Empty: the system emits no spans."""
    recovery_rules: RecoveryRules | None = None
    """Its recovery-policy rules (``systems.policy``): per policy, which plans recover each
    fault type on its deployment. ``None``: only a policy that carries its own rules (the
    paper's Table II) can label its incidents."""

    @property
    def fault_types(self) -> tuple[FaultType, ...]:
        """The fault types its catalogue realises, in the schema's order."""
        present = {c.fault_type for c in self.cells}
        return tuple(f for f in FaultType if f in present)

    @property
    def fault_families(self) -> Mapping[str, tuple[FaultType, ...]]:
        """Its fault types grouped by the object that injects them (``schema.CHAOS_KIND``)."""
        families: dict[str, list[FaultType]] = {}
        for fault in self.fault_types:
            families.setdefault(CHAOS_KIND[fault], []).append(fault)
        return {kind: tuple(faults) for kind, faults in families.items()}

    def services_for(self, fault_type: FaultType) -> tuple[str, ...]:
        """The services on which ``fault_type`` is realizable, in catalogue order."""
        return tuple(c.service for c in self.cells if c.fault_type == fault_type)

    def realizable_flags(self, service: str) -> tuple[FeatureFlag, ...]:
        """The realizable flags that are faults of ``service`` (its ``FeatureFlag.service``),
        in flag-file order: what a ``feature_flag`` cell on ``service`` draws from."""
        return tuple(f for f in self.flags.values() if f.realizable and f.service == service)

    def flag_services(self) -> tuple[str, ...]:
        """Services with at least one realizable flag, in flag-file order (each once): the
        ``feature_flag`` cells of the catalogue."""
        return tuple(dict.fromkeys(f.service for f in self.flags.values() if f.realizable))

    def flags_read_by(self, service: str) -> tuple[str, ...]:
        """Keys of every flag ``service``'s code reads (realizable or not), in file order:
        the flag scopes a ``rollback_config`` on it may name."""
        return tuple(k for k, f in self.flags.items() if service in f.readers)

    @property
    def services(self) -> tuple[str, ...]:
        """Every application service the topology deploys (the names the engine must not
        spell itself)."""
        return tuple(d.name for d in self.topology.deployments)
