"""Simulated workers behind the oracle contract: rewards, latency, batches, losses, duplicates."""

from __future__ import annotations

import asyncio
import contextlib
import heapq
import math
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Self

import numpy as np

from screener.crowd import WorkerPool, demo_pool
from screener.errors import ConfigError
from screener.oracles.base import Answer, Oracle, OracleOption, PullRequest
from screener.oracles.latency import Latency
from screener.simulation.hashing import uniforms
from screener.simulation.recorded import EXHAUSTED_RECORDS
from screener.simulation.rewards import BernoulliRewards, BetaRewards, RewardModel

__all__ = ["DELIVERY_OPTIONS", "SimulatedOracle", "delivery_options", "parse_flag"]

#: How simulated answers are delivered; the dataset and log oracles take them too.
DELIVERY = (
    OracleOption("latency", "how long each answer takes: none, constant:S or exponential:S "
                 "(seconds)", "none"),
    OracleOption("batch_release", "answers are held and released in groups of this size", 1),
    OracleOption("loss", "probability that an answer never comes", 0.0),
    OracleOption("duplicates", "probability that an answer is delivered twice", 0.0),
    OracleOption("retractable", "whether cancelling a question withdraws it (false: its "
                 "answer still comes)", True),
)  # fmt: skip
DELIVERY_OPTIONS = frozenset(option.name for option in DELIVERY)

_LOSS_STREAM = 2
_DUPLICATE_STREAM = 3


class SimulatedOracle(Oracle):
    """Answers drawn from per-worker reward distributions, delivered asynchronously.

    Rewards, delays and duplicates are pure functions of (seed, worker, question number), so
    a resumed or reordered run sees the same answers; losses are keyed by pull id instead,
    so that a question asked again after a loss can get through.

    - ``latency``: how long each answer takes (answers then arrive out of order).
    - ``batch_release``: answers are held and released in groups of B (the last, smaller
      group is released once every outstanding answer is due).
    - ``loss``: probability that an answer never comes (the orchestrator's timeout handles it).
    - ``duplicates``: probability that an answer is delivered a second time.
    - ``retractable``: whether ``cancel`` withdraws a question (True) or its answer still
      arrives (False), as on platforms where an assignment cannot be taken back.

    Examples
    --------
    >>> import asyncio
    >>> from screener import synthetic_pool
    >>> from screener.oracles import PullRequest, SimulatedOracle
    >>> pool = synthetic_pool(4, 1, seed=0)
    >>> async def ask_two() -> list[float | None]:
    ...     oracle = SimulatedOracle.from_options(pool, {"latency": "none"}, seed=0)
    ...     async with oracle:
    ...         await oracle.submit([PullRequest(0, "w01", 0, 0), PullRequest(1, "w04", 3, 0)])
    ...         return [answer.reward for answer in await oracle.receive()]
    >>> asyncio.run(ask_two())
    [1.0, 0.0]
    """

    name = "simulated"
    OPTIONS: ClassVar[tuple[OracleOption, ...]] = (
        OracleOption("rewards", "bernoulli (right or wrong) or beta (graded in [0, 1])",
                     "bernoulli"),
        OracleOption("concentration", "beta rewards: how tightly scores gather around the "
                     "worker's accuracy", 10.0),
        *DELIVERY,
    )  # fmt: skip
    #: Options of subclasses that replay records (dataset, log), kept for ``describe``.
    source_options: dict[str, Any] | None = None

    @classmethod
    def default_pool(cls, options: Mapping[str, Any]) -> WorkerPool | None:
        """Simulated workers need no pool file: the embedded demo (30, two at chance)."""
        return demo_pool()

    def __init__(
        self,
        rewards: RewardModel,
        *,
        latency: Latency | None = None,
        batch_release: int = 1,
        loss: float = 0.0,
        duplicates: float = 0.0,
        retractable: bool = True,
    ) -> None:
        if batch_release < 1:
            raise ConfigError(f"batch_release must be at least 1, got {batch_release}")
        for label, rate in (("loss", loss), ("duplicates", duplicates)):
            if not 0.0 <= rate < 1.0:
                raise ConfigError(f"{label} must lie in [0, 1), got {rate}")
        self.rewards = rewards
        self.latency = latency or Latency()
        self.batch_release = batch_release
        self.loss = loss
        self.duplicates = duplicates
        self.retractable = retractable
        self._due: list[tuple[float, int, Answer]] = []  # heap of (due time, order, answer)
        self._held: list[Answer] = []
        self._cancelled: set[int] = set()
        self._order = 0
        self._changed: asyncio.Event | None = None

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        cls.check_options(options)
        delivery = delivery_options(options)
        accuracies = pool.require_accuracies()
        kind = options.get("rewards", "bernoulli")
        if "concentration" in options and kind != "beta":
            raise ConfigError(
                f"concentration shapes graded (beta) rewards, and these are {kind}",
                "drop the concentration option, or add -O rewards=beta",
            )
        model: RewardModel
        if kind == "bernoulli":
            model = BernoulliRewards(accuracies, seed)
        elif kind == "beta":
            model = BetaRewards(accuracies, seed, float(options.get("concentration", 10.0)))
        else:
            raise ConfigError(f"unknown reward model {kind!r}", "use 'bernoulli' or 'beta'")
        return cls(model, **delivery)

    def describe(self) -> dict[str, Any]:
        if self.source_options is not None:
            return {**self.source_options, **self._delivery()}
        options: dict[str, Any] = {"rewards": self.rewards.kind, **self._delivery()}
        if isinstance(self.rewards, BetaRewards):
            options["concentration"] = self.rewards.concentration
        return options

    def _delivery(self) -> dict[str, Any]:
        return {
            "latency": str(self.latency),
            "batch_release": self.batch_release,
            "loss": self.loss,
            "duplicates": self.duplicates,
            "retractable": self.retractable,
        }

    @property
    def seed(self) -> int:
        return self.rewards.seed

    # -------------------------------------------------------------------- the contract
    async def submit(self, requests: Sequence[PullRequest]) -> None:
        if not requests:
            return
        arms = np.fromiter((r.arm for r in requests), dtype=np.int64, count=len(requests))
        seqs = np.fromiter((r.seq for r in requests), dtype=np.int64, count=len(requests))
        rewards = self.rewards.sample(arms, seqs).tolist()
        delays = self.latency.delays(self.seed, arms, seqs)
        # Losses are keyed by pull id, not question: a re-asked question is not lost forever.
        ids = np.fromiter((r.pull_id for r in requests), dtype=np.int64, count=len(requests))
        lost = self._draw(_LOSS_STREAM, self.loss, ids, np.zeros_like(ids))
        doubled = self._draw(_DUPLICATE_STREAM, self.duplicates, arms, seqs)
        now = asyncio.get_running_loop().time()
        for index, request in enumerate(requests):
            if lost[index]:
                continue
            answer = self._answer(request, rewards[index])
            self._schedule(now + float(delays[index]), answer)
            if doubled[index]:
                self._schedule(now + 2.0 * float(delays[index]), answer)
        self._notify()

    async def receive(self) -> Sequence[Answer]:
        loop = asyncio.get_running_loop()
        while True:
            ready = self._collect(loop.time())
            if ready:
                return ready
            wake_at = self._due[0][0] if self._due else math.inf
            changed = self._event()
            changed.clear()
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout_at(wake_at if math.isfinite(wake_at) else None):
                    await changed.wait()

    async def cancel(self, pull_ids: Sequence[int]) -> None:
        if self.retractable:
            self._cancelled.update(pull_ids)

    async def close(self) -> None:
        self._due.clear()
        self._held.clear()
        self._cancelled.clear()

    # ------------------------------------------------------------------------ helpers
    def _answer(self, request: PullRequest, reward: float) -> Answer:
        """The answer for a drawn reward; NaN means recorded answers are used up."""
        if reward != reward:
            return Answer(request.pull_id, unavailable=EXHAUSTED_RECORDS)
        return Answer(request.pull_id, reward=reward)

    def _draw(self, stream: int, rate: float, arms: np.ndarray, seqs: np.ndarray) -> np.ndarray:
        if rate == 0.0:
            return np.zeros(arms.size, dtype=bool)
        return uniforms(self.seed, stream, arms, seqs) < rate

    def _schedule(self, due: float, answer: Answer) -> None:
        heapq.heappush(self._due, (due, self._order, answer))
        self._order += 1

    def _collect(self, now: float) -> list[Answer]:
        while self._due and self._due[0][0] <= now:
            answer = heapq.heappop(self._due)[2]
            if answer.pull_id not in self._cancelled:
                self._held.append(answer)
        if not self._held:
            return []
        if len(self._held) < self.batch_release and self._due:
            return []  # wait for a full group while more answers are on their way
        released, self._held = self._held, []
        return released

    def _event(self) -> asyncio.Event:
        if self._changed is None:
            self._changed = asyncio.Event()
        return self._changed

    def _notify(self) -> None:
        if self._changed is not None:
            self._changed.set()


def delivery_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """SimulatedOracle's delivery keyword arguments from plain options (the DELIVERY ones;
    the caller's ``check_options`` has refused unknown names)."""
    latency = options.get("latency", "none")
    return {
        "latency": latency if isinstance(latency, Latency) else Latency.parse(str(latency)),
        "batch_release": int(options.get("batch_release", 1)),
        "loss": float(options.get("loss", 0.0)),
        "duplicates": float(options.get("duplicates", 0.0)),
        "retractable": parse_flag(options.get("retractable", True), "retractable"),
    }


def parse_flag(value: object, name: str) -> bool:
    """A boolean option given as a bool or as text (CLI ``-O key=value``, TOML, JSON)."""
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "1", "yes"):
        return True
    if text in ("false", "0", "no"):
        return False
    raise ConfigError(f"{name} must be true or false, got {value!r}")
