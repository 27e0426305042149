"""One exception root, narrow subclasses, and the one way any error is shown on one line
(``one_line``: the CLI's errors, the gate service's replies, a run's "failed" event)."""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "DatabaseGoneError",
    "InvalidRewardError",
    "JournalError",
    "JournalMismatchError",
    "OracleError",
    "PoolError",
    "RunNotFoundError",
    "SchemaVersionError",
    "ScreenerError",
    "SnapshotError",
    "UnknownPullError",
    "UnknownWorkerError",
    "one_line",
]


class ScreenerError(Exception):
    """Root of every error screener raises on purpose.

    ``hint`` says how to fix the problem; the CLI prints ``message (hint)`` on one line.

    Examples
    --------
    Every deliberate error says what is wrong and, when it can, how to fix it:

    >>> from screener import synthetic_pool
    >>> try:
    ...     synthetic_pool(3, 5)
    ... except ScreenerError as error:
    ...     print(type(error).__name__, "-", error)
    PoolError - ...
    """

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.hint = hint

    def __str__(self) -> str:
        text = super().__str__()
        return f"{text} ({self.hint})" if self.hint else text


class ConfigError(ScreenerError, ValueError):
    """A parameter is out of range or inconsistent with another."""


class InvalidRewardError(ScreenerError, ValueError):
    """A reward is not a finite number inside the algorithm's reward bounds."""


class PoolError(ScreenerError, ValueError):
    """A worker pool file is missing, malformed or inconsistent."""


class UnknownPullError(ScreenerError, KeyError):
    """An answer names a pull id that the algorithm never handed out."""


class UnknownWorkerError(ScreenerError, KeyError):
    """A call names a worker the gate has never seen."""


class OracleError(ScreenerError, RuntimeError):
    """An oracle could not be created or failed in a way a retry will not fix."""


class JournalError(ScreenerError, RuntimeError):
    """The journal (run database) cannot be opened or written."""


class DatabaseGoneError(JournalError):
    """The database file a journal opened was deleted, moved or replaced while open: what it
    wrote from then on would go to a file nobody can open again, so it writes nothing."""


class SchemaVersionError(JournalError):
    """The database was written by another schema version."""


class RunNotFoundError(JournalError, LookupError):
    """No run with that id in this database."""


class JournalMismatchError(JournalError):
    """Replaying the journal did not reproduce the recorded pulls (different algorithm or code)."""


class SnapshotError(ScreenerError, ValueError):
    """A stored algorithm state cannot be used (corrupt, or written by another version or for
    another algorithm): whoever reads it replays the journal instead."""


def one_line(error: BaseException | str, *, hint: bool = True, limit: int | None = None) -> str:
    r"""``error`` on one line, as the terminal, a JSON reply or a journal event shows it: a
    ``ScreenerError``'s message and, with ``hint``, its fix in parentheses (without the quotes
    a ``KeyError`` puts around its text); another error's text, or its class's name when it
    has none. Whitespace, newlines included, becomes single spaces and other control
    characters are shown escaped, so nothing a path or a library's message holds can break
    the line; ``limit`` cuts it to that many characters, the last an ellipsis.

    Examples
    --------
    >>> one_line(ConfigError("bad price\n  'x'", "give e.g. --price gold=0.05"))
    "bad price 'x' (give e.g. --price gold=0.05)"
    >>> one_line(UnknownWorkerError("unknown worker 'w7'", "ask /v1/next first"), hint=False)
    "unknown worker 'w7'"
    >>> one_line(RuntimeError()), one_line("a\tb\x1b[31m"), one_line("x" * 10, limit=5)
    ('RuntimeError', 'a b\\x1b[31m', 'xxxx…')
    """
    if isinstance(error, ScreenerError) and error.args:
        text = str(error.args[0])
        if hint and error.hint:
            text += f" ({error.hint})"
    else:
        text = str(error)
    line = " ".join(text.split())
    if not line and isinstance(error, BaseException):
        line = type(error).__name__
    line = "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in line)
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"
