"""Small statistical helpers for tests (scipy is not available at runtime)."""

from __future__ import annotations

import math

__all__ = ["assert_rate_at_most", "binomial_sf"]


def binomial_sf(k: int, n: int, p: float) -> float:
    """``P(X >= k)`` for ``X ~ Binomial(n, p)``, summed exactly term by term in log space."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    if p <= 0.0:
        return 0.0
    if p >= 1.0:
        return 1.0
    log_p, log_q = math.log(p), math.log1p(-p)
    log_n_fact = math.lgamma(n + 1)
    logs = [
        log_n_fact - math.lgamma(j + 1) - math.lgamma(n - j + 1) + j * log_p + (n - j) * log_q
        for j in range(k, n + 1)
    ]
    top = max(logs)
    return min(1.0, math.exp(top) * math.fsum(math.exp(value - top) for value in logs))


def assert_rate_at_most(events: int, trials: int, rate: float, alpha: float = 0.01) -> None:
    """One-sided binomial test of ``H0: true rate <= rate``: fail when ``P(X >= events) < alpha``.

    Under H0 the test fails with probability at most ``alpha``; with fixed seeds it is
    deterministic.
    """
    p_value = binomial_sf(events, trials, rate)
    assert p_value >= alpha, (
        f"{events} events in {trials} trials (rate {events / trials:.4g}) is significantly "
        f"above {rate:.4g}: P(X >= {events} | n={trials}, p={rate:.4g}) = {p_value:.3g} < {alpha}"
    )
