"""The oracle contract: an asynchronous source of answers to gold questions.

An oracle is told which questions to ask (``submit``, one or a batch) and hands back answers
as they come (``receive``, a batch at a time): late, out of order, in groups, twice, or never.
It owns whatever it needs (HTTP sessions, servers, files) between ``open`` and ``close``; use
it as ``async with oracle:``. Timeouts are the orchestrator's business: an oracle that never
answers a pull is legal, and ``cancel`` tells it the answer is no longer wanted.
"""

from __future__ import annotations

import abc
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING, Any, ClassVar, Self

from screener.errors import ConfigError

if TYPE_CHECKING:
    from screener.bank import GoldQuestion
    from screener.crowd import WorkerPool

__all__ = ["Answer", "Oracle", "OracleOption", "PullRequest", "RetryNote"]


@dataclass(frozen=True, slots=True)
class OracleOption:
    """One option an oracle takes (``-O NAME=VALUE``, a run file's ``[oracle]`` table):
    ``screener oracles NAME`` lists them, and ``Oracle.check_options`` refuses any other.

    Examples
    --------
    >>> from screener.oracles import load_oracle_class
    >>> [option.name for option in load_oracle_class("http").OPTIONS if option.required]
    ['url']
    """

    name: str
    help: str
    #: Shown as the default; None when there is none (a required option, or one whose
    #: default is computed, as a random namespace).
    default: Any = None
    required: bool = False


@dataclass(frozen=True, slots=True)
class PullRequest:
    """Pull ``pull_id``: ask ``worker`` (``arm`` in the pool) its ``seq``-th gold question.

    ``question`` is that question when the pool has a gold question bank (a retried pull
    carries the same question), else None.

    Examples
    --------
    >>> request = PullRequest(pull_id=7, worker="ann", arm=0, seq=2)
    >>> request.worker, request.seq, request.question is None  # no question bank
    ('ann', 2, True)
    """

    pull_id: int
    worker: str
    arm: int
    seq: int
    question: GoldQuestion | None = None


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back for a pull: a reward or a raw answer, an error, or word that the worker
    is gone.

    Exactly one of ``reward``, ``response``, ``error`` and ``unavailable`` is set.
    ``response`` is the worker's raw answer to the pull's gold question, which screener scores
    against the bank's key (and can rescore if the question is later found wrong); oracles
    that know the score only (simulations, dataset replays) give ``reward``. ``error`` means
    this pull failed (the question may be asked again); ``unavailable`` means the worker can
    never be asked again (left the platform, or has no unseen gold question left).

    Examples
    --------
    >>> Answer(3, reward=1.0).reward
    1.0
    >>> Answer(4, unavailable="left the platform").unavailable
    'left the platform'
    """

    pull_id: int
    reward: float | None = None
    error: str | None = None
    unavailable: str | None = None
    response: str | float | None = None

    def __post_init__(self) -> None:
        values = (self.reward, self.response, self.error, self.unavailable)
        if sum(value is not None for value in values) != 1:
            raise ValueError(
                "an Answer carries exactly one of reward, response, error, unavailable"
            )


@dataclass(frozen=True, slots=True)
class RetryNote:
    """An oracle tried again on its own (a resent request): journaled as "retried" events.

    Examples
    --------
    >>> RetryNote((1, 2), "HTTP 503, sent again").pull_ids
    (1, 2)
    """

    pull_ids: tuple[int, ...]
    detail: str


class Oracle(abc.ABC):
    """Base class of every oracle; plugins subclass it and register an entry point.

    Examples
    --------
    Every oracle is used the same way: built from plain options, opened with ``async with``,
    then ``submit`` and ``receive`` (``SimulatedOracle`` shows a whole exchange). A plugin's
    oracle is found by its entry-point name, like the built-in ones:

    >>> from screener import synthetic_pool
    >>> from screener.oracles import load_oracle_class
    >>> oracle_class = load_oracle_class("simulated")
    >>> oracle = oracle_class.from_options(synthetic_pool(4, 1, seed=0), {"loss": 0.1}, seed=0)
    >>> oracle.name, oracle.describe()["loss"], oracle.retractable
    ('simulated', 0.1, True)
    """

    #: The entry-point name under ``screener.oracles``.
    name: ClassVar[str]
    #: True when ``cancel`` withdraws the questions: no answer to a cancelled pull is sent
    #: afterwards (the conformance suite checks it). Set False when answers may still come.
    retractable: bool = True
    #: The id of the run this oracle serves, once ``bind_run`` was called (before ``open``).
    run_id: str | None = None
    #: The options ``from_options`` takes, declared once: listed by ``screener oracles NAME``
    #: and checked by ``check_options``.
    OPTIONS: ClassVar[tuple[OracleOption, ...]] = ()

    @classmethod
    def check_options(cls, options: Mapping[str, Any]) -> None:
        """Refuse options the oracle does not declare, and declared required ones that are
        missing, in one line each; ``from_options`` calls it first."""
        known = [option.name for option in cls.OPTIONS]
        unknown = sorted(set(options) - set(known))
        if unknown:
            raise ConfigError(
                f"unknown option(s) for the {cls.name} oracle: {', '.join(unknown)}",
                f"its options are {', '.join(known) or 'none'} "
                f"(`screener oracles {cls.name}` explains them)",
            )
        missing = [o.name for o in cls.OPTIONS if o.required and options.get(o.name) in (None, "")]
        if missing:
            raise ConfigError(
                f"the {cls.name} oracle needs {' and '.join(missing)}",
                f"give {' '.join(f'-O {name}=...' for name in missing)}",
            )

    def bind_run(self, run_id: str) -> None:
        """Called once, before ``open``, with the id of the run this oracle serves (the same
        id when the run is resumed). Oracles backed by storage that several runs share (a
        queue, a file, a table) tag what they send with it, so that two runs' answers never
        mix; pull ids alone start at 0 in every run."""
        self.run_id = run_id

    @classmethod
    @abc.abstractmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        """Build the oracle for ``pool`` from plain options (CLI flags, TOML, the journal)."""

    @classmethod
    def default_pool(cls, options: Mapping[str, Any]) -> WorkerPool | None:
        """The workers this oracle knows about (a dataset's), for runs given no pool file."""
        return None

    def question_for(self, pool: WorkerPool, arm: int, seq: int, seed: int) -> GoldQuestion | None:
        """The gold question of pull (arm, seq): the pool bank's, or None without a bank or
        once the worker has seen every question (then it is exhausted, never asked).

        An oracle that replays recorded answers overrides it to name the question each
        recorded answer was given to (a dataset replay asks the items the workers answered).
        """
        return None if pool.bank is None else pool.question_for(arm, seq, seed)

    @abc.abstractmethod
    def describe(self) -> dict[str, Any]:
        """JSON-safe options that ``from_options`` accepts to rebuild this oracle.

        Never include secrets (tokens): this goes into the journal.
        """

    @abc.abstractmethod
    async def submit(self, requests: Sequence[PullRequest]) -> None:
        """Send questions; returns once they are handed over (answers come via ``receive``)."""

    @abc.abstractmethod
    async def receive(self) -> Sequence[Answer]:
        """Wait for at least one answer and return every answer available now."""

    def note_retry(self, pull_ids: Sequence[int], detail: str) -> None:
        """Record that a request for ``pull_ids`` is being retried (e.g. after an HTTP 503).

        The detail is journaled: never put secrets in it.
        """
        notes: list[RetryNote] = self.__dict__.setdefault("_retry_notes", [])
        notes.append(RetryNote(tuple(pull_ids), detail))

    def take_retry_notes(self) -> list[RetryNote]:
        """The notes recorded since the last call (the orchestrator journals them)."""
        notes: list[RetryNote] = self.__dict__.pop("_retry_notes", [])
        return notes

    async def cancel(self, pull_ids: Sequence[int]) -> None:  # noqa: B027 - optional hook
        """The answers to these pulls are no longer wanted; see ``retractable``."""

    async def open(self) -> None:  # noqa: B027 - optional hook
        """Acquire resources (sessions, servers)."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release every resource; must be safe to call twice."""

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
