"""The one reader of method-visible case tables: exactly a case's rows, whatever the
row-group layout; only the view's tables, never ``answers/``; opened lazily; and agents and
baselines get the same case from it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pandas as pd
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from r2act.agents import CaseSource
from r2act.baselines import DatasetReader
from r2act.datasets import layout
from r2act.datasets.cases import OBSERVED, Case, CaseReader
from r2act.errors import DataError

TABLES = (layout.LOGS, layout.EVENTS, layout.METRICS, layout.STATE, layout.REQUESTS)
_FIELDS = {
    layout.LOGS: "logs",
    layout.EVENTS: "events",
    layout.METRICS: "metrics",
    layout.REQUESTS: "requests",
}


def _reference(root: Path, name: str, case_id: str) -> pd.DataFrame:
    """A case's rows the slow, obvious way: the whole table, filtered."""
    table = pq.read_table(root / name)
    rows = table.filter(pc.equal(table["case_id"], case_id)).select(OBSERVED[name])
    frame: pd.DataFrame = rows.to_pandas()
    return frame


def _rewrite(root: Path, **options: object) -> None:
    """Rewrite every observation table of ``root`` with other Parquet write options."""
    for name in TABLES:
        table = pq.read_table(root / name)
        pq.write_table(table, root / name, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "layout_options",
    [
        {},  # as the build writes it: one row group per case
        {"row_group_size": 1 << 20},  # every case in one shared row group
        {"row_group_size": 7},  # cases spread over several groups, groups shared
        {"row_group_size": 7, "write_statistics": False},  # no statistics to index by
    ],
    ids=["built", "one-group", "small-groups", "no-statistics"],
)
def test_every_case_reads_exactly_its_rows_whatever_the_row_groups(
    dataset_copy: Path, layout_options: dict[str, object]
) -> None:
    if layout_options:
        _rewrite(dataset_copy, **layout_options)
        groups = pq.ParquetFile(dataset_copy / layout.LOGS).metadata.num_row_groups
        assert groups != len(CaseReader(dataset_copy).ids())  # the layout really differs
    reader = CaseReader(dataset_copy, "full")
    assert reader.ids()
    for case_id in reader.ids():
        case = reader.case(case_id)
        assert case.case_id == case_id and case.view == "full"
        for name, attribute in _FIELDS.items():
            got = getattr(case, attribute)
            assert got is not None
            pd.testing.assert_frame_equal(got, _reference(dataset_copy, name, case_id))
        states = _reference(dataset_copy, layout.STATE, case_id)
        assert sorted(case.states) == sorted(states["phase"])
        assert len(case.logs) > 0


def test_the_reader_opens_only_the_views_tables_and_never_the_answers(
    dataset_copy: Path,
) -> None:
    shutil.rmtree(dataset_copy / layout.ANSWERS)
    for name in (layout.METRICS, layout.STATE, layout.REQUESTS):
        (dataset_copy / name).unlink()
    reader = CaseReader(dataset_copy, "logs+events")
    for case in reader:
        assert case.events is not None and case.metrics is None and case.requests is None
        assert case.states == {}
    logs_only = next(iter(CaseReader(dataset_copy, "logs")))
    assert logs_only.events is None and logs_only.view == "logs"
    # opening is lazy: a missing table of the view is an error only when a case is read
    full = CaseReader(dataset_copy, "full")
    with pytest.raises(DataError, match=r"state\.parquet.*r2act dataset validate"):
        full.case(full.ids()[0])


def test_a_damaged_cases_table_is_one_clear_error(dataset_copy: Path) -> None:
    (dataset_copy / layout.CASES).write_bytes(b"not parquet")
    with pytest.raises(DataError, match=r"cases\.parquet: not a readable r2act dataset"):
        CaseReader(dataset_copy)
    with pytest.raises(DataError, match="view 'audio': unknown"):
        CaseReader(dataset_copy, "audio")


def test_agents_and_baselines_read_the_same_case(built: Path) -> None:
    baselines = DatasetReader(built, "full")
    agents = CaseSource(built, "full")
    for record in baselines.records:
        assert record.case_id is not None
        theirs, ours = baselines.case(record), agents.inputs(record.case_id)
        assert type(theirs) is type(ours) is Case
        assert theirs.action_space == ours.action_space == record.action_space
        assert theirs.topology == ours.topology and theirs.states == ours.states
        for attribute in _FIELDS.values():
            pd.testing.assert_frame_equal(getattr(theirs, attribute), getattr(ours, attribute))


def test_only_names_known_ids(built: Path) -> None:
    reader = CaseReader(built)
    first = reader.ids()[0]
    assert reader.select([first]) == [first] and first in reader and len(reader) > 1
    with pytest.raises(DataError, match=r"unknown case id.*case-000000000000"):
        reader.select(["case-000000000000"])


def test_a_case_is_read_from_its_own_row_groups_only(
    built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Selecting a case decodes its own row groups and no other case's (what keeps
    select_case within its budget on a paper-scale dataset)."""
    read: list[tuple[pq.ParquetFile, list[int]]] = []
    original = pq.ParquetFile.read_row_groups

    def spy(self: pq.ParquetFile, row_groups: list[int], *args: object, **kw: object) -> object:
        read.append((self, list(row_groups)))
        return original(self, row_groups, *args, **kw)  # type: ignore[arg-type]

    def whole(*_: object, **__: object) -> None:
        raise AssertionError("a whole table was read")

    reader = CaseReader(built, "full")  # reads the small cases.parquet whole
    monkeypatch.setattr(pq.ParquetFile, "read_row_groups", spy)
    monkeypatch.setattr(pq.ParquetFile, "read", whole)
    monkeypatch.setattr(pq, "read_table", whole)
    for case_id in reader.ids():
        read.clear()
        reader.case(case_id)
        assert read  # a case with no row in a table reads nothing of it
        for file, groups in read:
            key = file.schema_arrow.get_field_index("case_id")
            for group in groups:
                stats = file.metadata.row_group(group).column(key).statistics
                assert (str(stats.min), str(stats.max)) == (case_id, case_id)
