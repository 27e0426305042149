"""Who comes when in the platform stand-in: a task stream's requests, with late joiners,
leavers and workers who turn to spam chosen and placed (seeded)."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from screener.checks import check_seed
from screener.errors import ConfigError
from screener.simulation.hashing import worker_rng
from screener.testing.doubles.platform import StreamSettings, TaskStream

__all__ = ["TURN_FROM", "Arrivals", "StandInSettings", "plan_arrivals"]

Overlap = Literal["recorded", "dynamic"]
#: A worker who turns to spam is chosen among those right at least this often in the data
#: (the ones with the most answers), so that it starts good and its fall is the change.
TURN_FROM = 0.7
_CHOICE_STREAM = 41
_TURN_STREAM = 42


@dataclass(frozen=True)
class StandInSettings:
    """How the stand-in replays a dataset.

    The stream (``screener.testing.doubles.platform``): ``gold_share`` of the items serve as gold,
    ``overlap`` labels per task item, ``session`` the share of the stream one worker's
    requests spread over, ``seed`` every draw. Then ``late`` workers arrive only after the
    first ``late_from`` of the requests; ``leavers`` workers leave for good halfway through
    their requests (the gate is told); ``turn`` workers (of those right at least
    ``TURN_FROM`` of the time, the ones with the most answers) turn to spam from their
    ``turn_after``-th request on: each gold answer and label is then wrong with probability
    ``turn_wrong``. ``concurrency``: workers served at once (1: one request at a time, in
    order, so that the same gate makes the same decisions every time). ``register_items``:
    register the stream's task items with the gate first (``POST /v1/items``, each capped at
    its recorded number of labels), so that the gate chooses the items and settles them.
    """

    gold_share: float = 0.1
    overlap: Overlap = "recorded"
    session: float = 0.3
    seed: int = 0
    late: int = 0
    late_from: float = 0.5
    leavers: int = 0
    turn: int = 0
    turn_after: int = 20
    turn_wrong: float = 0.9
    concurrency: int = 1
    register_items: bool = False

    def __post_init__(self) -> None:
        for name in ("late", "leavers", "turn", "turn_after"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise ConfigError(f"{name} must be a whole number >= 0, got {value!r}")
        if not isinstance(self.concurrency, int) or self.concurrency < 1:
            raise ConfigError(f"concurrency must be a whole number >= 1, got {self.concurrency!r}")
        for name in ("gold_share", "session", "late_from", "turn_wrong"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and math.isfinite(value) and 0 <= value <= 1):
                raise ConfigError(f"{name} must be a share in [0, 1], got {value!r}")
        if self.gold_share == 0 or self.session == 0:
            raise ConfigError("gold_share and session must be above 0")
        check_seed(self.seed)

    def stream(self) -> StreamSettings:
        return StreamSettings(self.gold_share, self.overlap, self.session, self.seed)


@dataclass(frozen=True)
class Arrivals:
    """The requests in order, each (worker, its request number from 0), and who does what:
    ``late`` joiners, ``leave_at`` (worker -> the request number at which it leaves instead),
    ``turn_at`` (worker -> the request number from which it spams)."""

    requests: list[tuple[str, int]]
    late: tuple[str, ...] = ()
    leave_at: dict[str, int] = field(default_factory=dict)
    turn_at: dict[str, int] = field(default_factory=dict)

    def wrong(self, seed: int, worker: str, request: int, rate: float) -> bool:
        """Whether a worker who has turned answers this request wrongly (a seeded draw per
        worker and request: the same however the requests interleave)."""
        turn = self.turn_at.get(worker)
        if turn is None or request < turn:
            return False
        return bool(worker_rng(seed, _TURN_STREAM, f"{worker}\x1f{request}").random() < rate)


def plan_arrivals(stream: TaskStream, settings: StandInSettings) -> Arrivals:
    """Choose the turned workers, the late joiners and the leavers, and place the requests."""
    schedule = list(stream.schedule)
    counts = Counter(schedule)
    turned = _turned(stream, counts, settings)
    rng = worker_rng(settings.seed, _CHOICE_STREAM, "arrivals")
    others = [w for w in sorted(counts) if w not in turned and counts[w] >= 2]
    chosen = [others[i] for i in rng.permutation(len(others))]
    if settings.late + settings.leavers > len(chosen):
        raise ConfigError(
            f"{settings.late} late joiners and {settings.leavers} leavers need that many "
            f"workers with two requests or more besides the turned ones; there are {len(chosen)}"
        )
    late = tuple(sorted(chosen[: settings.late]))
    leavers = chosen[settings.late : settings.late + settings.leavers]
    schedule = _move_late(schedule, set(late), settings.late_from, rng)
    numbered: Counter[str] = Counter()
    requests = []
    for worker in schedule:
        requests.append((worker, numbered[worker]))
        numbered[worker] += 1
    return Arrivals(
        requests,
        late,
        {worker: counts[worker] // 2 for worker in leavers},
        {worker: settings.turn_after for worker in turned},
    )


def _turned(stream: TaskStream, counts: Counter[str], settings: StandInSettings) -> list[str]:
    able = sorted(
        (w for w, state in stream.workers.items()
         if state.accuracy >= TURN_FROM and counts[w] > settings.turn_after),
        key=lambda w: (-counts[w], w),
    )  # fmt: skip
    if len(able) < settings.turn:
        raise ConfigError(
            f"{settings.turn} workers should turn to spam after {settings.turn_after} requests, "
            f"but only {len(able)} are right {TURN_FROM:.0%} of the time with more requests",
            "ask for fewer, or a smaller --turn-after",
        )
    return able[: settings.turn]


def _move_late(
    schedule: list[str], late: set[str], start: float, rng: np.random.Generator
) -> list[str]:
    """The late joiners' requests taken out and spread, in their order, over the requests
    after the first ``start`` of the others."""
    keep = [w for w in schedule if w not in late]
    moved = [w for w in schedule if w in late]
    cut = int(start * len(keep))
    slots = np.sort(rng.integers(0, len(keep) - cut + 1, len(moved))).tolist()
    merged = keep[:cut]
    position = cut
    for worker, slot in zip(moved, slots, strict=True):
        merged += keep[position : cut + slot]
        position = cut + slot
        merged.append(worker)
    return merged + keep[position:]
