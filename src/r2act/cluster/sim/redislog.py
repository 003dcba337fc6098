"""Redis' own lines (redis:alpine, default configuration), for any deployment running it.

Redis is off-the-shelf software a system deploys as its store, so the engine renders it by
the deployment's language (``redis``), as the server prints it: the start-up banner (the
child's ``C`` and the main process' ``M`` role letters, ``*`` notice and ``#`` warning
levels) and the RDB saves of its default save points.
"""

from __future__ import annotations

import random

from r2act.cluster.sim.texts import T
from r2act.schema import LogLine
from r2act.systems.logformats import redis_time
from r2act.systems.render import Kind, PodIdentity

LANGUAGE = "redis"
"""The ``DeploymentSpec.language`` of a Redis server."""
SAVE_S = 3600.0
"""redis:alpine runs with the default save points (3600 1, 300 100, 60 10000); at a demo
shop's write rate only the first fires: one RDB save an hour."""
SAVE_LINES = 5


def startup_lines(logger: PodIdentity, ts: float, out: list[LogLine]) -> None:
    """The banner of a starting redis-server with no config file."""
    banner = (
        ("C*", T("rd.banner")()),
        ("C#", T("rd.no_config")()),
        ("M*", T("rd.clock")()),
        ("M*", T("rd.mode")()),
        ("M*", T("rd.init")()),
        ("M*", T("rd.ready")()),
    )
    pod, container, app = logger.pod, logger.container, logger.app
    for i, (style, text) in enumerate(banner):
        t = ts + 0.01 * i
        role, level = style[0], style[1]
        out.append(LogLine(t, pod, container, app, f"1:{role} {redis_time(t)} {level} {text}"))


def save_lines(logger: PodIdentity) -> Kind:
    """(per second, lines, renderer) of the hourly background RDB save."""
    pod, container, app = logger.pod, logger.container, logger.app

    def save(ts: float, r: random.Random, out: list[LogLine]) -> None:
        pid = 20 + int(r.random() * 5000)
        texts = (
            T("rd.save")(1, 3600),
            T("rd.bgsave")(pid),
            T("rd.saved")(),
            T("rd.cow")(0, 0, 0),
            T("rd.bgsave_ok")(),
        )
        for i, text in enumerate(texts):
            t = ts + i * 0.05
            who = "C" if i in (2, 3) else "M"
            label = pid if who == "C" else 1
            out.append(LogLine(t, pod, container, app, f"{label}:{who} {redis_time(t)} * {text}"))

    return 1 / SAVE_S, SAVE_LINES, save
