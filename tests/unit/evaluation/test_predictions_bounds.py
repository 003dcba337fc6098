"""The predictions reader ends in bounded time on any input, and reads what editors write.

``/dev/zero``, an endless pipe or a file of a million blank lines is refused with one line
(exit 2) instead of being read forever; a valid file that starts with a UTF-8 byte-order
mark, or arrives through a pipe (``evaluate <(...)``), is read like any other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from evalfixtures import make_record, pred

from r2act.errors import DataError
from r2act.evaluation import predictions
from r2act.evaluation.predictions import read_predictions

R = make_record("cartservice", "pod_failure")
OTHER = make_record("frontend", "dns_fault")
BOM = b"\xef\xbb\xbf"


def _lines(*records: object) -> bytes:
    return b"".join(json.dumps(pred(r)).encode() + b"\n" for r in records)  # type: ignore[arg-type]


def test_evaluate_dev_zero_exits_2_at_once_with_one_line(tmp_path: Path) -> None:
    child = subprocess.run(
        [sys.executable, "-m", "r2act", "evaluate", "/dev/zero", "--dataset", str(tmp_path)],
        capture_output=True,
        check=False,
        text=True,
        timeout=60,  # the old reader never ended: this raised TimeoutExpired
    )
    assert child.returncode == 2, child.stderr
    err = child.stderr.strip().splitlines()
    assert len(err) == 1 and "/dev/zero" in err[0] and "binary" in err[0], err


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "stream.jsonl"
    os.mkfifo(path)
    return path


def _feed(path: Path, head: bytes, chunk: bytes | None) -> Iterator[threading.Thread]:
    """Write ``head`` into the FIFO, then ``chunk`` forever (None: close) until the reader
    goes away."""

    def write() -> None:
        try:
            with path.open("wb") as stream:
                stream.write(head)
                while chunk is not None:
                    stream.write(chunk)
        except BrokenPipeError:
            pass

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    yield thread
    thread.join(timeout=30)
    assert not thread.is_alive()


def test_an_endless_text_stream_is_refused_at_the_size_bound(
    fifo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(predictions, "MAX_FILE_BYTES", 16 << 20)
    for _thread in _feed(fifo, _lines(R), b"a" * 65536):  # no newline, no NUL, never ends
        with pytest.raises(DataError, match=r"stream\.jsonl: more than 16 MiB"):
            read_predictions(fifo)


def test_too_many_lines_are_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(predictions, "MAX_LINES", 1000)
    path = tmp_path / "p.jsonl"
    path.write_bytes(_lines(R) + b"\n" * 1000)
    with pytest.raises(DataError, match="more than 1000 lines"):
        read_predictions(path)
    path.write_bytes(_lines(R) + b"\n" * 999)  # exactly at the bound: read
    assert list(read_predictions(path).predictions) == [R.incident_id]


def test_a_predictions_file_from_a_pipe_is_read(fifo: Path) -> None:
    for _thread in _feed(fifo, _lines(R, OTHER), None):
        parsed = read_predictions(fifo)
    assert sorted(parsed.predictions) == sorted([R.incident_id, OTHER.incident_id])
    assert not parsed.issues


@pytest.mark.parametrize("ending", [b"\n", b"\r\n"])
def test_a_file_starting_with_a_utf8_bom_is_read_whole(tmp_path: Path, ending: bytes) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(BOM + _lines(R).replace(b"\n", ending))
    parsed = read_predictions(path)
    assert list(parsed.predictions) == [R.incident_id] and not parsed.issues
    path.write_bytes(BOM + _lines(R, OTHER))
    parsed = read_predictions(path)
    assert len(parsed.predictions) == 2 and not parsed.issues


def test_a_bom_anywhere_but_the_start_is_still_an_issue(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_bytes(_lines(R) + BOM + _lines(OTHER))
    parsed = read_predictions(path)
    assert list(parsed.predictions) == [R.incident_id]
    assert [(i.line, i.kind.value) for i in parsed.issues] == [(2, "malformed_json")]
