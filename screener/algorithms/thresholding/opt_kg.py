"""Opt-KG: the optimistic knowledge gradient of Chen, Lin and Zhou 2015, fixed budget."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from screener.algorithms._test_setups import AROUND_MEANS, BAR, AlgorithmSetup
from screener.algorithms.result import Result
from screener.algorithms.thresholding._base import NO_CONFIDENCE, ThresholdingAlgorithm
from screener.algorithms.thresholding._scheduler import heap_picks
from screener.arrays import FloatArray, IntArray, grown
from screener.errors import ConfigError
from screener.stats import beta_tails

__all__ = ["OptKG"]


class OptKG(ThresholdingAlgorithm):
    """Optimistic knowledge gradient (Chen, Lin, Zhou 2015, "Statistical decision making for
    optimal budget allocation in crowd labeling", JMLR) with a Beta(prior_a, prior_b) prior.

    Rewards are rescaled to [0, 1] and the bar to ``x = (threshold - lower) / (upper -
    lower)``, which must lie strictly inside (0, 1). Worker i has the posterior Beta(a_i, b_i)
    with ``a_i = prior_a + S_i`` and ``b_i = prior_b + T_i - S_i`` (S_i the sum of rescaled
    rewards: exact for Bernoulli rewards, pseudo-counts for graded ones). Its value is
    ``h = max(P(mu_i >= x), P(mu_i < x))``; Opt-KG pulls the worker whose value rises most
    under the better of the two outcomes (a success, a + 1, or a failure, b + 1), with no
    initial round (the prior stands in). A worker is classified ABOVE iff its posterior
    P(mu_i >= x) >= 1/2. An exact tie, P(mu_i >= x) = 1/2 by symmetry (x = 1/2 and a_i =
    b_i: as many correct as wrong answers under a symmetric prior), is therefore ABOVE,
    decided from the counts, never from the rounding of a computed tail.

    Pending pulls (a constant liar): each pull in flight, or already chosen in the same
    batch, is counted as an answer equal to the posterior mean, ``a_i += p_i a_i / (a_i +
    b_i)`` and ``b_i += p_i b_i / (a_i + b_i)``; this keeps the mean and narrows the posterior,
    so a batch spreads over workers. Ties go to the lowest worker index.

    Cost: O(1) per answer, no incomplete beta function on the common path. With ``L =
    I_x(a, b)`` (the posterior mass below the bar) and ``w = x^a (1 - x)^b / B(a, b)``, one
    answer moves L by the one-step identities ``I_x(a + 1, b) = L - w / a`` and ``I_x(a, b +
    1) = L + w / b`` (DLMF 8.17.20-21). The gain is thus ``w / a`` (or ``w / b``) for the
    outcome that keeps the worker on its side, or ``w / b - |1 - 2 L|`` (or ``w / a - ...``)
    for the other outcome, if that one puts it across: the larger of the two. Each worker's
    lean ``L - 1/2`` is kept up to date by the identities as its answers arrive (Bernoulli
    rewards; a graded answer in (0, 1) recomputes it by the continued fraction); with pulls
    in flight, the lied state's lean is bracketed by the lattice states around it, walked
    the same way. The lean decides only the side and whether the crossing term can win;
    where the tracked value (error below ``_LEAN_ERROR``) is too close to call, the continued
    fraction decides. Every key is therefore, bit for bit, the function of (a, b) that the
    general path computes: workers in the same state tie exactly, and at x = 1/2 so do
    mirror images (a, b) and (b, a). Keys are ``-log(gain)``, which keeps far-off workers
    ordered where the gain underflows. Other exact ties between different states (at x =
    1/2, Beta(2, 1) and Beta(2, 3) both gain 1/8) are ordered by rounding.

    Examples
    --------
    On six simulated workers (three workers under the bar of 0.5, three over it):

    >>> from screener import BernoulliRewards, simulate
    >>> means = [0.2, 0.35, 0.45, 0.65, 0.75, 0.9]
    >>> algorithm = OptKG(6, threshold=0.5, budget=600, seed=0)
    >>> result = simulate(algorithm, BernoulliRewards(means, seed=1))
    >>> result.stop_reason.value, result.total_pulls
    ('budget spent', 600)
    >>> [w.decision.value for w in sorted(result.workers, key=lambda w: w.arm)]
    ['below', 'below', 'below', 'above', 'above', 'above']
    """

    name = "opt-kg"
    test_setups: ClassVar[tuple[AlgorithmSetup, ...]] = (AlgorithmSetup(BAR, means=AROUND_MEANS),)
    pull_each_first = False
    needs_answers = False
    guarantee: ClassVar[str | None] = (
        "fixed budget: optimistic one-step lookahead on the expected number of correct "
        "classifications under the Beta prior, consistent (Chen, Lin, Zhou 2015); " + NO_CONFIDENCE
    )

    def __init__(
        self, n_workers: int, *, prior_a: float = 1.0, prior_b: float = 1.0, **kwargs: Any
    ) -> None:
        super().__init__(n_workers, **kwargs)
        for label, value in (("prior_a", prior_a), ("prior_b", prior_b)):
            if not (math.isfinite(value) and value > 0):
                raise ConfigError(f"{label} must be a finite number > 0, got {value}", "try 1")
        self.prior_a = float(prior_a)
        self.prior_b = float(prior_b)
        self.bar = (self.threshold - self.lower) / self.width
        if not 0.0 < self.bar < 1.0:
            raise ConfigError(
                f"Opt-KG needs the threshold strictly inside ({self.lower}, {self.upper}), "
                f"got {self.threshold}"
            )
        self._log_x = math.log(self.bar)
        self._log_1mx = math.log1p(-self.bar)
        self._symmetric = self.bar == 0.5
        # Per worker: posterior (a, b), lean L - 1/2, log w, and the answers they reflect.
        n, a, b = self.n_arms, self.prior_a, self.prior_b
        lean, log_w = self._exact_lean(a, b), self._log_density(a, b)
        self._a, self._b = [a] * n, [b] * n
        self._lean, self._log_w = [lean] * n, [log_w] * n
        self._seen = np.zeros(n, dtype=np.int64)
        self._keys: FloatArray = np.full(n, -self._log_gain(a, b, lean, log_w))

    #: Workers told an answer by ``tell1`` since the last refresh, in order; None when
    #: answers came in a batch (or before the first refresh): the refresh compares counts.
    _told: list[int] | None = None

    def _on_joined(self, arms: IntArray) -> None:
        super()._on_joined(arms)
        count, a, b = arms.size, self.prior_a, self.prior_b
        lean, log_w = self._exact_lean(a, b), self._log_density(a, b)
        self._a += [a] * count
        self._b += [b] * count
        self._lean += [lean] * count
        self._log_w += [log_w] * count
        self._seen = grown(self._seen, count, 0)
        self._keys = grown(self._keys, count, -self._log_gain(a, b, lean, log_w))

    def posterior(self) -> tuple[FloatArray, FloatArray]:
        """Beta posterior parameters (a_i, b_i) of every worker from the answers so far."""
        count = self.stats.count.astype(np.float64)
        successes = (self.stats.total - self.lower * count) / self.width
        return self.prior_a + successes, self.prior_b + count - successes

    def posterior_below(self) -> FloatArray:
        """``P(mu_i < x) = I_x(a_i, b_i)`` of every worker, as the index tracks it."""
        self._ensure_fresh()
        return np.clip(np.asarray(self._lean) + 0.5, 0.0, 1.0)

    # --------------------------------------------------------------------- the index
    def _on_answer1(self, pull_id: int, arm: int, reward: float) -> None:
        self.stats.update(arm, reward)
        if self._told is not None:
            self._told.append(arm)

    def _on_answers(self, pull_ids: IntArray, arms: IntArray, rewards: FloatArray) -> None:
        super()._on_answers(pull_ids, arms, rewards)
        self._told = None  # the refresh finds the workers that moved by their counts

    def _refresh(self) -> None:
        """Move the workers with new answers (the means are computed for the result only)."""
        told, self._told = self._told, []
        if told is not None and len(told) <= 1:  # ``tell1`` of one answer, or none, since
            if told:
                self._refresh_one(told[0])
            return
        answered = self.stats.count
        changed = (answered != self._seen).nonzero()[0]  # (flatnonzero's wrapper costs more)
        if changed.size == 0:
            return
        counts = answered[changed]
        totals = self.stats.total[changed]
        self._seen[changed] = counts
        for arm, count, total in zip(
            changed.tolist(), counts.tolist(), totals.tolist(), strict=True
        ):
            successes = (total - self.lower * count) / self.width
            self._move(arm, self.prior_a + successes, self.prior_b + count - successes)

    def _refresh_one(self, arm: int) -> None:
        """``_refresh`` when ``arm`` alone has new answers, in scalar steps."""
        count, total = int(self.stats.count[arm]), float(self.stats.total[arm])
        self._seen[arm] = count
        successes = (total - self.lower * count) / self.width
        self._move(arm, self.prior_a + successes, self.prior_b + count - successes)

    def _move(self, arm: int, a: float, b: float) -> None:
        """Worker ``arm``'s posterior is now Beta(a, b): update its lean and key."""
        old_a, old_b = self._a[arm], self._b[arm]
        wins, losses = a - old_a, b - old_b
        if self._is_tie(a, b):
            lean = 0.0
        elif _walkable(wins, losses):
            start = (old_a, old_b, self._lean[arm], math.exp(self._log_w[arm]))
            lean = self._walk(*start, int(wins), int(losses))[2]
        else:  # graded answers: the general path
            lean = self._exact_lean(a, b)
        log_w = self._log_density(a, b)
        log_gain = self._fast_log_gain(a, b, lean, log_w)
        if log_gain is None:
            lean = self._exact_lean(a, b)
            log_gain = self._log_gain(a, b, lean, log_w)
        self._a[arm], self._b[arm] = a, b
        self._lean[arm], self._log_w[arm] = lean, log_w
        self._keys[arm] = -log_gain

    def _walk(
        self, a: float, b: float, lean: float, w: float, wins: int, losses: int
    ) -> tuple[float, float, float, float]:
        """``(a, b, lean, w)`` after ``wins`` successes, then ``losses`` failures, by the
        one-step identities; w by its own, ``w(a + 1, b) = w x (a + b) / a`` and ``w(a, b + 1)
        = w (1 - x) (a + b) / b`` (where w underflows, the lean no longer moves anyway)."""
        a, b, lean, w = _steps(self.bar, (a, b, lean, w), wins, losses)
        return a, b, min(max(lean, -0.5), 0.5), w

    def _index(self, arms: IntArray, effective: FloatArray) -> FloatArray:
        keys = self._keys[arms]
        answered = self._seen[arms]
        for j in np.flatnonzero(effective > answered).tolist():
            keys[j] = self._key(int(arms[j]), float(effective[j]) - float(answered[j]))
        return keys

    def _key(self, arm: int, lies: float) -> float:
        """Worker ``arm``'s key with ``lies`` pulls in flight."""
        return float(self._keys[arm]) if lies <= 0.0 else -self._lied_log_gain(arm, lies)

    def _schedule(self, limit: int) -> IntArray:
        """The shared scheduler's heap (``heap_picks``: lowest key first, ties to the lowest
        index, each pick counted as a pull in flight) with the keys as plain floats: the
        picked worker's next key is one scalar evaluation, where the index's vectorised call
        per pick would cost more than the key."""
        # ``pending``, not the ledger: a retried pull is counted in before it is recorded.
        if self.unavailable_reason or self.pending.any():
            arms = np.flatnonzero(self.available)
            keys = self._index(arms, (self.stats.count + self.pending)[arms].astype(np.float64))
        else:  # every worker available, none in flight: ``_index`` gives the tracked keys
            arms, keys = np.arange(self.n_arms), self._keys
        in_flight = self.pending.tolist()
        lattices: dict[int, _Lattice] = {}  # a worker picked again walks on from its last key
        lied_log_gain = self._lied_log_gain  # looked up once a batch, not once a pick

        def next_key(arm: int, picked: int) -> float:  # picked >= 1: a pull in flight
            lattice = lattices.get(arm)
            if lattice is None:
                lattice = lattices[arm] = self._lattice(arm)
            return -lied_log_gain(arm, float(in_flight[arm] + picked), lattice)

        return heap_picks(arms, keys, limit, next_key)

    def _schedule1(self) -> int:
        """``_schedule(1)`` as a scalar: with every worker available and no pull in flight,
        the lowest tracked key (ties to the lowest index), -1 when it is infinite."""
        keys = self._keys
        if self.unavailable_reason or self._ledger.n_pending or not keys.size:
            return super()._schedule1()
        best = int(keys.argmin())
        return -1 if keys[best] == math.inf else best

    def _lied_log_gain(self, arm: int, lies: float, lattice: _Lattice | None = None) -> float:
        """The log gain of ``arm`` with ``lies`` pulls in flight counted at its mean
        (``lattice``: the worker's lattice as walked so far, if kept)."""
        a, b = self._a[arm], self._b[arm]
        lied_a, lied_b = a + lies * a / (a + b), b + lies * b / (a + b)
        log_w = self._log_density(lied_a, lied_b)
        bounds = (lattice or self._lattice(arm)).bracket(lied_a - a, lied_b - b)
        if bounds is not None and (bounds[0] > 0.0 or bounds[1] < 0.0):
            nearest = bounds[0] if bounds[0] > 0.0 else bounds[1]  # |lean| is at least this
            fast = self._fast_log_gain(lied_a, lied_b, nearest, log_w)
            if fast is not None:
                return fast
        return self._log_gain(lied_a, lied_b, self._exact_lean(lied_a, lied_b), log_w)

    def _lattice(self, arm: int) -> _Lattice:
        """Worker ``arm``'s lattice, walked from its tracked state."""
        start = (self._a[arm], self._b[arm], self._lean[arm], math.exp(self._log_w[arm]))
        return _Lattice(self.bar, start)

    def _gain(self, a: float, b: float) -> float:
        """Optimistic KG: the larger rise of max(P(mu >= x), P(mu < x)) after one answer."""
        log_w = self._log_density(a, b)
        return math.exp(self._log_gain(a, b, self._exact_lean(a, b), log_w))

    def _log_gain(self, a: float, b: float, lean: float, log_w: float) -> float:
        """``log`` of the gain at Beta(a, b) with ``I_x(a, b) = 1/2 + lean`` (exact lean)."""
        log_success = log_w - math.log(a)  # log(I_x(a, b) - I_x(a + 1, b))
        log_failure = log_w - math.log(b)  # log(I_x(a, b + 1) - I_x(a, b))
        keep, flip = (log_success, log_failure) if lean <= 0.0 else (log_failure, log_success)
        crossing = math.exp(flip) - 2.0 * abs(lean)  # the rise if that outcome flips the side
        return max(keep, math.log(crossing)) if crossing > 0.0 else keep

    def _fast_log_gain(self, a: float, b: float, lean: float, log_w: float) -> float | None:
        """``_log_gain`` from a tracked lean when its error cannot change the result (the side
        is clear and the crossing term cannot win), else None."""
        if abs(lean) <= _LEAN_ERROR:
            return None
        log_success = log_w - math.log(a)
        log_failure = log_w - math.log(b)
        keep, flip = (log_success, log_failure) if lean < 0.0 else (log_failure, log_success)
        crossing = math.exp(flip) - 2.0 * (abs(lean) - _LEAN_ERROR)
        return keep if crossing <= math.exp(keep) * (1.0 - 1e-9) else None

    def _is_tie(self, a: float, b: float) -> bool:
        """P(mu >= x) = 1/2 exactly, by symmetry: x = 1/2 and a = b."""
        return self._symmetric and a == b

    def _exact_lean(self, a: float, b: float) -> float:
        """``I_x(a, b) - 1/2`` by the continued fraction; at x = 1/2 from (min, max) so that
        mirror-image states get opposite leans exactly, and 0 at a tie."""
        if self._symmetric:
            if a == b:
                return 0.0
            if a > b:
                return -self._exact_lean(b, a)
        below, above = beta_tails(self.bar, a, b)
        return below - 0.5 if below <= above else 0.5 - above

    def _log_density(self, a: float, b: float) -> float:
        """``log w = log(x^a (1 - x)^b / B(a, b))`` (symmetric in (a, b) at x = 1/2)."""
        log_beta = math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)
        return a * self._log_x + b * self._log_1mx - log_beta

    # -------------------------------------------------------------------------- result
    def _above(self) -> NDArray[np.bool_]:
        """ABOVE iff P(mu_i >= x) >= 1/2, i.e. I_x(a_i, b_i) <= 1/2; ties (lean 0) ABOVE."""
        above = np.empty(self.n_arms, dtype=bool)
        pairs = zip(self._a, self._b, self._lean, strict=True)
        for arm, (a, b, lean) in enumerate(pairs):
            if abs(lean) <= _LEAN_ERROR and not self._is_tie(a, b):
                lean = self._exact_lean(a, b)
            above[arm] = lean <= 0.0
        return above

    def _describe(self) -> Result:
        super()._refresh()  # the means, for the result lines only
        return super()._describe()


#: Bound on the error of a worker's tracked lean ``I_x(a, b) - 1/2`` (the recursion adds about
#: 1e-16 per answer; lgamma's error at 10^5 answers is ~1e-10 of a term far smaller than 1).
_LEAN_ERROR = 1e-9
#: Longest walk of one update (a worker given many answers at once takes the general path).
_MAX_STEPS = 32


def _steps(
    x: float, state: tuple[float, float, float, float], wins: int, losses: int
) -> tuple[float, float, float, float]:
    """``OptKG._walk`` at bar ``x`` before it clamps the lean: ``wins`` one-step identities
    for a success, then ``losses`` for a failure."""
    a, b, lean, w = state
    for _ in range(wins):
        lean -= w / a
        w *= x * (a + b) / a
        a += 1.0
    for _ in range(losses):
        lean += w / b
        w *= (1.0 - x) * (a + b) / b
        b += 1.0
    return a, b, lean, w


class _Lattice:
    """One worker's lattice states walked from its tracked state (``OptKG._lattice``) as
    ``_steps`` walks them (successes, then failures), and the bounds they put on the lean of
    a lied state; the last successes' and failures' walks are kept: the lies of a batch on
    one worker grow pick by pick, and each walk goes on from the last one instead of
    starting over (the same steps in the same order, so the same floats)."""

    def __init__(self, x: float, start: tuple[float, float, float, float]) -> None:
        self._x = x
        self._start = start
        self._wins: tuple[int, tuple[float, float, float, float]] = (0, start)
        self._losses: tuple[int, int, tuple[float, float, float, float]] = (0, 0, start)

    def bracket(self, more_a: float, more_b: float) -> tuple[float, float] | None:
        """Bounds on the lean at Beta(a + more_a, b + more_b) (fractional steps): I_x falls
        in a and rises in b, so the lattice points around that state bracket it (None: too
        far to walk)."""
        whole_a, whole_b = math.floor(more_a), math.floor(more_b)
        if whole_a + whole_b + 1 > _MAX_STEPS:
            return None
        a, b, lean, w = self.at(whole_a, whole_b)
        lean = min(max(lean, -0.5), 0.5)  # as ``_walk`` ends (the tracked lean is inside)
        low = lean - w / a if more_a > whole_a else lean  # one more success
        high = lean + w / b if more_b > whole_b else lean  # one more failure
        return low, high

    def at(self, wins: int, losses: int) -> tuple[float, float, float, float]:
        """``(a, b, lean, w)`` after ``wins`` successes, then ``losses`` failures."""
        done, state = self._wins
        if done > wins:
            done, state = 0, self._start
        if done < wins:
            state = _steps(self._x, state, wins - done, 0)
            self._wins = (wins, state)
        after, done, end = self._losses
        if after != wins or done > losses:
            done, end = 0, state
        if done < losses:
            end = _steps(self._x, end, 0, losses - done)
        self._losses = (wins, losses, end)
        return end


def _walkable(wins: float, losses: float) -> bool:
    """Whole numbers of new successes and failures (Bernoulli answers), few enough to walk."""
    whole = wins.is_integer() and losses.is_integer()
    return whole and wins >= 0 and losses >= 0 and wins + losses <= _MAX_STEPS
