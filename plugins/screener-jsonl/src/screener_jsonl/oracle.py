"""JsonlOracle: questions out to one JSON-lines file, answers back from another.

Another process (a script, a labelling tool, a human with an editor) reads the outbox and
appends answers to the inbox; the oracle follows the inbox by polling it. No seed is used:
the answers are whatever the inbox says, so a run is deterministic given the inbox.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Self

from screener.crowd import WorkerPool
from screener.errors import ConfigError
from screener.oracles import Answer, Oracle, OracleOption, PullRequest

__all__ = ["OPTIONS", "JsonlOracle", "inbox_line", "parse_answer", "parse_line"]

#: Declared for `screener oracles jsonl` and checked by ``Oracle.check_options``.
OPTIONS = (
    OracleOption("outbox", "file the questions (and cancellations) are appended to",
                 required=True),
    OracleOption("inbox", "file the other process appends answers to", required=True),
    OracleOption("poll", "seconds between looks at the inbox", 0.05),
    OracleOption("retractable", "drop answers to cancelled pulls (false: deliver them, "
                 "logged as late)", True),
)  # fmt: skip
_ANSWER_FIELDS = ("answer", "reward", "unavailable", "error")
#: Finds the pull id in a line that is not valid JSON, so that pull can fail visibly.
_PULL_ID = re.compile(rb'"pull_id"\s*:\s*(\d+)')


class JsonlOracle(Oracle):
    """Hands questions to another process through files (see the package README).

    - ``outbox``: file the oracle appends one JSON line per question to, and one
      ``{"pull_id": N, "cancel": true}`` line per cancelled pull (when retractable).
    - ``inbox``: file the other process appends answers to; read from its end as it was
      when the oracle opened (earlier lines belong to earlier runs).
    - ``poll``: seconds between looks at the inbox (default 0.05).
    - ``retractable``: drop answers to cancelled pulls (default true); false delivers them,
      and the orchestrator logs them as late.

    Several runs may share the two files: every outbox line carries the run's id (``"run"``,
    from ``bind_run``), and an inbox line that names another run is not this run's answer.
    """

    name = "jsonl"
    OPTIONS = OPTIONS

    def __init__(
        self, outbox: Path, inbox: Path, *, poll: float = 0.05, retractable: bool = True
    ) -> None:
        if not (math.isfinite(poll) and poll > 0):
            raise ConfigError(f"poll must be a positive number of seconds, got {poll}")
        if outbox.resolve() == inbox.resolve():
            raise ConfigError("outbox and inbox are the same file", "give two different paths")
        self.outbox = outbox
        self.inbox = inbox
        self.poll = poll
        self.retractable = retractable
        self._asked: set[int] = set()
        self._cancelled: set[int] = set()
        self._offset = 0
        self._inode: int | None = None
        self._partial = b""

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        cls.check_options(options)
        retractable = options.get("retractable", True)
        if not isinstance(retractable, bool):
            retractable = str(retractable).strip().lower() in ("true", "1", "yes")
        return cls(
            Path(str(options["outbox"])),
            Path(str(options["inbox"])),
            poll=float(options.get("poll", 0.05)),
            retractable=retractable,
        )

    def describe(self) -> dict[str, Any]:
        return {
            "outbox": str(self.outbox),
            "inbox": str(self.inbox),
            "poll": self.poll,
            "retractable": self.retractable,
        }

    # -------------------------------------------------------------------- the contract
    async def open(self) -> None:
        for path in (self.outbox, self.inbox):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.touch()
        stat = self.inbox.stat()
        self._offset, self._inode, self._partial = stat.st_size, stat.st_ino, b""

    async def submit(self, requests: Sequence[PullRequest]) -> None:
        lines = [_question_line(request, self.run_id) for request in requests]
        self._append(self.outbox, lines)
        self._asked.update(request.pull_id for request in requests)

    async def receive(self) -> Sequence[Answer]:
        # Polling inside receive (no background task): nothing runs between calls, so
        # there is nothing to stop in close() and a cancelled receive loses nothing.
        while True:
            answers = [a for a in self._read_inbox() if self._wanted(a.pull_id)]
            if answers:
                return answers
            await asyncio.sleep(self.poll)

    async def cancel(self, pull_ids: Sequence[int]) -> None:
        if not self.retractable:
            return
        fresh = [p for p in pull_ids if p in self._asked and p not in self._cancelled]
        self._cancelled.update(fresh)
        run = {} if self.run_id is None else {"run": self.run_id}
        lines = [json.dumps({"pull_id": p, **run, "cancel": True}) for p in fresh]
        self._append(self.outbox, lines)

    async def close(self) -> None:
        self._asked.clear()
        self._cancelled.clear()
        self._partial = b""

    # ------------------------------------------------------------------------ helpers
    def _wanted(self, pull_id: int) -> bool:
        """Answers to pulls this oracle never asked (another run's) are not ours."""
        return pull_id in self._asked and not (self.retractable and pull_id in self._cancelled)

    @staticmethod
    def _append(path: Path, lines: Sequence[str]) -> None:
        if lines:
            # One write per batch: a reader sees whole lines or a partial last line.
            with path.open("a", encoding="utf-8") as file:
                file.write("".join(line + "\n" for line in lines))

    def _read_inbox(self) -> list[Answer]:
        """New complete lines of the inbox as answers; a partial last line waits."""
        try:
            stat = self.inbox.stat()
        except FileNotFoundError:
            return []  # being rotated: the new file appears shortly
        if stat.st_ino != self._inode or stat.st_size < self._offset:
            # Rotated or truncated: the new content starts at the beginning.
            self._offset, self._inode, self._partial = 0, stat.st_ino, b""
        if stat.st_size == self._offset:
            return []
        with self.inbox.open("rb") as file:
            file.seek(self._offset)
            data = file.read()
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        parsed = [found for line in lines if (found := parse_line(line)) is not None]
        return [answer for run, answer in parsed if run in (None, self.run_id)]


def _question_line(request: PullRequest, run_id: str | None) -> str:
    question = request.question
    shown = None if question is None else {"id": question.id, "payload": question.payload}
    record = {"pull_id": request.pull_id, "worker": request.worker, "question": shown,
              "seq": request.seq}  # fmt: skip
    if run_id is not None:
        record["run"] = run_id
    return json.dumps(record, default=str)


def parse_answer(line: bytes) -> Answer | None:
    """One inbox line as an Answer; None for blank lines and lines naming no pull id.

    A line that names a pull id but is malformed becomes ``Answer(error=...)`` for that pull,
    so the orchestrator logs it as failed and asks again instead of waiting for a timeout.
    """
    found = parse_line(line)
    return None if found is None else found[1]


def parse_line(line: bytes) -> tuple[str | None, Answer] | None:
    """One inbox line as (the run it names, or None when it names none; its Answer); None
    as in ``parse_answer``."""
    if not line.strip():
        return None
    try:
        record = json.loads(line)
    except (json.JSONDecodeError, UnicodeDecodeError):
        found = _PULL_ID.search(line)
        if found is None:
            return None
        return None, Answer(int(found.group(1)), error="malformed inbox line: not valid JSON")
    if not isinstance(record, dict):
        return None
    pull_id = record.get("pull_id")
    if not isinstance(pull_id, int) or isinstance(pull_id, bool):
        return None
    run = record.get("run")
    run = run if isinstance(run, str) else None
    given = [key for key in _ANSWER_FIELDS if record.get(key) is not None]
    if len(given) != 1:
        error = f"inbox line needs exactly one of {', '.join(_ANSWER_FIELDS)}"
        return run, Answer(pull_id, error=error)
    return run, _answer(pull_id, given[0], record[given[0]])


def _answer(pull_id: int, key: str, value: object) -> Answer:
    if key == "reward":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return Answer(pull_id, error=f"reward must be a number, got {value!r}")
        return Answer(pull_id, reward=float(value))
    if key == "answer":
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            return Answer(pull_id, error="answer must be a string or a number")
        return Answer(pull_id, response=value if isinstance(value, str) else float(value))
    if key == "unavailable":
        return Answer(pull_id, unavailable=str(value))
    return Answer(pull_id, error=str(value))


def inbox_line(pull_id: int, **answer: object) -> str:
    """The inbox line for an answer, e.g. ``inbox_line(3, reward=1.0)`` (for answerers)."""
    return json.dumps({"pull_id": pull_id, **answer}) + "\n"
