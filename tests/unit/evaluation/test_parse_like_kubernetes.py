"""Scoring parses like Kubernetes (issue 12 item 7): one test per case of the issue."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import yaml
from evalfixtures import make_record
from typer.testing import CliRunner

from r2act.cli import _register_commands, app
from r2act.errors import DataError
from r2act.evaluation import IssueKind, parse_stream, read_predictions, score_file
from r2act.schema import PLAN_ADAPTER, memory_bytes
from r2act.schema.quantities import QUANTITY_PATTERN

RECORDS = [make_record("cartservice", "pod_failure"), make_record("adservice", "cpu_saturation")]
r1 = RECORDS[0]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("0.5Gi", 2**29),
        ("1.5Gi", 3 * 2**29),
        ("256Mi", 256 * 2**20),
        ("1e9", 10**9),
        ("1G", 10**9),
        ("2048Ki", 2 * 2**20),
        ("1.5", 2),  # a fraction of a byte rounds up, as the API server does
    ],
)
def test_memory_quantities_follow_the_kubernetes_grammar(text: str, expected: int) -> None:
    from kubernetes.utils import parse_quantity

    assert memory_bytes(text) == expected
    assert memory_bytes(text) >= parse_quantity(text)  # the client library's reading


@pytest.mark.parametrize("text", ["", "abc", "1.5 Gi", "1GiB", "-1Gi", "0x10", "Gi"])
def test_what_kubernetes_rejects_is_rejected(text: str) -> None:
    with pytest.raises(ValueError, match="quantity"):
        memory_bytes(text)


def test_a_fractional_limit_is_a_typed_plan_and_the_json_schema_pattern_agrees() -> None:
    plan = PLAN_ADAPTER.validate_python(
        {"operation": "increase_memory_limit", "target": "cartservice", "memory_limit": "1.5Gi"}
    )
    assert plan.operation == "increase_memory_limit"
    import re

    assert re.fullmatch(QUANTITY_PATTERN, "0.5Gi") and not re.fullmatch(QUANTITY_PATTERN, "x")


def _line(**fields: object) -> bytes:
    return (json.dumps({"incident_id": r1.incident_id, **fields}) + "\n").encode()


def test_an_extra_key_inside_rca_is_ignored_with_a_warning() -> None:
    label = r1.labels
    rca = {"service": label.service, "fault_type": label.fault_type.value, "confidence": 0.9}
    parsed = parse_stream(io.BytesIO(_line(rca=rca)))
    assert [i.kind for i in parsed.issues] == [IssueKind.RCA_EXTRA_FIELD]
    score = score_file([r1], parsed).scores[0]
    assert score.rca_s and score.rca_t  # the correct diagnosis still counts


def test_a_plan_with_an_extra_key_is_invalid_structure_not_a_no_op() -> None:
    plan = {"operation": "restart_service", "target": r1.labels.service, "why": "oom"}
    parsed = parse_stream(io.BytesIO(_line(plan=plan)))
    assert [i.kind for i in parsed.issues] == [IssueKind.PLAN_EXTRA_FIELD]
    score = score_file([r1], parsed).scores[0]
    assert not score.no_op and not score.valid
    assert score.error is not None and score.error.category.value == "invalid_structure"


def _refused(path: Path) -> str:
    with pytest.raises(DataError) as raised:
        read_predictions(path)
    message = str(raised.value)
    assert "\n" not in message and str(path) in message
    return message


def test_a_parquet_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"incident_id": [r1.incident_id], "plan": ["{}"]}), path)
    assert "Parquet" in _refused(path)


def test_a_yaml_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump([{"incident_id": r1.incident_id, "plan": None}]))
    assert "not JSON Lines" in _refused(path)


def test_a_csv_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "p.csv"
    path.write_text(f"incident_id,service,plan\n{r1.incident_id},cartservice,restart\n")
    assert "not JSON Lines" in _refused(path)


def test_the_datasets_own_records_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "incidents.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in RECORDS))
    assert "dataset's own records" in _refused(path)


def test_a_file_without_any_plan_or_rca_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ids.jsonl"
    path.write_text("".join(json.dumps({"incident_id": r.incident_id}) + "\n" for r in RECORDS))
    assert "no line has a plan or rca" in _refused(path)


def test_evaluate_refuses_a_records_file_with_exit_2_and_one_line(tmp_path: Path) -> None:
    _register_commands()
    path = tmp_path / "incidents.jsonl"
    path.write_text("".join(r.model_dump_json() + "\n" for r in RECORDS))
    result = CliRunner().invoke(app, ["evaluate", str(path), "--dataset", str(tmp_path)])
    assert isinstance(result.exception, DataError)  # main() prints it as one line, exit 2
    assert result.exception.exit_code == 2 and "\n" not in str(result.exception)


def test_a_real_predictions_file_with_some_bad_lines_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(b"not json\n" + _line(plan=None))
    parsed = read_predictions(path)
    assert list(parsed.predictions) == [r1.incident_id]


@pytest.mark.parametrize(
    "text", ["0", "7", "64Mi", "0Ki", "2048Ki", "16Gi", "3Ti", "1Pi", "2Ei", "00012Mi"]
)
def test_whole_binary_quantities_read_without_the_library_agree_with_it(text: str) -> None:
    from kubernetes.utils import parse_quantity

    from r2act.schema.quantities import quantity

    assert quantity(text) == parse_quantity(text)


def test_reading_a_topology_does_not_import_the_kubernetes_client() -> None:
    import subprocess
    import sys

    probe = (
        "import sys, r2act.agents.mcp_server, r2act.systems;"
        "print(r2act.systems.ONLINE_BOUTIQUE.deployment('cartservice').main.working_set);"
        "print('kubernetes' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    working_set, imported = done.stdout.split()
    assert working_set.endswith("Mi")
    assert imported == "False"


@pytest.mark.parametrize("text", ["0m", "1m", "100m", "300m", "1500m", "007m", "9" * 40 + "m"])
def test_whole_milli_quantities_read_without_the_library_are_its_very_decimal(text: str) -> None:
    from kubernetes.utils import parse_quantity

    from r2act.schema.quantities import quantity

    ours, theirs = quantity(text), parse_quantity(text)
    assert ours == theirs and ours.as_tuple() == theirs.as_tuple()  # exponent included


def test_the_simulated_cluster_reads_its_cpu_limits_without_the_kubernetes_client() -> None:
    import subprocess
    import sys

    probe = (
        "import sys; from r2act.schema import cpu_millicores;"
        "print(cpu_millicores('300m'), cpu_millicores('1'), 'kubernetes' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["300", "1000", "False"]
