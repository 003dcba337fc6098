"""The robustness zoo: every kind of bad input is counted with its line, nothing crashes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from evalfixtures import lines_to_file, make_record, pred
from hypothesis import given, settings
from hypothesis import strategies as st

from r2act.errors import DataError
from r2act.evaluation import IssueKind, parse_stream, read_predictions, score_file
from r2act.evaluation.predictions import MAX_KEPT_ISSUES, MAX_LINE_BYTES, safe_text

R = make_record("cartservice", "pod_failure")
GOOD = pred(R)


def kinds_at(lines: list[object]) -> list[tuple[int, IssueKind]]:
    return [(i.line, i.kind) for i in lines_to_file(lines).issues]


@pytest.mark.parametrize(
    ("bad", "kind"),
    [
        (b"{not json", IssueKind.MALFORMED_JSON),
        (b'{"incident_id": "a", "incident_id": "b"}', IssueKind.MALFORMED_JSON),
        (b'{"incident_id": "x", "rca": NaN}', IssueKind.MALFORMED_JSON),
        (b"[" * 100_000 + b"]" * 100_000, IssueKind.MALFORMED_JSON),
        (b"\xff\xfe{}", IssueKind.NOT_UTF8),
        (b"[1, 2]", IssueKind.NOT_AN_OBJECT),
        (b'"just a string"', IssueKind.NOT_AN_OBJECT),
        ({"rca": {}}, IssueKind.BAD_INCIDENT_ID),
        ({"incident_id": 42}, IssueKind.BAD_INCIDENT_ID),
        ({"incident_id": "../../etc/passwd"}, IssueKind.BAD_INCIDENT_ID),
        ({"incident_id": "a\x00b"}, IssueKind.BAD_INCIDENT_ID),
        ({"incident_id": "x" * 5000}, IssueKind.BAD_INCIDENT_ID),
        ({**GOOD, "confidence": 0.9}, IssueKind.EXTRA_FIELD),
        ({**GOOD, "rca": {"service": 7}}, IssueKind.BAD_RCA),
        ({**GOOD, "rca": {"service": "a", "why": "b"}}, IssueKind.RCA_EXTRA_FIELD),
        ({**GOOD, "rca": "cartservice"}, IssueKind.BAD_RCA),
        ({**GOOD, "rca": {"service": "s" * 10_000}}, IssueKind.BAD_RCA),
        ({**GOOD, "rca": {"service": "cart\x1b[31mservice"}}, IssueKind.UNSAFE_CHARACTERS),
        ({**GOOD, "plan": {"operation": "reboot", "target": "x"}}, IssueKind.UNKNOWN_OPERATION),
        ({**GOOD, "plan": {"operation": ["restart"]}}, IssueKind.UNKNOWN_OPERATION),
        ({**GOOD, "plan": {"target": "cartservice"}}, IssueKind.PLAN_MISSING_FIELD),
        ({**GOOD, "plan": {"operation": "scale_out", "target": "a"}}, IssueKind.PLAN_MISSING_FIELD),
        ({**GOOD, "plan": {"operation": "no_action", "target": "a"}}, IssueKind.PLAN_EXTRA_FIELD),
        (
            {**GOOD, "plan": {"operation": "restart_service", "target": "../x"}},
            IssueKind.PLAN_BAD_VALUE,
        ),
        (
            {**GOOD, "plan": {"operation": "restart_service", "target": "a\nb"}},
            IssueKind.UNSAFE_CHARACTERS,
        ),
        ({**GOOD, "plan": 3}, IssueKind.PLAN_BAD_VALUE),
        ({**GOOD, "method": ["m"]}, IssueKind.BAD_METHOD),
    ],
)
def test_each_bad_input_kind_is_counted_at_its_line(bad: object, kind: IssueKind) -> None:
    found = kinds_at([GOOD | {"incident_id": "other_id"}, bad])
    assert (2, kind) in found


def test_too_long_line_is_skipped_and_the_next_line_still_read() -> None:
    huge = b'{"incident_id": "' + b"x" * (MAX_LINE_BYTES + 10) + b'"}\n'
    raw = huge + json.dumps(GOOD).encode() + b"\n"
    result = parse_stream(io.BytesIO(raw))
    assert [(i.line, i.kind) for i in result.issues] == [(1, IssueKind.LINE_TOO_LONG)]
    assert result.predictions[R.incident_id].line == 2


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_empty_file_is_reported_not_fatal(content: bytes) -> None:
    result = parse_stream(io.BytesIO(content))
    assert [i.kind for i in result.issues] == [IssueKind.EMPTY_FILE]
    assert result.predictions == {}


def test_missing_file_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_predictions(tmp_path / "nope.jsonl")


def test_directory_is_a_data_error(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="directory"):
        read_predictions(tmp_path)


def test_bad_plan_does_not_cost_the_rca() -> None:
    line = {**GOOD, "plan": {"operation": "reboot"}}
    parsed = lines_to_file([line]).predictions[R.incident_id]
    assert parsed.rca is not None and parsed.rca.service == "cartservice"
    assert parsed.plan is None and parsed.plan_state == "invalid"


def test_bad_rca_does_not_cost_the_plan() -> None:
    parsed = lines_to_file([{**GOOD, "rca": [1]}]).predictions[R.incident_id]
    assert parsed.rca is None and parsed.plan == R.gold_plan


def test_first_duplicate_wins_and_every_duplicate_is_counted() -> None:
    second = pred(R, service="frontend")
    result = lines_to_file([GOOD, second, second])
    first = result.predictions[R.incident_id].rca
    assert first is not None and first.service == "cartservice"
    assert result.duplicates == {R.incident_id: [1, 2, 3]}
    assert [i.kind for i in result.issues] == [IssueKind.DUPLICATE_ID] * 2


def test_crlf_and_missing_final_newline_are_fine() -> None:
    raw = (
        json.dumps(GOOD).encode()
        + b"\r\n"
        + json.dumps(pred(make_record("frontend", "pod_failure"))).encode()
    )
    result = parse_stream(io.BytesIO(raw))
    assert len(result.predictions) == 2 and not result.issues


def test_safe_text_escapes_control_characters_and_truncates() -> None:
    assert safe_text("a\x1b[31mb") == "a\\u001b[31mb"
    assert len(safe_text("x" * 500)) == 60


@settings(max_examples=150, deadline=None)
@given(st.lists(st.binary(max_size=200), max_size=8))
def test_arbitrary_bytes_never_crash(chunks: list[bytes]) -> None:
    result = parse_stream(io.BytesIO(b"\n".join(chunks)))
    assert result.lines >= 0


@settings(max_examples=150, deadline=None)
@given(
    st.recursive(
        st.none()
        | st.booleans()
        | st.integers()
        | st.floats(allow_nan=False, allow_infinity=False)
        | st.text(max_size=20),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(
                st.sampled_from(
                    [
                        "incident_id",
                        "rca",
                        "plan",
                        "operation",
                        "target",
                        "service",
                        "fault_type",
                        "replicas",
                        "scope",
                        "x",
                    ]
                ),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )
)
def test_arbitrary_json_values_never_crash(value: object) -> None:
    line = {"incident_id": R.incident_id, "rca": value, "plan": value}
    parsed = parse_stream(
        io.BytesIO(json.dumps(value).encode() + b"\n" + json.dumps(line).encode())
    )
    score = score_file([R], parsed).scores[0]
    assert score.covered and (score.valid or score.error is not None)


def test_issue_list_is_capped_but_every_issue_is_counted() -> None:
    raw = b"{\n" * (MAX_KEPT_ISSUES + 50)
    result = parse_stream(io.BytesIO(raw))
    assert len(result.issues) == MAX_KEPT_ISSUES
    assert result.issue_counts() == {"malformed_json": MAX_KEPT_ISSUES + 50}
    assert result.line_issues == MAX_KEPT_ISSUES + 50
