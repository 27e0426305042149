"""The one-coin model of an item's labels (Dawid and Skene 1979 with one accuracy per worker;
the reading Karger, Oh and Shah 2011 call "one coin"): worker ``w`` gives the true label with
probability ``p_w``, else one of the ``k - 1`` other classes uniformly, independently of other
workers given the item."""

from __future__ import annotations

import math
from collections.abc import Iterable

__all__ = ["item_posterior"]

#: The estimate a label is weighed with is kept off 0 and 1: one worker never settles an
#: item against any number of others.
_EDGE = 1e-3


def item_posterior(votes: Iterable[tuple[str, float]], classes: int) -> tuple[str | None, float]:
    """The top label of an item and its posterior probability under the one-coin model with
    a uniform prior over ``classes`` classes; ``votes``: each counted label with its worker's
    accuracy. Ties go to the first label in sorted order. No votes: (None, 1 / classes).

    >>> label, p = item_posterior([("cat", 0.9)], 2)
    >>> label, round(p, 3)
    ('cat', 0.9)
    >>> label, p = item_posterior([("cat", 0.8), ("dog", 0.8), ("cat", 0.7)], 2)
    >>> label, round(p, 3)
    ('cat', 0.7)
    """
    scores: dict[str, float] = {}
    for label, accuracy in votes:
        p = min(max(accuracy, _EDGE), 1.0 - _EDGE)
        # log p - log((1 - p)/(k - 1)): what the label adds to its class over any other
        scores[label] = scores.get(label, 0.0) + math.log(p * (classes - 1) / (1.0 - p))
    if not scores:
        return None, 1.0 / classes
    top = max(sorted(scores), key=scores.__getitem__)
    unseen = max(classes - len(scores), 0)
    best = scores[top]
    total = sum(math.exp(s - best) for s in scores.values()) + unseen * math.exp(-best)
    return top, 1.0 / total
