"""The conformance checks of the one-pull path: ``ask1`` and ``tell1`` hand out and take
exactly what ``ask(1)`` and ``tell`` would, under the same rules
(``screener.testing.algorithm_conformance`` documents them and runs them)."""

from __future__ import annotations

from functools import partial

import numpy as np

from screener.algorithms import Algorithm, Ask, AskState, PullStatus, TellOutcome
from screener.algorithms.ask_tell import PullTuple
from screener.errors import InvalidRewardError, UnknownPullError
from screener.testing._algorithm_context import Context, expect, expect_error, mid_run
from screener.testing._history import Solo
from screener.testing._report import Failed

__all__ = ["OneAtATime", "check_scalar_path", "check_scalar_tell"]

_RULE = "ask1 and tell1 hand out and take exactly what ask(1) and tell would"


class OneAtATime:
    """Twins driven a pull at a time: the left through ``ask(1)`` and ``tell``, the right
    through ``ask1`` and ``tell1``; every call must give the same on both, and both must
    keep the same books."""

    def __init__(self, left: Algorithm, right: Algorithm) -> None:
        self.algorithm = left
        self.right = right

    def ask(self, limit: int) -> Ask:
        parts: list[Ask] = []
        while len(parts) < limit:
            one = self.algorithm.ask(1)
            pull = self.right.ask1()
            expected = _as_pull(one)
            if pull != expected:
                self._fail(f"ask1() gave {pull} where ask(1) gave {expected}")
            if not len(one):
                if not parts:
                    return one
                break
            parts.append(one)
        self._compare_books()
        return Ask(
            AskState.PULL,
            parts[0].first_id,
            np.concatenate([p.arms for p in parts]),
            np.concatenate([p.seqs for p in parts]),
        )

    def tell_many(self, ids: list[int], rewards: list[float]) -> list[int]:
        outcomes: list[int] = []
        for pull_id, reward in zip(ids, rewards, strict=True):
            left, right = self.algorithm.tell(pull_id, reward), self.right.tell1(pull_id, reward)
            if right is not left:
                self._fail(f"tell1({pull_id}, {reward}) gave {right!r} where tell gave {left!r}")
            outcomes.append(int(left))
        self._compare_books()
        return outcomes

    def release(self, pull_id: int) -> bool:
        left, right = self.algorithm.release(pull_id), self.right.release(pull_id)
        if left != right:
            self._fail(
                f"release({pull_id}) gave {left} after ask(1)/tell, {right} after ask1/tell1"
            )
        return left

    def leave(self, arm: int, pull_id: int | None) -> None:
        for algorithm in (self.algorithm, self.right):
            Solo(algorithm).leave(arm, pull_id)

    def _compare_books(self) -> None:
        left, right = _books(self.algorithm), _books(self.right)
        if left != right:
            self._fail(
                f"(n_asked, n_answered, n_pending, pending per worker) is {right} after ask1 "
                f"and tell1, {left} after ask(1) and tell"
            )
        if right[2] != sum(right[3]):
            self._fail(f"n_pending = {right[2]} but the pending counts sum to {sum(right[3])}")

    def _fail(self, what_happened: str) -> None:
        raise Failed(f"{what_happened}; {_RULE}")


def check_scalar_path(context: Context) -> str | None:
    """``ask1``/``tell1`` twins of ``ask(1)``/``tell`` through whole histories: the same
    pulls, outcomes, books and result."""
    for seed in context.history_seeds():
        port = OneAtATime(context.build(), context.build())
        context.play(port, seed)
        if port.algorithm.result().to_json() != port.right.result().to_json():
            port._fail("at the end of the history, the result after ask1 and tell1 differs")
    return None


def check_scalar_tell(context: Context) -> str | None:
    """``tell1`` keeps the rules of ``tell``: unknown ids and bad rewards raise and change
    nothing, a second answer is a DUPLICATE and one after release LATE, both no-ops."""
    found = mid_run(context, wanted=3)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, p2, *_) = found
    low, high = algorithm.lower, algorithm.upper
    before = algorithm.result().to_json()
    for bad_id in (algorithm.n_asked, algorithm.n_asked + 10**6, -1):
        expect_error(
            UnknownPullError,
            partial(algorithm.tell1, bad_id, high),
            f"tell1({bad_id}, ...)",
            "an unknown pull id raises UnknownPullError",
        )
    for bad in (high + (high - low) / 2, low - 1.0, float("nan"), float("inf"), float("-inf")):
        expect_error(
            InvalidRewardError,
            partial(algorithm.tell1, p0, bad),
            f"tell1({p0}, {bad})",
            f"rewards outside [{low}, {high}] raise InvalidRewardError",
        )
    expect(
        algorithm.is_pending(p0) and algorithm.result().to_json() == before,
        "a rejected tell1 changed the algorithm; it must change nothing",
    )
    expect(algorithm.tell1(p0, high) is TellOutcome.ACCEPTED, "tell1 of a pending pull: ACCEPTED")
    after, answered = algorithm.result().to_json(), algorithm.n_answered
    expect(algorithm.tell1(p0, low) is TellOutcome.DUPLICATE, "a second tell1 must be DUPLICATE")
    _expect_unchanged(algorithm, after, answered, "a duplicate tell1")
    expect(algorithm.release(p1), f"release({p1}) of a pending pull must return True")
    after = algorithm.result().to_json()
    expect(algorithm.tell1(p1, high) is TellOutcome.LATE, "tell1 after release must be LATE")
    _expect_unchanged(algorithm, after, answered, "a late tell1")
    info = algorithm.pull_info(p2)
    expect(info is not None and info.status is PullStatus.PENDING, f"pull {p2} is pending")
    _expect_dense_ask1(algorithm)
    return None


def _expect_unchanged(algorithm: Algorithm, result: str, answered: int, what: str) -> None:
    expect(
        algorithm.result().to_json() == result and algorithm.n_answered == answered,
        f"{what} changed the algorithm; a duplicate or late answer is a no-op",
    )


def _expect_dense_ask1(algorithm: Algorithm) -> None:
    """The next ``ask1`` numbers its pull ``n_asked``, and its arm and seq are recorded."""
    next_id = algorithm.n_asked
    pull = algorithm.ask1()
    if isinstance(pull, AskState):
        return
    pull_id, arm, seq = pull
    info = algorithm.pull_info(next_id)
    expect(
        pull_id == next_id and info is not None and (info.arm, info.seq) == (arm, seq),
        f"ask1() gave {pull} with {next_id} pulls handed out; ids are dense ({next_id} next)",
    )


def _as_pull(ask: Ask) -> PullTuple | AskState:
    return (ask.first_id, int(ask.arms[0]), int(ask.seqs[0])) if len(ask) else ask.state


def _books(algorithm: Algorithm) -> tuple[int, int, int, list[int]]:
    pending: list[int] = algorithm.pending.tolist()
    return algorithm.n_asked, algorithm.n_answered, algorithm.n_pending, pending
