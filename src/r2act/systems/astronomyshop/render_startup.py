"""What each Astronomy Shop container logs when it starts, on its stdout and for the collector.

Each banner follows the service's start-up code (cited in ``texts``) and the chart's env
(every demo service listens on 8080, ``values.yaml`` ``*_PORT``). Lines outside a span
carry no trace context: log4j's MDC values print empty, Python's correlation fields
print ``0`` and ``False``. Off-the-shelf images (flagd, kafka, valkey, postgresql) and
the banners not yet reproduced (Next.js', Puma's, Envoy's own) print nothing here.
"""

from __future__ import annotations

from r2act.schema import LogLine
from r2act.systems.astronomyshop.logsinks import to_collector
from r2act.systems.astronomyshop.render_backend import AD_LOGGER, CART_CATEGORY
from r2act.systems.astronomyshop.render_collector import debug_lines
from r2act.systems.astronomyshop.render_formats import dotnet_console, log4j_line, python_root_line
from r2act.systems.astronomyshop.render_otlp import record_of
from r2act.systems.astronomyshop.render_speech import Said
from r2act.systems.astronomyshop.texts import T
from r2act.systems.render import PodIdentity, RelayIdentity

PORT = 8080
"""The port every demo service listens on (the chart's ``*_PORT`` values)."""
LIFETIME = "Microsoft.Hosting.Lifetime"
"""ASP.NET Core's hosting lifetime logger (Information in ``appsettings.json``)."""
STEP_S = 0.01
"""Seconds between two banner lines (a parameter)."""


def _own(app: str) -> list[Said]:
    """The service's own start-up log calls (what its code logs, wherever it goes)."""
    if app == "checkout":
        return [Said("INFO", T("as.co.listening")(f'"[::]:{PORT}"'))]
    if app == "product-catalog":
        return [
            Said("INFO", T("as.pc.db_ready")()),
            Said("INFO", T("as.pc.started")(PORT)),
        ]
    if app == "currency":
        return [Said("INFO", T("as.cu.listening")(f"0.0.0.0:{PORT}"))]
    if app == "shipping":
        return [
            Said("INFO", T("as.sh.otel")()),
            Said(
                "INFO",
                T("as.sh.running")(),
                (("name", "Str(ServerStartedSuccessfully)"), ("addr", f"Str(0.0.0.0:{PORT})")),
            ),
        ]
    if app == "payment":
        return [Said("INFO", T("as.pa.started")(f"0.0.0.0:{PORT}"))]
    if app == "recommendation":
        return [Said("INFO", T("as.re.started")(PORT), where=("recommendation_server.py", 172))]
    if app == "ad":
        return [Said("INFO", T("as.ad.starting")()), Said("INFO", T("as.ad.started")(PORT))]
    if app == "cart":
        return [Said("INFO", T("as.ca.redis_ok")())]
    return []


def _stdout(app: str, ts: float) -> list[str]:
    """The container's stdout at start-up, in its own format."""
    if app == "cart":
        lines = dotnet_console("Information", CART_CATEGORY, 0, T("as.ca.redis_ok")())
        lines += dotnet_console(
            "Information", LIFETIME, 14, T("as.aspnet.listening")(f"http://[::]:{PORT}")
        )
        for text in (
            T("as.aspnet.started")(),
            T("as.aspnet.env")("Production"),
            T("as.aspnet.root")("/app"),
        ):
            lines += dotnet_console("Information", LIFETIME, 0, text)
        return lines
    if app == "ad":
        return [log4j_line(ts, AD_LOGGER, said.message, ("", "", "")) for said in _own(app)]
    if app == "recommendation":
        record = ("INFO", "main", "recommendation_server.py", 172)
        return [
            python_root_line(ts, record, ("0", "0", False), app, said.message) for said in _own(app)
        ]
    if app == "accounting":
        return [T("as.ac.started")()]
    return []


def startup_lines(logger: PodIdentity, ts: float, out: list[LogLine]) -> None:
    """What the container prints on its own stdout when it starts."""
    pod, container, app = logger.pod, logger.container, logger.app
    for k, line in enumerate(_stdout(app, ts)):
        out.append(LogLine(ts + STEP_S * k, pod, container, app, line))


def collector_startup(
    source: PodIdentity, collector: RelayIdentity, ts: float, out: list[LogLine]
) -> None:
    """The collector's lines for the records a starting service exports."""
    if not to_collector(source.app):
        return
    for k, said in enumerate(_own(source.app)):
        record = record_of(source.app, source.pod, said, ("", ""))
        out.extend(debug_lines(ts + STEP_S * k, record, collector))
