"""The RCAEval export of a dataset with traces (issue 24 point 3): ``traces.csv`` in the
columns RCAEval's trace methods read, and the per-operation error and latency series its
multi-source methods read, on the case's metric step.

The last test runs RCAEval's own code on the export (``RCAEval.utility.read_traces``, the
trace methods TraceRCA and MicroRank, multi-source BARO on the series) in the interpreter
``R2ACT_RCAEVAL_PYTHON`` names (docs/rcaeval.md builds one), and skips without it.
"""

from __future__ import annotations

import csv
import json
import os
import subprocess
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from r2act.datasets import layout, load_records
from r2act.datasets.rcaeval import export_rcaeval
from r2act.datasets.rcaeval_traces import TRACE_COLUMNS
from traces_fixture import smoke_with_baseline, traced_dataset

RCAEVAL_COLUMNS = [
    "traceID",
    "spanID",
    "parentSpanID",
    "serviceName",
    "methodName",
    "operationName",
    "startTime",
    "duration",
]
"""What RCAEval 1.8.1's e2e/tracerca.py and e2e/microrank.py read of traces.csv."""


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("rcaeval-traces")
    # multi-source BARO fits its trace baseline on all but the last two pre-injection rows
    # (RCAEval e2e/baro.py), so the baseline window holds six metric steps
    dataset = traced_dataset(root, smoke_with_baseline(root / "smoke-90.yaml", 90))
    out = root / "export"
    export_rcaeval(dataset, out, logs=False)
    return dataset, out


def _folders(out: Path) -> dict[str, Path]:
    with (out / "cases.csv").open() as handle:
        return {row["case_id"]: out / row["folder"] for row in csv.DictReader(handle)}


def test_traces_csv_has_rcaevals_columns_in_microseconds(exported: tuple[Path, Path]) -> None:
    dataset, out = exported
    spans = pq.read_table(dataset / layout.TRACES).to_pandas()
    for case_id, folder in _folders(out).items():
        table = pd.read_csv(folder / "traces.csv", keep_default_na=False)
        assert list(table.columns) == list(TRACE_COLUMNS)
        assert list(table.columns[:8]) == RCAEVAL_COLUMNS
        own = spans[spans["case_id"] == case_id]
        assert len(table) == len(own) > 0
        first = own.sort_values("start", kind="stable").iloc[0]
        row = table.iloc[0]
        assert row["spanID"] == first["span_id"]
        assert row["startTime"] == round(first["start"] * 1e6)
        assert row["duration"] == round(first["duration_s"] * 1e6)
        assert (table["parentSpanID"] == "").sum() == (own["parent_id"] == "").sum()
        grpc = table[table["methodName"] != ""]
        pairs = zip(grpc["operationName"], grpc["methodName"], strict=True)
        assert not grpc.empty and all(op.endswith("/" + m) for op, m in pairs)
        assert set(table["statusCode"]) <= {0, 1, 2}
        assert (table["statusCode"] == 2).sum() == (own["status"] == "error").sum()


def test_trace_series_count_errors_and_average_latency_per_step(
    exported: tuple[Path, Path],
) -> None:
    _, out = exported
    for folder in _folders(out).values():
        data = pd.read_csv(folder / "data.csv")
        errors = pd.read_csv(folder / "tracets_err.csv")
        latency = pd.read_csv(folder / "tracets_lat.csv")
        assert list(errors["time"]) == list(latency["time"]) == list(data["time"])
        assert list(errors.columns) == list(latency.columns)
        table = pd.read_csv(folder / "traces.csv", keep_default_na=False)
        method = table["methodName"].where(table["methodName"] != "", table["operationName"])
        keys = table["serviceName"] + "_" + method
        assert set(errors.columns[1:]) == set(keys)
        inside = table["startTime"] / 1e6 <= data["time"].max()
        failed = table[inside & (table["statusCode"] == 2)]
        assert errors.drop(columns="time").to_numpy().sum() == len(failed)
        step = int(data["time"].diff().median())
        span = table[inside].iloc[-1]
        key = keys[inside].iloc[-1]
        slot = min(t for t in data["time"] if t >= span["startTime"] / 1e6)  # the step's end
        same = table[inside & (keys == key)]
        same_slot = same[
            (same["startTime"] / 1e6 > slot - step) & (same["startTime"] / 1e6 <= slot)
        ]
        expected = same_slot["duration"].mean() / 1e3
        got = latency.loc[latency["time"] == slot, key].iloc[0]
        assert got == pytest.approx(expected)


def test_the_fault_shows_in_the_root_causes_series(exported: tuple[Path, Path]) -> None:
    dataset, out = exported
    folders = _folders(out)
    checkout = [r for r in load_records(dataset) if r.labels.service == "checkoutservice"]
    assert checkout
    for record in checkout:
        folder = folders[str(record.case_id)]
        inject = int((folder / "inject_time.txt").read_text())
        latency = pd.read_csv(folder / "tracets_lat.csv").ffill()
        key = "checkoutservice_PlaceOrder"
        before = latency[latency["time"] < inject][key].mean()
        during = latency[latency["time"] >= inject][key].max()
        assert during > 1.5 * before


_RCAEVAL_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import pandas as pd
    from RCAEval.utility import read_traces
    from RCAEval.e2e.tracerca import tracerca
    from RCAEval.e2e.microrank import microrank
    from RCAEval.e2e.baro import mmbaro

    case = sys.argv[1]
    inject = int(open(case + "/inject_time.txt").read())
    read = read_traces(case)
    spans = pd.read_csv(case + "/traces.csv")  # as e2e/pdiagnose.py reads it
    metric = pd.read_csv(case + "/data.csv").ffill().fillna(0)
    # mmnsigma keeps every 15th row of a metric frame sampled each second (baro.py);
    # hand it the metric step's rows at 1 s, forward-filled
    seconds = range(int(metric["time"].min()), int(metric["time"].max()) + 1)
    metric = metric.set_index("time").reindex(seconds).ffill().reset_index(names="time")
    series = {
        "metric": metric,
        "logts": pd.DataFrame({"time": metric["time"]}),
        "tracets_err": pd.read_csv(case + "/tracets_err.csv"),
        "tracets_lat": pd.read_csv(case + "/tracets_lat.csv"),
    }
    out = {
        "read_rows": len(read),
        "read_columns": list(read.columns),
        "tracerca": tracerca(spans.copy(), inject_time=inject * 1_000_000)["ranks"],
        "microrank": microrank(spans.copy(), inject_time=inject * 1_000_000)["ranks"],
        "mmbaro": mmbaro(series, inject_time=inject, dataset="re2-ob")["ranks"],
    }
    print(json.dumps(out))
    """
)


@pytest.mark.skipif(
    not os.environ.get("R2ACT_RCAEVAL_PYTHON"),
    reason="no RCAEval environment; set R2ACT_RCAEVAL_PYTHON (docs/rcaeval.md builds one)",
)
def test_rcaevals_own_trace_code_reads_and_ranks_the_export(
    exported: tuple[Path, Path], tmp_path: Path
) -> None:
    dataset, out = exported
    script = tmp_path / "read.py"
    script.write_text(_RCAEVAL_SCRIPT)
    record = next(r for r in load_records(dataset) if r.labels.service == "checkoutservice")
    folder = _folders(out)[str(record.case_id)]
    done = subprocess.run(
        [os.environ["R2ACT_RCAEVAL_PYTHON"], str(script), str(folder)],
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    table = pd.read_csv(folder / "traces.csv", keep_default_na=False)
    assert result["read_rows"] == len(table)
    assert result["read_columns"][:8] == RCAEVAL_COLUMNS
    method = table["methodName"].where(table["methodName"] != "", table["operationName"])
    keys = set(table["serviceName"] + "_" + method)
    for name in ("tracerca", "microrank"):
        assert result[name] and set(result[name]) <= keys, name
    assert any(r.startswith("checkoutservice_") for r in result["tracerca"])
    series = set(pd.read_csv(folder / "tracets_lat.csv").columns[1:])
    assert set(result["mmbaro"]) & series
    assert result["mmbaro"][0].startswith("checkoutservice_")
