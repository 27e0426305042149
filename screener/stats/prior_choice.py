"""Which crowd prior a screening run decides under, and whether the crowd fits it.

``PriorChoice`` follows one run: it counts every answer for the predictive check
(``screener.stats.prior_check``), refits the prior of its family from the answer table on
demand, and at a few looks checks the prior in force against the answers so far:

* family ``"beta"``: the Beta of ``fit_beta_prior`` always; ``"npmle"``: the grid prior;
* family ``"auto"``: the Beta, unless at a look the Beta fails the check AND the two-Beta
  mixture (``screener.stats.prior_mixture``) fits better by BIC; then the mixture, until a
  later look in which the Beta passes again or the mixture no longer fits better. Both
  conditions: BIC alone would switch on a crowd the Beta fits but whose mixture fit gains by
  chance, and a failed check alone says nothing of whether two components fit better.

Looks: at the first refit with three answers per worker who answered (a Beta fits nearly any
first two answers of every worker: no power before), then at every refit where the answers
have doubled since the last look, while at most ``interim_looks`` of them; and a final look
whenever the run can go no further (every worker decided, at ``horizon`` or gone), on all its
answers. Each interim look checks at level ``level / (2 x interim_looks)``, the j-th final look
at ``level / 2^(j + 1)`` (an open pool can go on after one, when workers join: ``reopen``), so
by Bonferroni a run on a crowd its prior fits raises a false alarm with probability at most
about ``level`` (the check's own reference is conservative). Most of the
power is at the end: a crowd-prior run decides most workers after three to six answers, and
the shape of a crowd's low tail shows in the answers of its hard workers, which come last.
The first look that the prior in force fails raises the misfit flag, which stays raised: the
decisions after it lean on a prior the answers reject, and the report says so above them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike

from screener.stats.prior import (
    GridPrior,
    PriorSet,
    beta_prior_region,
    fit_beta_prior,
    fit_grid_prior,
    prior_identified,
)
from screener.stats.prior_check import AnswerLattice, PriorCheck, predictive_check
from screener.stats.prior_mixture import BetaMixture, beta_mixture_region, fit_beta_mixture

__all__ = ["FAMILIES", "Misfit", "PriorChoice"]

#: The families a run may be given: ``auto`` chooses between the Beta and the two-Beta mixture.
FAMILIES = ("auto", "beta", "npmle")


@dataclass(frozen=True)
class Misfit:
    """The look that first rejected the prior in force: its check (with the answers by then),
    the family checked and the level it failed."""

    check: PriorCheck
    family: str
    level: float


class PriorChoice:
    """The crowd prior of one run (module docstring). ``contamination`` is mixed into every
    prior the check judges, as into the priors the run decides under."""

    def __init__(self, family: str, *, horizon: int, level: float, contamination: float) -> None:
        if family not in FAMILIES:
            raise ValueError(f"family must be one of {FAMILIES}, got {family!r}")
        self.family = family
        self.level = float(level)
        self.contamination = float(contamination)
        #: Interim looks at 3, 6, 12, ... answers per worker, up to ``horizon``.
        self.interim_looks = max(0, math.floor(math.log2(horizon / 3.0)) + 1)
        self.lattice = AnswerLattice.empty(horizon)
        #: The family decisions lean on now: "beta", "two-beta" or "npmle".
        self.in_force = "npmle" if family == "npmle" else "beta"
        self.mixture: BetaMixture | None = None
        self.last_check: PriorCheck | None = None
        self.misfit: Misfit | None = None
        self.looks = 0
        #: Answers when the two-Beta prior first came into force (None: never).
        self.two_beta_from: int | None = None
        #: Whether the run has gone as far as it can (the final look taken); ``reopen`` undoes.
        self.over = False
        #: The level of the last look's check.
        self.last_level = 0.0
        self._interim = self._finals = 0
        self._next_look = 0

    def reopen(self) -> None:
        """Workers joined after the run went as far as it could: it goes on, and may end in
        another final look (at half the level of the last)."""
        self.over = False

    def record(
        self, successes_before: ArrayLike, counts_before: ArrayLike, rewards: ArrayLike
    ) -> None:
        """Count answers (rewards scaled to [0, 1]) given by workers at these states."""
        self.lattice.add(successes_before, counts_before, rewards)

    def refit(self, successes: ArrayLike, counts: ArrayLike, *, final: bool = False) -> GridPrior:
        """The fitted prior of the family in force (uncontaminated), after a look when one is
        due; ``final``: the run can go no further, the final look is due (once). A look checks
        the prior the decisions so far leaned on (a failure raises the misfit flag), then, in
        family ``auto``, chooses the family for the decisions to come."""
        final, self.over = final and not self.over, self.over or final
        if self.family == "npmle":
            fitted = fit_grid_prior(successes, counts)
            if self._look_due(counts, final):
                self._look(predictive_check(self._judged(fitted), self.lattice), final)
            return fitted
        beta = fit_beta_prior(successes, counts)
        if self.in_force == "two-beta":
            self.mixture = fit_beta_mixture(successes, counts, start=self.mixture)
            if self.mixture.share <= 0.0:  # a component emptied: one Beta holds the crowd
                self.in_force = "beta"
        if not self._look_due(counts, final):
            return self._in_force(beta)
        check = self._look(
            predictive_check(self._judged(self._in_force(beta)), self.lattice), final
        )
        level = self.last_level
        if self.family == "auto":
            if self.in_force != "beta":
                check = predictive_check(self._judged(beta), self.lattice)
            self.in_force = "beta"
            if check.p_value < level:
                mixture = fit_beta_mixture(successes, counts)
                if mixture.bic_gain > 0.0:
                    self.in_force, self.mixture = "two-beta", mixture
                    if self.two_beta_from is None:
                        self.two_beta_from = check.answers
                    check = predictive_check(self._judged(mixture.prior), self.lattice)
            self.last_check = check
        return self._in_force(beta)

    def _in_force(self, beta: GridPrior) -> GridPrior:
        if self.in_force == "two-beta" and self.mixture is not None:
            return self.mixture.prior
        return beta

    def region(self, successes: ArrayLike, counts: ArrayLike, *, level: float) -> PriorSet:
        """The priors of the family in force the answers cannot rule out (uncontaminated)."""
        if self.in_force == "two-beta" and self.mixture is not None:
            return beta_mixture_region(self.mixture, successes, counts, level=level)
        return beta_prior_region(successes, counts, level=level)

    def summary(self) -> dict[str, object]:
        """What the run's result reports of its prior: the family in force, the last look's
        check, the misfit flag (and when it was raised), the mixture in force."""
        check, misfit, mixture = self.last_check, self.misfit, self.mixture
        return {
            "prior_family": self.in_force,
            "prior_check_p": None if check is None else check.p_value,
            "prior_check_level": self.last_level if self.looks else None,
            "prior_looks": self.looks,
            "prior_misfit": misfit is not None,
            "prior_misfit_at_answers": None if misfit is None else misfit.check.answers,
            "prior_misfit_family": None if misfit is None else misfit.family,
            "prior_two_beta_from_answers": self.two_beta_from,
            "prior_mixture": None if self.in_force != "two-beta" or mixture is None else {
                "share": mixture.share, "low_mean": mixture.low[0],
                "low_concentration": mixture.low[1], "high_mean": mixture.high[0],
                "high_concentration": mixture.high[1], "bic_gain": mixture.bic_gain,
            },
        }  # fmt: skip

    def _judged(self, prior: GridPrior) -> GridPrior:
        return prior.contaminated(self.contamination)

    def _look_due(self, counts: ArrayLike, final: bool) -> bool:
        if not self.level or not prior_identified(counts):
            return False
        if final:
            return True
        answered = int((np.asarray(counts) > 0).sum())
        due = max(self._next_look, 3 * answered)
        return self._interim < self.interim_looks and self.lattice.answers >= due

    def _look(self, check: PriorCheck, final: bool) -> PriorCheck:
        """Count a look whose check judged the prior in force, at its level, and raise the
        flag if it failed (the first time)."""
        if final:
            self._finals += 1
            self.last_level = self.level / 2.0**self._finals
        else:
            self._interim += 1
            self.last_level = self.level / (2.0 * self.interim_looks)
        if self.misfit is None and check.p_value < self.last_level:
            self.misfit = Misfit(check, self.in_force, self.last_level)
        self.looks += 1
        self._next_look = 2 * check.answers
        self.last_check = check
        return check
