"""``screener gate --pool``: what a process starting or joining a pool may give, each
refusal one line (exit 2) that starts nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from pool_helpers import make_pool
from test_gate_command import in_process

from screener.journal import Journal


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--shards", "2"], "--shards is the size of a pool (add --pool NAME"),
        (["--pool", "p", "--shards", "2", "--resume", "abc"], "--resume is not taken with --pool"),
        (["--pool", "p", "--shards", "0"], "0 is not in the range"),
        (["--pool", "p", "--host", "0.0.0.0", "--shards", "2"], "SCREENER_GATE_TOKEN is not set"),
    ],
)
def test_bad_pool_options_are_one_line_and_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], words: str
) -> None:
    monkeypatch.delenv("SCREENER_GATE_TOKEN", raising=False)
    code, out, err = in_process(tmp_path, "gate", *args)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and words in lines[0], err
    assert out == "" and list(tmp_path.iterdir()) == []


def test_a_process_joining_a_pool_gives_no_settings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCREENER_GATE_TOKEN", raising=False)
    db = str(tmp_path / "runs.db")
    record = make_pool(db, 2)
    code, out, err = in_process(tmp_path, "gate", "--pool", "p", "--db", db, "--policy", "share")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: pool p exists: a process joining it serves it with the settings it started "
        "with, so --policy cannot be given (drop --policy, or name a new pool)"
    )
    with Journal(db, create=False) as journal:
        assert sorted(run.id for run in journal.runs()) == sorted(record.runs)


def test_a_pool_to_join_must_exist(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCREENER_GATE_TOKEN", raising=False)
    db = str(tmp_path / "runs.db")
    make_pool(db, 2)
    code, _, err = in_process(tmp_path, "gate", "--pool", "q", "--db", db)
    assert code == 2 and "there is no pool q in" in err and "start it with --shards S" in err


def test_joining_a_pool_never_creates_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SCREENER_GATE_TOKEN", raising=False)
    code, out, err = in_process(tmp_path, "gate", "--pool", "q", "--db", str(tmp_path / "x.db"))
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1, err
    assert list(tmp_path.iterdir()) == []
