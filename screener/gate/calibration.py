"""Final labels checked against gold: how often a label the gate settles is wrong.

The one-coin model of ``screener.gate.items`` takes workers to err independently given the
item. Real crowds do not: some items mislead most workers the same way, and the model reads
their shared error as agreement (on the shared datasets, labels the model settled at 0.95 or
more were wrong 11-13% of the time; BENCHMARKS.md, "Final labels per dollar"). No label-only
model sees it (a mixture fitted on the labels found no such items on 15 of 25 datasets). Gold
items do: their answer is known, and the platform shows each to many workers.

So the gate settles gold items as it settles task items, and counts how often it is wrong.
Each gold answer that names its item and the worker's label (``Gate.answer``: ``item`` and
``answer``) is weighed by the worker's estimate before that answer counted; when an item's
weighed answers reach the gate's ``confidence`` (the rule that settles a task item), that is
one **check**: right when the top label is the item's answer (one of the answers giving it
was scored right). The item then starts over from its next answer, so a gold item shown to
many workers gives several checks (one vote a worker in each). Graded answers (neither right
nor wrong) and banned workers' answers are not weighed.

**Model** (the reading chosen): a share ``h`` of items is *misleading*: a label settled on one
is right only by chance (``1/k``); on the others the model's confidence ``c`` holds. A label
settled at ``c`` is then wrong with probability ``h (k-1)/k + (1 - h)(1 - c)``, and its
printed confidence is ``(1 - h) c + h / k``. ``h`` has a Beta(1, 9) prior (a weak one, mean
0.1: before any check the gate assumes one item in ten misleads, what the shared datasets
show at least) and its posterior is kept on a grid of ``GRID`` cells, one update a check.
The printed confidence uses its posterior mean at the time the label is settled.

**Promise**: among final labels printed at confidence ``c``, about ``1 - c`` are wrong, when
gold items are like task items (as hard, shown to workers alike). What breaks it: gold
easier or harder than the tasks, few checks (the prior then speaks), a crowd whose errors
depend on the item in a way a single share cannot hold. With ``h`` at 0.1 no label is printed
above ``1 - 0.1 (k-1)/k``: the crowd cannot say more, whatever the overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from screener.arrays import FloatArray
from screener.gate.one_coin import item_posterior

__all__ = ["GRID", "PRIOR", "GoldCheck"]

#: Cells of the grid of ``h`` (the share of misleading items): their midpoints in (0, 1).
GRID = 200
#: The Beta prior of ``h``: (alpha, beta).
PRIOR = (1.0, 9.0)


def _shares() -> FloatArray:
    return (np.arange(GRID) + 0.5) / GRID


def _prior_log_density() -> FloatArray:
    shares = _shares()
    alpha, beta = PRIOR
    log: FloatArray = (alpha - 1) * np.log(shares) + (beta - 1) * np.log1p(-shares)
    return log


@dataclass(slots=True)
class _Vote:
    worker: str
    label: str
    weight: float
    right: bool


@dataclass
class GoldCheck:
    """Gold items settled as task items are, and the share of misleading items they imply
    (see the module docstring). ``confidence``: the gate's settling target."""

    confidence: float
    checks: int = 0
    wrong: int = 0
    _open: dict[str, list[_Vote]] = field(default_factory=dict)
    _log_posterior: FloatArray = field(default_factory=_prior_log_density)
    _mean: float = field(init=False)

    def __post_init__(self) -> None:
        self._mean = self._posterior_mean()

    @property
    def misleading(self) -> float:
        """The posterior mean of the share of misleading items."""
        return self._mean

    def answered(
        self, item: str, worker: str, label: str, weight: float, right: bool, classes: int
    ) -> None:
        """``worker``'s gold answer: ``label`` for gold ``item``, weighed at ``weight`` (its
        estimate before this answer), ``right`` as scored; ``classes``: the gate's k. A
        worker's second answer to an item whose check is open is left out (one vote a worker,
        as on a task item)."""
        votes = self._open.setdefault(item, [])
        if any(vote.worker == worker for vote in votes):
            return
        votes.append(_Vote(worker, label, weight, right))
        top, confidence = item_posterior(((v.label, v.weight) for v in votes), classes)
        if top is None or confidence < self.confidence:
            return
        del self._open[item]
        correct = any(v.right for v in votes if v.label == top)
        self._record(confidence, correct, classes)

    def corrected(self, confidence: float, classes: int) -> float:
        """The printed confidence of a label the model settled at ``confidence``."""
        share = self._mean
        return (1.0 - share) * confidence + share / classes

    def _record(self, confidence: float, correct: bool, classes: int) -> None:
        self.checks += 1
        self.wrong += int(not correct)
        shares = _shares()
        p_wrong = shares * (classes - 1) / classes + (1.0 - shares) * (1.0 - confidence)
        self._log_posterior = self._log_posterior + np.log(
            np.clip(1.0 - p_wrong if correct else p_wrong, 1e-300, None)
        )
        self._mean = self._posterior_mean()

    def _posterior_mean(self) -> float:
        weights = np.exp(self._log_posterior - self._log_posterior.max())
        return float(weights @ _shares() / weights.sum())
