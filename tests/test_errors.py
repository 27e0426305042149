"""``one_line``: the one rule by which an error becomes one line, wherever it is shown (the
command's stderr, the gate service's JSON error, a run's "failed" event)."""

from __future__ import annotations

import pytest

from screener.errors import (
    ConfigError,
    JournalError,
    ScreenerError,
    UnknownPullError,
    UnknownWorkerError,
    one_line,
)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("  first line\n   second\tline \n", "first line second line"),
        ("a path\r\nwith a break", "a path with a break"),
        ("red \x1b[31mtext\x00", "red \\x1b[31mtext\\x00"),  # a terminal escape is shown, not run
        ("", ""),
    ],
)
def test_text_becomes_one_printable_line(text: str, line: str) -> None:
    assert one_line(text) == line
    assert one_line(RuntimeError(text)) == (line or "RuntimeError")


@pytest.mark.parametrize("error_class", [UnknownPullError, UnknownWorkerError])
def test_a_lookup_error_is_shown_without_the_quotes_of_a_key_error(
    error_class: type[ScreenerError],
) -> None:
    error = error_class("unknown worker 'w7'", "ask for work first")
    assert str(error).startswith('"unknown')  # what str() alone would show
    assert one_line(error) == "unknown worker 'w7' (ask for work first)"
    assert one_line(error, hint=False) == "unknown worker 'w7'"


def test_a_screener_error_shows_its_fix_unless_told_not_to() -> None:
    error = ConfigError("price must be > 0,\ngot -1", "give e.g. --price gold=0.05")
    assert one_line(error) == "price must be > 0, got -1 (give e.g. --price gold=0.05)"
    assert one_line(error, hint=False) == "price must be > 0, got -1"
    assert one_line(JournalError("disk full")) == "disk full"
    assert one_line(ScreenerError("  \n")) == "ScreenerError"


@pytest.mark.parametrize("limit", [1, 5, 300])
def test_a_limit_cuts_the_line_and_says_so(limit: int) -> None:
    line = one_line(OSError("x" * 1000), limit=limit)
    assert len(line) == limit
    assert line.endswith("…")
    assert one_line("x" * limit, limit=limit) == "x" * limit  # a line that fits is whole
