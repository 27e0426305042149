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

if TYPE_CHECKING:
    from screener.pool import WorkerPool

__all__ = ["Answer", "Oracle", "PullRequest"]


@dataclass(frozen=True, slots=True)
class PullRequest:
    """Pull ``pull_id``: ask ``worker`` (``arm`` in the pool) its ``seq``-th gold question."""

    pull_id: int
    worker: str
    arm: int
    seq: int


@dataclass(frozen=True, slots=True)
class Answer:
    """What came back for a pull: a reward, or an error, or word that the worker is gone.

    Exactly one of ``reward``, ``error`` and ``unavailable`` is set. ``error`` means this
    pull failed (the question may be asked again); ``unavailable`` means the worker can never
    be asked again (left the platform, or has no unseen gold question left).
    """

    pull_id: int
    reward: float | None = None
    error: str | None = None
    unavailable: str | None = None

    def __post_init__(self) -> None:
        given = sum(value is not None for value in (self.reward, self.error, self.unavailable))
        if given != 1:
            raise ValueError("an Answer carries exactly one of reward, error, unavailable")


class Oracle(abc.ABC):
    """Base class of every oracle; plugins subclass it and register an entry point."""

    #: The entry-point name under ``screener.oracles``.
    name: ClassVar[str]

    @classmethod
    @abc.abstractmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        """Build the oracle for ``pool`` from plain options (CLI flags, TOML, the journal)."""

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

    async def cancel(self, pull_ids: Sequence[int]) -> None:  # noqa: B027 - optional hook
        """The answers to these pulls are no longer wanted (best effort)."""

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
