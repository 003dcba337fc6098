"""Ctrl-C inside any command: exit 130 with one line saying so, never a silent exit."""

from __future__ import annotations

import sys

import pytest

import r2act.cli
from r2act import evaluation


def test_ctrl_c_inside_a_command_exits_130_and_says_interrupted(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(_path: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(evaluation, "read_predictions", interrupted)
    monkeypatch.setattr(sys, "argv", ["r2act", "evaluate", "p.jsonl"])
    with pytest.raises(SystemExit) as exit_:
        r2act.cli.main()
    assert exit_.value.code == 130
    err = capsys.readouterr().err
    assert "interrupted" in err and "Traceback" not in err


def test_an_ordinary_exit_130_prints_nothing_more(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def stopped(_path: object) -> None:
        raise SystemExit(130)  # a verb that reported its own interruption (collect)

    monkeypatch.setattr(evaluation, "read_predictions", stopped)
    monkeypatch.setattr(sys, "argv", ["r2act", "evaluate", "p.jsonl"])
    with pytest.raises(SystemExit) as exit_:
        r2act.cli.main()
    assert exit_.value.code == 130
    assert "interrupted" not in capsys.readouterr().err
