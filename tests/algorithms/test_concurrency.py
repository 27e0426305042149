"""Issue 19, item 4: algorithms keep the window full while answers are in flight.

CLUCB-PAC used to keep at most two pulls in flight for top-1 (the two workers of M xor M~,
one each) whatever the window; it now fills the window with the constant liar's next steps
(see ``CLUCBPAC``'s docstring, "Under concurrency"). These tests pin the in-flight count, the
rule's stop; ``ask(k)`` = k x ``ask(1)`` with the fill in play is in test_topk_baselines.py.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from screener.algorithms import CLUCBPAC, AskState
from screener.stats import clucb_radius


def _first_answers(alg: CLUCBPAC, rewards: list[float]) -> None:
    ask = alg.ask(alg.n_arms)
    assert ask.arms.tolist() == list(range(alg.n_arms))
    alg.tell_many(ask.ids, rewards)


def test_clucb_top1_fills_a_window_of_64() -> None:
    # 20 workers, one answer each, worker 0 the only correct one: M = {0}, M~ = {1} (every
    # other worker has the same upper end; ties go to the lowest index), so the old rule
    # handed out 0 and 1 and waited. With equal counts every worker is as ambiguous as the
    # next, so the liar's steps go round all 20 in index order. Its gap stays far above
    # eps: with 4 answers at t = 84 each radius is 0.5 sqrt(2 ln(4 * 20 * 84^3 / 0.05) / 4)
    # ~ 1.6, and the gap is r_0 + r_j - 1 ~ 2.2 > 0.1. So all 64 slots are filled.
    alg = CLUCBPAC(20, k=1, eps=0.1, delta=0.05)
    _first_answers(alg, [1.0] + [0.0] * 19)
    ask = alg.ask(64)
    assert len(ask) == 64 and alg.n_pending == 64
    assert ask.arms[:2].tolist() == [0, 1]  # the pair first, as before
    assert ask.arms.tolist() == [arm % 20 for arm in range(64)]
    assert np.bincount(ask.arms).tolist() == [4] * 4 + [3] * 16


def _liar_gap(alg: CLUCBPAC, counts: NDArray[np.int64], t: int) -> float:
    """w~(M~) - w~(M) with ``counts`` and ``t`` in place of the answered ones (means fixed)."""
    radius = clucb_radius(counts, t, alg.n_arms, alg.delta, alg.width)
    chosen = alg.chosen
    adjusted = np.where(chosen, alg.means - radius, alg.means + radius)
    order = np.argsort(-adjusted, kind="stable")
    rival = np.zeros(alg.n_arms, dtype=bool)
    rival[order[: alg.k]] = True
    return float(adjusted[rival & ~chosen].sum() - adjusted[chosen & ~rival].sum())


def test_clucb_fill_stops_where_the_liar_would_stop() -> None:
    # Two workers far apart, few answers: the real gap is above eps * k, so the pair goes
    # out; the liar's gap falls as pulls are added, and the fill ends at the first pull
    # count at which it is <= eps * k. Checked against the gap computed here directly.
    alg = CLUCBPAC(2, k=1, eps=0.2, delta=0.1)
    _first_answers(alg, [1.0, 0.0])
    for _ in range(3):  # four answers each: the gap is 2 r - 1 ~ 1.6 with r ~ 1.3
        ask = alg.ask(2)
        alg.tell_many(ask.ids, [1.0 if arm == 0 else 0.0 for arm in ask.arms.tolist()])
    assert not alg.finished and alg.gap > alg.eps
    ask = alg.ask(1000)
    assert ask.state is AskState.PULL and 2 < len(ask) < 1000  # 36 here
    assert alg.ask(1).wait  # the liar's stopping rule holds: wait for the answers
    counts = alg.stats.count.copy()
    t = alg.n_answered
    gaps = []
    for arm in ask.arms.tolist():
        gaps.append(_liar_gap(alg, counts, t))
        counts[arm] += 1
        t += 1
    assert min(gaps) > alg.eps  # every pull handed out was still needed by the liar
    assert _liar_gap(alg, counts, t) <= alg.eps  # and not one more
