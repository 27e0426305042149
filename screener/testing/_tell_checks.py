"""The conformance checks of the tell side of the contract: duplicates, unknown ids, late
answers, reward bounds and released pulls (``screener.testing.algorithm_conformance``
documents them and runs them)."""

from __future__ import annotations

from functools import partial

from screener.algorithms import AskState, PullStatus, TellOutcome
from screener.errors import InvalidRewardError, ScreenerError, UnknownPullError
from screener.testing._algorithm_context import (
    Context,
    arm_of,
    expect,
    expect_error,
    mid_run,
)
from screener.testing._history import show_ask

__all__ = [
    "check_idempotent_tell",
    "check_late_tell",
    "check_release_retry",
    "check_reward_bounds",
    "check_unknown_pull",
]


def check_idempotent_tell(context: Context) -> str | None:
    """A second answer to a pull is a DUPLICATE no-op; in one batch the first copy counts."""
    found = mid_run(context)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, p2, *_) = found
    low, high = algorithm.lower, algorithm.upper
    outcomes = algorithm.tell_many([p0, p1], [high, low]).tolist()
    expect(
        outcomes == [TellOutcome.ACCEPTED] * 2,
        f"first answers to pending pulls gave {outcomes}, not ACCEPTED",
    )
    before, answered = algorithm.result().to_json(), algorithm.n_answered
    expect(
        algorithm.tell(p0, low) is TellOutcome.DUPLICATE,
        "a second tell of an answered pull must return DUPLICATE",
    )
    outcomes = algorithm.tell_many([p1, p0], [high, high]).tolist()
    expect(
        outcomes == [TellOutcome.DUPLICATE] * 2,
        f"a batch of answered pulls gave {outcomes}, not DUPLICATE",
    )
    expect(
        algorithm.result().to_json() == before and algorithm.n_answered == answered,
        "a duplicate answer changed the algorithm; telling is idempotent (a no-op the second time)",
    )
    info = algorithm.pull_info(p0)
    expect(
        info is not None and info.status is PullStatus.ANSWERED and not algorithm.is_pending(p0),
        f"pull_info({p0}) after its answer is {info}, not ANSWERED",
    )
    twice = algorithm.tell_many([p2, p2], [high, low]).tolist()
    expect(
        twice == [TellOutcome.ACCEPTED, TellOutcome.DUPLICATE],
        f"one pull twice in a batch gave {twice}; the first copy counts, the second is a DUPLICATE",
    )
    twin = mid_run(context)
    assert not isinstance(twin, str)  # the same factory, seed and calls as above
    twin[0].tell_many([p0, p1], [high, low])
    twin[0].tell(p2, high)
    expect(
        algorithm.result().to_json() == twin[0].result().to_json(),
        "one pull twice in a batch did not count as its first copy alone",
    )
    return None


def check_unknown_pull(context: Context) -> str | None:
    """Ids never handed out raise UnknownPullError and change nothing."""
    found = mid_run(context, wanted=1)
    if isinstance(found, str):
        return found
    algorithm, (known, *_) = found
    before, rule = algorithm.result().to_json(), "an unknown pull id raises UnknownPullError"
    for bad in (algorithm.n_asked, algorithm.n_asked + 10**6, -1):
        expect_error(
            UnknownPullError,
            partial(algorithm.tell, bad, algorithm.upper),
            f"tell({bad}, ...)",
            rule,
        )
        expect_error(UnknownPullError, partial(algorithm.release, bad), f"release({bad})", rule)
        expect(
            algorithm.pull_info(bad) is None and not algorithm.is_pending(bad),
            f"pull_info({bad}) of an id never handed out must be None",
        )
    bad = algorithm.n_asked
    expect_error(
        UnknownPullError,
        lambda: algorithm.tell_many([known, bad], [algorithm.upper] * 2),
        f"tell_many([{known}, {bad}])",
        rule + " for the whole batch",
    )
    expect(
        algorithm.is_pending(known) and algorithm.result().to_json() == before,
        "a batch with an unknown id was partly taken; it must be rejected as a whole",
    )
    expect(
        algorithm.tell(known, algorithm.upper) is TellOutcome.ACCEPTED,
        "after a rejected batch, its known pull's answer must still be ACCEPTED",
    )
    expect(issubclass(UnknownPullError, ScreenerError), "UnknownPullError is a ScreenerError")
    return None


def check_late_tell(context: Context) -> str | None:
    """An answer after release is LATE and changes nothing; release is True only once."""
    found = mid_run(context, wanted=2)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, *_) = found
    expect(algorithm.release(p1) is True, f"release({p1}) of a pending pull must return True")
    expect(algorithm.release(p1) is False, "releasing a pull twice must return False")
    before, answered = algorithm.result().to_json(), algorithm.n_answered
    late = [algorithm.tell(p1, algorithm.upper), *algorithm.tell_many([p1], [algorithm.lower])]
    expect(late == [TellOutcome.LATE] * 2, f"answers to a released pull gave {late}, not LATE")
    expect(
        algorithm.result().to_json() == before and algorithm.n_answered == answered,
        "a late answer changed the algorithm; an answer after release is ignored",
    )
    info = algorithm.pull_info(p1)
    expect(
        info is not None and info.status is PullStatus.RELEASED,
        f"pull_info({p1}) after release is {info}, not RELEASED",
    )
    expect(
        algorithm.tell(p0, algorithm.upper) is TellOutcome.ACCEPTED,
        "the answer to a pending pull must be ACCEPTED",
    )
    expect(algorithm.release(p0) is False, "releasing an answered pull must return False")
    return None


def check_reward_bounds(context: Context) -> str | None:
    """Rewards outside [lower, upper] or not finite raise InvalidRewardError, atomically."""
    found = mid_run(context)
    if isinstance(found, str):
        return found
    algorithm, (p0, p1, p2, *_) = found
    low, high = algorithm.lower, algorithm.upper
    width = high - low
    before = algorithm.result().to_json()
    rule = f"rewards outside [{low}, {high}] raise InvalidRewardError and nothing is taken"
    for bad in (high + width / 2, low - width / 2, float("nan"), float("inf"), float("-inf")):
        expect_error(
            InvalidRewardError, partial(algorithm.tell, p0, bad), f"tell({p0}, {bad})", rule
        )
        expect_error(
            InvalidRewardError,
            partial(algorithm.tell_many, [p0, p1], [low, bad]),
            f"tell_many([{p0}, {p1}], [{low}, {bad}])",
            rule,
        )
        expect(not algorithm.accepts_reward(bad), f"accepts_reward({bad}) must be False")
    expect(
        algorithm.is_pending(p0) and algorithm.result().to_json() == before,
        "a rejected batch was partly taken; a bad reward rejects the whole batch",
    )
    outcomes = algorithm.tell_many([p0, p1, p2], [low, high, low + width / 2]).tolist()
    expect(
        outcomes == [TellOutcome.ACCEPTED] * 3,
        f"rewards {low}, {high} and {low + width / 2} gave {outcomes}; the bounds are inside",
    )
    return None


def check_release_retry(context: Context) -> str | None:
    """A released pull is asked again first: same worker, same seq, a new id."""
    found = mid_run(context)
    if isinstance(found, str):
        return found
    algorithm, pending = found
    pending += algorithm.ask(3).ids.tolist()  # uneven counts, where the schedule allows
    # The pulls of the busiest workers first: those a schedule would not choose next anyway.
    arms = [arm_of(algorithm, i) for i in range(algorithm.n_asked)]
    pending.sort(key=lambda i: (arms.count(arms[i]), i), reverse=True)
    for released, limit in ((pending[:1], 1), (pending[1:3], 3)):
        expected = []
        for pull_id in released:
            info = algorithm.pull_info(pull_id)
            assert info is not None
            expected.append((info.arm, info.seq))
            expect(algorithm.release(pull_id), f"release({pull_id}) must return True")
        next_id = algorithm.n_asked
        again = algorithm.ask(limit)
        if again.done:
            context.notes.append("the algorithm stopped instead of retrying: condition met")
            return None
        retried = list(zip(again.arms.tolist(), again.seqs.tolist(), strict=True))
        expect(
            again.state is AskState.PULL
            and sorted(retried[: len(expected)]) == sorted(expected)
            and again.first_id == next_id,
            f"after releasing pulls (arm, seq) {expected}, ask({limit}) gave {show_ask(again)}; "
            f"a released pull is asked again first, same worker and seq, new id {next_id}",
        )
        info = algorithm.pull_info(next_id)
        expect(
            info is not None
            and info.status is PullStatus.PENDING
            and (info.arm, info.seq) == retried[0],
            f"pull_info({next_id}) of the retry is {info}, not PENDING {retried[0]}",
        )
    return None
