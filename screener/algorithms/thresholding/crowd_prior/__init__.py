"""Screening under a crowd prior (empirical Bayes): ban or accept each worker against a bar as
soon as the crowd's answers make the decision probable enough, or cheap enough.

Real workers answer a few dozen gold questions at most, far too few for a family-wise
frequentist guarantee. What a requester can use is how the crowd itself is distributed: most
crowds are mostly good workers plus a tail of spammers, and that is visible after a few
answers from everyone. ``CrowdPrior`` fits the distribution of worker accuracy from all the
answers so far (a Beta by default, ``screener.stats.prior.fit_beta_prior``), gives each worker the
posterior probability of being below the bar, and decides:

* posterior mode (default): BAN when ``P(accuracy < bar) >= 1 - q``, ACCEPT when it is at most
  ``q``. Each decision is wrong with posterior probability at most q, so when the prior fits
  the expected share of good workers among the banned (and of bad among the accepted) is at
  most q: a Bayesian promise, not a frequentist one. By default (``robust=0.95``) the
  probability must clear the level under every Beta prior the answers cannot rule out (the
  95% likelihood-ratio region of its mean and concentration, ``beta_prior_region``), not only
  under the best-fitting one: after a few answers per worker a crowd's dispersion is barely
  identified, and the fitted Beta alone overstates how sure a decision is. ``robust=0``
  decides under the fit alone.
* cost mode (``false_ban`` and ``missed_bad`` given, a question costing ``question``): the
  Bayes-optimal stopping rule under the prior (``screener.stats.stopping_table``): a worker is
  asked again only while the expected saving in mistakes is worth the price of a question.

Whether the crowd fits the prior is checked as the answers come (``PriorChoice``, in
``screener.stats.prior_choice``): a posterior predictive check of every answer against the
prior's prediction, at a few looks during the run and a final one, with a false alarm at most
``fit_check`` (0.05) per run on a crowd the prior fits. A Beta holds no crowd of "mostly good
plus a block of spammers"; with ``prior="auto"`` (the default) a look at which the Beta fails
the check and a mixture of two Betas fits better by BIC moves the decisions to come to the
two-Beta prior (robust over its own likelihood-ratio region,
``screener.stats.prior_mixture``). The first look the prior in force fails raises the misfit
flag: the result's ``extra`` says when (``prior_misfit_at_answers``, ``bans_before_misfit``)
and carries it in ``warnings`` for the report to show above the decisions. The check's power
comes late: a worker is often decided before the answers can tell the crowd's shape.

A pilot (``pilot=m``) buys the crowd's distribution first: only m workers (a seeded random
choice) are asked, each at least ``min_answers`` times, until every one of them is decided or at
``max_answers``. Then the prior is refit from their answers and the other workers are judged
under it before any question: where the crowd is good enough (or bad enough) for the costs or
the q stated, a worker outside the pilot is accepted (or banned) on the prior alone, asked
nothing; otherwise it is asked, with no minimum, until its own answers decide it. In cost
mode that decision before any question is taken only when every Beta prior the pilot's answers
cannot rule out (the 95% likelihood-ratio region, as ``robust``) agrees on it. Without a
pilot (the default) every worker is asked at least ``min_answers`` times. What a pilot saves is
the questions a crowd already known would not need; what it risks is a prior fitted on m
workers: the decisions on the prior alone are as right as the pilot is representative of the
crowd. A worker who joins after the start (``add_workers``: an open roster, where the pilot is
the first to arrive, not a random draw) may be accepted on the prior alone but is never banned
on it: arrival order can go with quality, and a prior fitted on spammers who came first would
otherwise turn away every worker after them unasked, with no answer left to show it wrong.

Decisions are final (a ban is acted on when it is made): a decided worker is not asked again
and keeps its decision when later answers of other workers move the prior. The prior is refit
from the whole answer table after every n_workers answers (every m during a pilot, and once at
its end) and a worker is judged when its own answer arrives (the workers outside a pilot also
at its end), so the decisions are a function of the order of the answers alone, and a replay of
the journal makes the same decisions. No worker is decided before the answers identify a crowd
prior (two workers with two answers each, ``prior_identified``): until then the prior is the
uniform placeholder, which no answer has ruled in, and a worker who reaches ``min_answers``
meanwhile is judged at the refit that first identifies one.
"""

from screener.algorithms.thresholding.crowd_prior.algorithm import CrowdPrior

__all__ = ["CrowdPrior"]
