"""What ``CrowdPrior``'s result says: its promise, each worker's reason, the misfit warning."""

from __future__ import annotations

from screener.stats.prior_choice import PriorChoice

__all__ = [
    "BAYES_GUARANTEE",
    "decided_evidence",
    "misfit_warnings",
    "open_evidence",
    "own_evidence",
    "promise",
]

BAYES_GUARANTEE = (
    "Bayesian: if worker accuracies follow the crowd prior fitted from the answers, each "
    "ban or acceptance is wrong with posterior probability at most q, so the expected "
    "share of wrong bans is at most q; no frequentist guarantee"
)
_ROBUST_GUARANTEE = (
    "Bayesian, robust: each ban or acceptance is wrong with posterior probability at most "
    "q under every Beta crowd prior the answers do not rule out (likelihood-ratio region), "
    "so the expected share of wrong bans is at most q if accuracies are Beta-distributed "
    "across the crowd; no frequentist guarantee"
)
_MIXTURE_GUARANTEE = (
    "Bayesian, robust: each ban or acceptance is wrong with posterior probability at most "
    "q under every two-Beta crowd prior the answers do not rule out (likelihood-ratio "
    "region, on a lattice around the fit), so the expected share of wrong bans is at most "
    "q if accuracies follow a mixture of two Betas across the crowd; no frequentist "
    "guarantee"
)
_COST_GUARANTEE = (
    "Bayes-optimal stopping: minimises the expected cost per worker (questions, false "
    "bans, missed bad workers) when worker accuracies follow the fitted crowd prior; it "
    "trades mistakes for questions at the costs given, so it bans a worker when a ban is "
    "cheaper than asking again, however likely it is above the bar, and bounds no share of "
    "wrong bans; no frequentist guarantee"
)
_FAMILY_NAMES = {"beta": "Beta prior", "two-beta": "two-Beta prior", "npmle": "grid prior"}


def promise(*, cost_mode: bool, robust: bool, two_beta: bool, pilot: int | None) -> str:
    """The result's guarantee: the decision rule's, over the two-Beta prior's own region
    where that prior is in force, and saying so when a pilot's prior decided workers
    without a question (``pilot``: its size, None when everyone was in it)."""
    if cost_mode:
        text = _COST_GUARANTEE
    elif robust:
        text = _MIXTURE_GUARANTEE if two_beta else _ROBUST_GUARANTEE
    else:
        text = BAYES_GUARANTEE
    text += (
        "; and a worker whose own answers alone put it on one side of the bar (an anytime "
        "interval at level q) is decided so whatever the prior says: such a decision is "
        "wrong with probability at most q for any worker"
    )
    if pilot is not None:
        text += (
            f"; the prior was fitted on a pilot of {pilot} workers and "
            "the others may be decided on it alone, without a question"
        )
    return text


def decided_evidence(
    below: str, p_bad: float, *, banned: bool, q: float, cost_mode: bool, robust: bool
) -> str:
    """The condition that decided: the probability it held at (the worst case over the
    region when robust) against the level it had to clear; in cost mode a ban of a worker
    more likely above the bar than below says that it was bought, not found.

    Examples
    --------
    >>> decided_evidence("P(below 0.6)", 0.3, banned=True, q=0.1, cost_mode=True, robust=False)
    'cheaper than asking again, though more likely above the bar (P(below 0.6) = 0.300 under \
the fitted crowd prior); the Bayes-optimal stopping rule under the costs decided'
    """
    if cost_mode:
        evidence = f"{below} = {p_bad:.3f} under the fitted crowd prior"
        if banned and p_bad < 0.5:  # the ban is a price, not a finding: say so
            return (
                f"cheaper than asking again, though more likely above the bar ({evidence}); "
                "the Bayes-optimal stopping rule under the costs decided"
            )
        return f"the Bayes-optimal stopping rule under the costs decided ({evidence})"
    need = f">= {1.0 - q:g}" if banned else f"<= {q:g}"
    if robust:
        bound = "at least" if banned else "at most"
        return (
            f"{below} {bound} {p_bad:.3f} under every crowd prior the answers allow (needs {need})"
        )
    return f"{below} = {p_bad:.3f} under the fitted crowd prior (needs {need})"


def open_evidence(
    below: str, p_bad: float, *, q: float, cost_mode: bool, span: tuple[float, float] | None
) -> str:
    """Why an undecided worker is not decided yet, in the terms its decision would take
    (``span``: its probability's range over the region when robust)."""
    if cost_mode:
        return (
            f"the stopping rule asks for more answers ({below} = {p_bad:.3f} "
            "under the fitted crowd prior)"
        )
    levels = f"a ban needs >= {1.0 - q:g}, an acceptance <= {q:g}"
    if span is None:
        return f"{below} = {p_bad:.3f} under the fitted crowd prior: {levels}"
    return (
        f"{below} from {span[0]:.3f} to {span[1]:.3f} over the crowd "
        f"priors the answers allow: {levels} under all of them"
    )


def misfit_warnings(fit: PriorChoice, bans_before_misfit: int | None) -> list[str]:
    """The misfit flag, for the report to show above the decisions (``extra["warnings"]``)."""
    misfit = fit.misfit
    if misfit is None:
        return []
    family = _FAMILY_NAMES[misfit.family]
    then = ""
    if fit.in_force == "two-beta":
        then = (
            f"; the two-Beta prior fits better and is in force from {fit.two_beta_from:,} answers"
        )
    return [
        f"THE CROWD DOES NOT FIT THE PRIOR: the {family} failed its predictive check "
        f"(p = {misfit.check.p_value:.2g} < {misfit.level:.2g}) at "
        f"{misfit.check.answers:,} answers, after {bans_before_misfit} bans; the "
        f"decisions' promise assumes the prior fits{then}"
    ]


def own_evidence(count: int, right: float, threshold: float, q: float, *, banned: bool) -> str:
    """Why a worker decided on its own ``count`` answers alone (``right`` of them right,
    fractional when graded) stands where it does."""
    side = "under" if banned else "at or over"
    return (
        f"its own {count} answers ({right:g} right) put it {side} {threshold:g} whatever "
        f"the crowd prior says (anytime interval, wrong with probability at most {q:g})"
    )
