"""Reading inputs and writing outputs, with ``-`` for standard input and output.

Every file screener writes (a report, an export, an HTML page) is written beside its target
and renamed into place, so a reader, or a crash, never sees half a file.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from screener.errors import ConfigError

__all__ = [
    "STDIO",
    "check_output",
    "check_outputs_differ",
    "is_stdio",
    "open_output",
    "read_text",
    "source_name",
    "write_output",
]

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


@contextlib.contextmanager
def open_output(
    path: str | os.PathLike[str], *, what: str, binary: bool = False
) -> Iterator[IO[Any]]:
    """A stream onto ``path`` (standard output for ``-``) that is written as it goes yet
    lands whole: the rows go to a partial file beside the target, renamed into place when the
    block ends, removed when it raises. ``what`` names the output in the one-line error. A
    target that is not a regular file (``/dev/null``, a named pipe) is written to as it is,
    never replaced; a symbolic link is followed.

    Examples
    --------
    >>> target = folder / "out.csv"
    >>> with open_output(target, what="the answers") as out:
    ...     _ = out.write("worker,score\\n")
    ...     sorted(p.name for p in target.parent.iterdir())
    ['.out.csv.partial']
    >>> target.read_text()
    'worker,score\\n'
    """
    if is_stdio(path):
        sys.stdout.flush()
        yield sys.stdout.buffer if binary else sys.stdout
        (sys.stdout.buffer if binary else sys.stdout).flush()
        return
    target = Path(path).resolve() if Path(path).is_symlink() else Path(path)
    if target.exists() and not target.is_file():  # /dev/null, a pipe: written, never replaced
        with _special(target, what, binary) as out:
            yield out
        return
    partial = target.with_name(f".{target.name}.partial")
    try:
        stream = partial.open("wb") if binary else partial.open("w", encoding="utf-8", newline="")
        with stream as out:
            yield out
        partial.replace(target)
    except OSError as error:
        partial.unlink(missing_ok=True)
        raise ConfigError(
            f"cannot write {what} to {target}: {error.strerror or error}",
            "check the directory, or pass another path",
        ) from None
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def check_output(path: str | os.PathLike[str] | None, what: str) -> None:
    """An output file whose folder does not exist is refused before any work is done (or
    paid for): its error would otherwise come when the work is over. None and ``-`` pass.

    Examples
    --------
    >>> check_output("no/such/folder/out.csv", "the report")
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: cannot write the report to no/such/folder/out.csv: no directory no/such/folder (create it or pass another path)
    """  # noqa: E501
    if path is None or is_stdio(path):
        return
    if not Path(path).parent.is_dir():
        raise ConfigError(
            f"cannot write {what} to {os.fspath(path)}: no directory {Path(path).parent}",
            "create it or pass another path",
        )


def check_outputs_differ(*outputs: tuple[str, str | os.PathLike[str] | None]) -> None:
    """Two outputs (``(flag, path)``) named the same file would overwrite each other: refused.
    Standard output is the caller's to arbitrate; None (not given) passes.

    Examples
    --------
    >>> check_outputs_differ(("--decisions", "out.txt"), ("-o", "./out.txt"))
    Traceback (most recent call last):
    ...
    screener.errors.ConfigError: --decisions and -o both name ./out.txt: one would overwrite the other (give each its own file)
    """  # noqa: E501
    seen: dict[Path, str] = {}
    for flag, path in outputs:
        if path is None or is_stdio(path):
            continue
        target = Path(path).resolve()
        if target in seen:
            raise ConfigError(
                f"{seen[target]} and {flag} both name {os.fspath(path)}: one would overwrite "
                "the other",
                "give each its own file",
            )
        seen[target] = flag


def write_output(path: str | os.PathLike[str], data: str | bytes, *, what: str) -> None:
    """Write ``data`` to ``path`` (standard output for ``-``) whole: see ``open_output``."""
    with open_output(path, what=what, binary=isinstance(data, bytes)) as out:
        out.write(data)


@contextlib.contextmanager
def _special(target: Path, what: str, binary: bool) -> Iterator[IO[Any]]:
    """An output that is not a regular file, opened in place."""
    try:
        stream = target.open("wb") if binary else target.open("w", encoding="utf-8", newline="")
    except OSError as error:
        raise ConfigError(
            f"cannot write {what} to {target}: {error.strerror or error}",
            "check the path, or pass another",
        ) from None
    with stream as out:
        yield out
