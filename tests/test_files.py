"""screener.files: outputs land whole (partial file, then rename) and are streamed."""

from __future__ import annotations

from pathlib import Path

import pytest

from screener.errors import ConfigError
from screener.files import open_output, write_output


def test_a_failed_write_leaves_the_old_file_and_no_partial(tmp_path: Path) -> None:
    target = tmp_path / "answers.csv"
    target.write_text("old\n")
    with pytest.raises(RuntimeError), open_output(target, what="the answers") as out:
        out.write("worker,score\n")
        raise RuntimeError("the rows ran out half way")
    assert target.read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["answers.csv"]


def test_rows_are_on_disk_before_the_block_ends(tmp_path: Path) -> None:
    """Streamed, not gathered: what was written is in the partial file already."""
    target = tmp_path / "answers.csv"
    with open_output(target, what="the answers") as out:
        out.write("x" * 100_000)
        out.flush()
        assert (tmp_path / ".answers.csv.partial").stat().st_size == 100_000
        assert not target.exists()
    assert target.stat().st_size == 100_000


def test_bytes_and_text_land_whole(tmp_path: Path) -> None:
    write_output(tmp_path / "a.bin", b"\x00\x01", what="a page")
    write_output(tmp_path / "a.txt", "r\u00e9sum\u00e9\n", what="a report")
    assert (tmp_path / "a.bin").read_bytes() == b"\x00\x01"
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "r\u00e9sum\u00e9\n"


def test_stdout_for_dash(capsys: pytest.CaptureFixture[str]) -> None:
    with open_output("-", what="the answers") as out:
        out.write("worker,score\n")
    assert capsys.readouterr().out == "worker,score\n"


def test_an_unwritable_directory_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"cannot write the answers to .*missing"):
        write_output(tmp_path / "missing" / "a.csv", "x", what="the answers")
    assert list(tmp_path.iterdir()) == []


def test_an_output_that_is_not_a_regular_file_is_written_not_replaced(tmp_path: Path) -> None:
    """`-o /dev/null` run as root once renamed a file onto /dev/null: a named pipe stands in
    for any special file here (a reader drains it; afterwards it is still a pipe)."""
    import os
    import stat
    import threading

    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    received: list[bytes] = []
    reader = threading.Thread(target=lambda: received.append(pipe.read_bytes()), daemon=True)
    reader.start()
    write_output(pipe, "worker,score\n", what="the report")
    reader.join(timeout=10)
    assert received == [b"worker,score\n"]
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert not (tmp_path / ".pipe.partial").exists()


def test_a_symbolic_link_is_followed_and_kept(tmp_path: Path) -> None:
    real = tmp_path / "real.csv"
    real.write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to(real)
    write_output(link, "new\n", what="the report")
    assert link.is_symlink() and real.read_text() == "new\n"
