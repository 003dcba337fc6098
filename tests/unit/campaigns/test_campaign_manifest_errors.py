"""A malformed manifest stops with one line naming file, line and field, and exit code 2."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from r2act.campaigns import load_manifest
from r2act.cli import main
from r2act.errors import ManifestError

from .conftest import BASE_MANIFEST

# (case, old text, new text, expected line, expected field, a word the message must contain)
CASES = [
    ("invalid_yaml", "  seed: 1", "  seed: [1", 6, "(yaml)", "expected"),
    ("unknown_key", "  seed: 1", "  sed: 1", 5, "target.sed", "did you mean 'seed'"),
    ("unknown_top_key", "repetitions: 2", "repetition: 2", 13, "repetition", "'repetitions'"),
    ("wrong_type", "  seed: 1", "  seed: one", 5, "target.seed", "whole number"),
    ("quoted_number", "  pre_s: 10", '  pre_s: "10"', 15, "phases.pre_s", "whole number"),
    ("unknown_fault", "type: cpu_saturation", "type: cpu_hog", 8, "faults[0].type", "dns_random"),
    ("negative_duration", "  pre_s: 10", "  pre_s: -5", 15, "phases.pre_s", "greater than 0"),
    ("zero_duration", "  during_s: 20", "  during_s: 0", 16, "phases.during_s", "greater than"),
    ("empty_services", "[cartservice, paymentservice]", "[]", 6, "services", "empty"),
    ("duplicate_service", "paymentservice]", "cartservice]", 6, "services[1]", "twice"),
    ("unknown_service", "paymentservice]", "nosuchservice]", 6, "services[1]", "unknown service"),
    ("load_generator", "paymentservice]", "loadgenerator]", 6, "services[1]", "load generator"),
    ("unknown_target_kind", "kind: sim", "kind: aws", 4, "target.kind", "sim, kubernetes"),
    (
        "kubernetes_without_namespace",
        "  kind: sim\n  seed: 1",
        "  kind: kubernetes\n  context: kind-r2act",
        3,
        "target.namespace",
        "missing",
    ),
    ("bad_parameter", "{load: 90}", "{load: 190}", 10, "faults[0].parameters.severe.load", "100"),
    ("bad_intensity", "severe: {", "sever: {", 10, "faults[0].parameters.sever", "severe"),
    ("unknown_system", "system: onlineboutique", "system: sockshop", 2, "system", "unknown"),
    ("bad_name", "name: tiny", "name: Tiny_One", 1, "name", "lowercase"),
    (
        "duplicate_key",
        "repetitions: 2",
        "repetitions: 2\nrepetitions: 3",
        14,
        "repetitions",
        "twice",
    ),
]


def _malformed(old: str, new: str) -> str:
    assert old in BASE_MANIFEST, old
    return BASE_MANIFEST.replace(old, new, 1)


def test_base_manifest_is_valid(write_manifest: Callable[[str], Path]) -> None:
    manifest = load_manifest(write_manifest(BASE_MANIFEST))
    assert manifest.name == "tiny"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_loader_error_names_file_line_and_field(
    write_manifest: Callable[[str], Path], case: tuple[str, str, str, int, str, str]
) -> None:
    _, old, new, line, field, word = case
    path = write_manifest(_malformed(old, new))
    with pytest.raises(ManifestError) as raised:
        load_manifest(path)
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"{path}:{line}: {field}: "), message
    assert word in message
    assert re.search(r"\(.+\)$", message), f"no fix in parentheses: {message}"


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_cli_validate_exits_2_with_one_line(
    write_manifest: Callable[[str], Path],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    case: tuple[str, str, str, int, str, str],
) -> None:
    _, old, new, line, field, _ = case
    path = write_manifest(_malformed(old, new))
    monkeypatch.setattr(sys, "argv", ["r2act", "campaign", "validate", str(path)])
    with pytest.raises(SystemExit) as exited:
        main()
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [text for text in err.splitlines() if text.strip()]
    assert len(lines) == 1, err
    assert f"{path}:{line}: {field}: " in lines[0]


def test_missing_file_is_a_manifest_error(tmp_path: Path) -> None:
    with pytest.raises(ManifestError, match=r"nope\.yaml:0: \(file\): no such file"):
        load_manifest(tmp_path / "nope.yaml")


def test_non_mapping_manifest_is_rejected(write_manifest: Callable[[str], Path]) -> None:
    with pytest.raises(ManifestError, match=r":1: \(manifest\): expected a mapping"):
        load_manifest(write_manifest("- just\n- a list\n"))


def test_cell_for_unplanned_fault_points_at_the_cell(write_manifest: Callable[[str], Path]) -> None:
    text = (
        BASE_MANIFEST + "cells:\n  - {service: cartservice, fault: pod_failure, repetitions: 1}\n"
    )
    with pytest.raises(ManifestError) as raised:
        load_manifest(write_manifest(text))
    assert ":19: cells[0].fault: 'pod_failure' is not in faults" in str(raised.value)


def test_http_fault_on_a_backend_is_rejected_as_a_frontend_fault(
    write_manifest: Callable[[str], Path],
) -> None:
    text = BASE_MANIFEST.replace("type: network_delay", "type: http_error")
    with pytest.raises(
        ManifestError, match=r":6: services\[0\]: http_error is a rule on a frontend route"
    ) as raised:
        load_manifest(write_manifest(text))
    assert "plan http_error on frontend" in str(raised.value)
    frontend = text.replace("[cartservice, paymentservice]", "[frontend]")
    frontend = frontend.replace("type: cpu_saturation", "type: pod_failure")
    frontend = frontend.replace("      severe: {load: 90}\n", "").replace("    parameters:\n", "")
    assert load_manifest(write_manifest(frontend)).services == ["frontend"]


def test_dns_fault_on_a_service_nothing_under_test_calls_is_rejected(
    write_manifest: Callable[[str], Path],
) -> None:
    text = BASE_MANIFEST.replace("paymentservice]", "frontend]").replace(
        "type: network_delay", "type: dns_fault"
    )
    with pytest.raises(
        ManifestError, match=r":6: services\[1\]: no deployment under test holds an address"
    ):
        load_manifest(write_manifest(text))


def test_python_m_r2act_reports_without_traceback(write_manifest: Callable[[str], Path]) -> None:
    path = write_manifest(_malformed("kind: sim", "kind: aws"))
    result = subprocess.run(
        [sys.executable, "-m", "r2act", "campaign", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert f"{path}:4: target.kind: unknown target kind 'aws'" in " ".join(result.stderr.split())
