"""Reading inputs and writing outputs, with ``-`` for standard input and output.

Every file screener writes (a report, an export, an HTML page) is written beside its target
and renamed into place, so a reader, or a crash, never sees half a file.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from screener.errors import ConfigError

__all__ = ["STDIO", "is_stdio", "read_text", "source_name", "write_output"]

#: The file name that means standard input (for inputs) or standard output (for outputs).
STDIO = "-"


def is_stdio(path: str | os.PathLike[str] | None) -> bool:
    """Whether ``path`` is ``-``.

    Examples
    --------
    >>> is_stdio("-"), is_stdio("pool.csv"), is_stdio(None)
    (True, False, False)
    """
    return path is not None and os.fspath(path) == STDIO


def source_name(path: str | os.PathLike[str]) -> str:
    """How messages name an input: its path, or "standard input".

    Examples
    --------
    >>> source_name("-"), source_name("pool.csv")
    ('standard input', 'pool.csv')
    """
    return "standard input" if is_stdio(path) else os.fspath(path)


def read_text(path: str | os.PathLike[str], encoding: str = "utf-8") -> str:
    """The whole text of ``path``, or of standard input for ``-``; a file's errors
    (FileNotFoundError, UnicodeDecodeError...) are the caller's to word."""
    if is_stdio(path):
        return sys.stdin.buffer.read().decode(encoding)
    return Path(path).read_text(encoding=encoding)


def write_output(path: str | os.PathLike[str], data: str | bytes, *, what: str) -> None:
    """Write ``data`` to ``path`` (standard output for ``-``) all at once: beside the target
    first, then renamed into place. ``what`` names the output in the one-line error."""
    if is_stdio(path):
        if isinstance(data, bytes):
            sys.stdout.flush()
            sys.stdout.buffer.write(data)
            sys.stdout.buffer.flush()
        else:
            sys.stdout.write(data)
            sys.stdout.flush()
        return
    target = Path(path)
    partial = target.with_name(f".{target.name}.partial")
    try:
        if isinstance(data, bytes):
            partial.write_bytes(data)
        else:
            partial.write_text(data, encoding="utf-8", newline="")
        partial.replace(target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise ConfigError(
            f"cannot write {what} to {target}: {error.strerror or error}",
            "check the directory, or pass another path",
        ) from None
