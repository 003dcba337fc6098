"""The deployment state recovery labels are computed from: deployments, limits, call graph.

A ``Topology`` is what an operator would read off the cluster before acting: which
deployments exist, their containers and resources, who calls whom, which HTTP routes of
the entry point depend on which service. Action spaces are derived from it.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from r2act.schema.quantities import memory_bytes


def split_address(value: str) -> tuple[str, str, str]:
    """(scheme prefix, host, port) of a ``*_ADDR`` value: ``host:port`` or a URL.

    ``cart:7070`` is ``("", "cart", "7070")``; ``http://email:8080`` is
    ``("http://", "email", "8080")`` (a client that speaks HTTP/1 names its callee by URL).
    The port is ``""`` when the value has none."""
    scheme, sep, rest = value.partition("://")
    prefix = scheme + sep if sep else ""
    rest = rest if sep else value
    hostport = rest.split("/", 1)[0]
    host, colon, port = hostport.rpartition(":")
    return (prefix, host, port) if colon else (prefix, hostport, "")


class ContainerSpec(BaseModel):
    """One container of a deployment's pod template."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Container name ('server' for most Online Boutique services).")
    image: str = Field(description="Image reference the template runs.")
    port: int | None = Field(default=None, description="Main container port, if any.")
    cpu_request: str = Field(description="CPU request, e.g. '100m'.")
    cpu_limit: str = Field(description="CPU limit, e.g. '200m'.")
    memory_request: str = Field(description="Memory request, e.g. '64Mi'.")
    memory_limit: str = Field(description="Memory limit, e.g. '128Mi'.")
    probe: str | None = Field(
        default=None, description="Readiness/liveness probe kind: 'grpc', 'http', 'tcp' or None."
    )
    working_set: str | None = Field(
        default=None,
        description=(
            "Peak working set of the container under the system's shipped load, e.g. '58Mi' "
            "(None: its memory request). A limit below it is OOM-killed under load."
        ),
    )


class DeploymentSpec(BaseModel):
    """One deployment and the service in front of it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Deployment name; also its 'app' label and service name.")
    language: str = Field(description="Implementation language; it decides the log format.")
    replicas: int = Field(default=1, ge=0, description="Desired replicas.")
    containers: list[ContainerSpec] = Field(description="Containers; the first is the main one.")
    service_port: int | None = Field(
        default=None, description="Port of the Kubernetes Service in front, if any."
    )
    calls: list[str] = Field(
        default_factory=list, description="Deployments this one calls (from its *_ADDR env)."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Dependency address variables.")

    @property
    def main(self) -> ContainerSpec:
        """The container faults and resource plans act on."""
        return self.containers[0]

    @property
    def endpoint(self) -> str | None:
        """'name:port' as callers address it, or None when nothing calls it over a Service."""
        return None if self.service_port is None else f"{self.name}:{self.service_port}"


class HttpRoute(BaseModel):
    """A route of the HTTP entry point and the services a request to it touches."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    method: str = Field(description="'GET' or 'POST'.")
    path: str = Field(description="Path pattern as Chaos Mesh HTTPChaos matches it, e.g. '/cart'.")
    weight: float = Field(ge=0, description="Share of load-generator traffic that hits it.")
    services: list[str] = Field(description="Services the request reaches, directly or not.")

    @property
    def scope(self) -> str:
        """The rule as a plan names it: 'METHOD /path'."""
        return f"{self.method} {self.path}"


class Topology(BaseModel):
    """A system's deployments, call graph and HTTP entry point."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system: str = Field(description="System name used in incident ids, e.g. 'onlineboutique'.")
    entrypoint: str = Field(description="Deployment that serves user HTTP traffic.")
    entrypoint_port: int = Field(description="Container port of the entry point's HTTP server.")
    health_path: str = Field(description="Path of the entry point's health endpoint.")
    load_generator: str | None = Field(default=None, description="Deployment that sends load.")
    load_connection_reuse: bool = Field(
        default=True,
        description=(
            "Whether the load generator keeps each user's connection to the entry point alive "
            "(pinned to one pod) or opens a new one per request (spread over the ready pods)."
        ),
    )
    deployments: list[DeploymentSpec] = Field(description="Every deployment of the system.")
    routes: list[HttpRoute] = Field(description="HTTP routes of the entry point.")

    def deployment(self, name: str) -> DeploymentSpec:
        """The deployment called ``name``; KeyError when there is none."""
        for deployment in self.deployments:
            if deployment.name == name:
                return deployment
        raise KeyError(name)

    @property
    def names(self) -> list[str]:
        """Deployment names in manifest order."""
        return [d.name for d in self.deployments]

    def callers(self, name: str) -> list[str]:
        """Deployments that call ``name`` directly."""
        return [d.name for d in self.deployments if name in d.calls]

    def dependencies(self, name: str) -> list[str]:
        """Deployments ``name`` calls directly."""
        return list(self.deployment(name).calls)

    def upstream(self, name: str) -> set[str]:
        """Every deployment from which a call chain reaches ``name``."""
        seen: set[str] = set()
        frontier = [name]
        while frontier:
            for caller in self.callers(frontier.pop()):
                if caller not in seen:
                    seen.add(caller)
                    frontier.append(caller)
        return seen

    def downstream(self, name: str) -> set[str]:
        """Every deployment reachable from ``name`` by call chains."""
        seen: set[str] = set()
        frontier = [name]
        while frontier:
            for callee in self.dependencies(frontier.pop()):
                if callee not in seen:
                    seen.add(callee)
                    frontier.append(callee)
        return seen

    def routes_of(self, service: str) -> list[HttpRoute]:
        """Entry-point routes whose requests reach ``service`` (the entry point serves all)."""
        if service == self.entrypoint:
            return list(self.routes)
        return [r for r in self.routes if service in r.services]

    def primary_caller(self, name: str) -> str | None:
        """The caller whose ``*_ADDR`` for ``name`` a configuration fault on it rewrites.

        The entry point when it calls ``name`` directly (every user request that reaches
        ``name`` passes through it, and its failures are the ones users see), otherwise
        ``name``'s only caller; None when neither exists (the load generator is the users,
        not a caller). Independent of the order of any list."""
        callers = {c for c in self.callers(name) if c != self.load_generator}
        if self.entrypoint in callers:
            return self.entrypoint
        return callers.pop() if len(callers) == 1 else None

    def address_variable(self, name: str) -> tuple[str, str, str] | None:
        """(caller, variable, 'name:port') of the primary caller's address of ``name``."""
        caller = self.primary_caller(name)
        if caller is None:
            return None
        return self.held_address(caller, name)

    def held_address(self, caller: str, name: str) -> tuple[str, str, str] | None:
        """(caller, variable, 'name:port') of ``caller``'s address of ``name``, if it holds one."""
        for variable, value in sorted(self.deployment(caller).env.items()):
            if split_address(value)[1] == name:
                return caller, variable, value
        return None

    def address_holders(self, name: str) -> list[str]:
        """Every deployment whose environment holds an address of ``name``, by name.

        These are the callers a dependency-address fault on ``name`` can sit in (the load
        generator is the users, not a caller)."""
        return sorted(
            d.name
            for d in self.deployments
            if d.name not in (name, self.load_generator) and self.held_address(d.name, name)
        )

    def working_set_bytes(self, name: str) -> int:
        """Peak working set of ``name``'s main container under load (its request if unset)."""
        main = self.deployment(name).main
        return memory_bytes(main.working_set or main.memory_request)
