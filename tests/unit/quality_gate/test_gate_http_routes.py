"""On the simulator, a rule on any frontend route is an observable incident: the load
generator opens a connection per request, so the route's users fail and Locust's stats
show it, even on the least-used routes (weight 1 of 23)."""

from __future__ import annotations

from pathlib import Path

from gate_simruns import QUIET, collect_and_audit

from r2act.quality_gate import Group, gather, read_verdicts
from r2act.quality_gate.checks import effect_signals
from r2act.systems import ONLINE_BOUTIQUE


def test_every_route_a_campaign_plans_gives_an_observable_http_incident(tmp_path: Path) -> None:
    routes = len(ONLINE_BOUTIQUE.routes)
    manifest = {
        "name": "routes",
        "system": "onlineboutique",
        "target": {"kind": "sim", "seed": 3, "glitches": QUIET},
        "services": ["frontend"],
        "faults": [
            {"type": "http_error", "intensities": ["moderate"]},
            {"type": "http_abort", "intensities": ["severe"]},
        ],
        "repetitions": routes,  # the planner cycles the rule over the routes by repetition
        "phases": {"pre_s": 60, "during_s": 60, "post_s": 30, "recovery_timeout_s": 60},
        "seed": 5,
    }
    run = collect_and_audit(tmp_path, manifest)
    verdicts = read_verdicts(run)
    assert len(verdicts) == 2 * routes
    assert all(v.group == Group.MAIN for v in verdicts), [v.reasons for v in verdicts]
    scopes = set()
    for incident in sorted((run / "raw").iterdir()):
        evidence = gather(incident)
        pre, during = evidence.phases["pre"], evidence.phases["during"]
        # users' failures are the signal: the frontend logs no error for the route
        assert "user_failures" in effect_signals(pre, during), incident.name
        assert "error_lines" not in effect_signals(pre, during), incident.name
        assert evidence.annotation is not None
        scopes.add(evidence.annotation.incident.fault.parameters["scope"])
    assert scopes == {r.scope for r in ONLINE_BOUTIQUE.routes}
