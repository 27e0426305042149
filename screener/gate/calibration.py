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

**Items the labels did not settle** (capped before the model's confidence, or still open)
are another population: the crowd split on them, and on the shared datasets they misled it
about half the time where settled ones did one time in ten (BENCHMARKS.md). They get their
own share ``u``, with a uniform Beta(1, 1) prior (nothing is known of it before a check) and
its own checks: a gold item's open check that reaches the registered items' typical cap
(their mean cap, rounded) without settling is an **unsettled check**, right when its top
label was scored right. A misleading item of this kind splits the crowd between two answers,
so its label is right half the time (not ``1/k``): printed ``(1 - u) c + u / 2``. (This
reading was chosen after the shared data showed ``1/k`` too pessimistic on many-class
crowds: BENCHMARKS.md.) A label whose model confidence is under the gate's target is printed
with ``u``, one at or over it with ``h``.

**Promise**: among final labels printed at confidence ``c``, about ``1 - c`` are wrong, when
gold items are like task items (as hard, shown to workers alike, capped alike). What breaks
it: gold easier or harder than the tasks, few checks (the priors then speak: with no
unsettled check, an unsettled label is printed halfway between the model and a coin), a crowd
whose errors depend on the item in a way two shares cannot hold. With ``h`` at 0.1 no label is
printed above ``1 - 0.1 (k-1)/k``: the crowd cannot say more, whatever the overlap.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from screener.arrays import FloatArray
from screener.gate.one_coin import item_posterior

__all__ = ["GRID", "PRIOR", "UNSETTLED_PRIOR", "GoldCheck"]

#: Cells of the grid of ``h`` (the share of misleading items): their midpoints in (0, 1).
GRID = 200
#: The Beta prior of ``h``: (alpha, beta).
PRIOR = (1.0, 9.0)
#: The Beta prior of ``u``, the share among items the labels did not settle: uniform.
UNSETTLED_PRIOR = (1.0, 1.0)


def _shares() -> FloatArray:
    return (np.arange(GRID) + 0.5) / GRID


def _prior_log_density(prior: tuple[float, float]) -> FloatArray:
    shares = _shares()
    alpha, beta = prior
    log: FloatArray = (alpha - 1) * np.log(shares) + (beta - 1) * np.log1p(-shares)
    return log


@dataclass(slots=True)
class _Vote:
    worker: str
    label: str
    weight: float
    right: bool


@dataclass(slots=True)
class _Share:
    """One share of misleading items: its checks, the wrong ones, its posterior on the grid."""

    prior: tuple[float, float]
    split: bool = False  # a misleading item splits the crowd in two: right half the time
    checks: int = 0
    wrong: int = 0
    mean: float = field(init=False)
    _log_posterior: FloatArray = field(init=False)

    def __post_init__(self) -> None:
        self._log_posterior = _prior_log_density(self.prior)
        self.mean = self._posterior_mean()

    def chance(self, classes: int) -> float:
        """How often a label settled on a misleading item of this kind is right."""
        return 0.5 if self.split else 1.0 / classes

    def printed(self, confidence: float, classes: int) -> float:
        """A label at model confidence ``confidence``, checked against this share."""
        return (1.0 - self.mean) * confidence + self.mean * self.chance(classes)

    def record(self, confidence: float, correct: bool, classes: int) -> None:
        """One check: a label at model confidence ``confidence``, right or not."""
        self.checks += 1
        self.wrong += int(not correct)
        shares = _shares()
        p_wrong = shares * (1.0 - self.chance(classes)) + (1.0 - shares) * (1.0 - confidence)
        self._log_posterior = self._log_posterior + np.log(
            np.clip(1.0 - p_wrong if correct else p_wrong, 1e-300, None)
        )
        self.mean = self._posterior_mean()

    def _posterior_mean(self) -> float:
        weights = np.exp(self._log_posterior - self._log_posterior.max())
        return float(weights @ _shares() / weights.sum())


@dataclass
class GoldCheck:
    """Gold items settled as task items are, and the shares of misleading items they imply
    (see the module docstring). ``confidence``: the gate's settling target."""

    confidence: float
    settled: _Share = field(default_factory=lambda: _Share(PRIOR))
    unsettled: _Share = field(default_factory=lambda: _Share(UNSETTLED_PRIOR, split=True))
    _open: dict[str, list[_Vote]] = field(default_factory=dict)

    @property
    def checks(self) -> int:
        """Settlements of gold items checked (at the settling target)."""
        return self.settled.checks

    @property
    def wrong(self) -> int:
        """Those that settled on a wrong label."""
        return self.settled.wrong

    @property
    def misleading(self) -> float:
        """The posterior mean of the share of misleading items among settled ones."""
        return self.settled.mean

    @property
    def misleading_unsettled(self) -> float:
        """The posterior mean of the share among items the labels did not settle."""
        return self.unsettled.mean

    def answered(
        self,
        item: str,
        worker: str,
        label: str,
        weight: float,
        right: bool,
        classes: int,
        cap: int | None = None,
    ) -> None:
        """``worker``'s gold answer: ``label`` for gold ``item``, weighed at ``weight`` (its
        estimate before this answer), ``right`` as scored; ``classes``: the gate's k;
        ``cap``: the task items' typical cap (None: no unsettled checks). A worker's second
        answer to an item whose check is open is left out (one vote a worker, as on a task
        item)."""
        votes = self._open.setdefault(item, [])
        if any(vote.worker == worker for vote in votes):
            return
        votes.append(_Vote(worker, label, weight, right))
        top, confidence = item_posterior(((v.label, v.weight) for v in votes), classes)
        reached = top is not None and confidence >= self.confidence
        if not reached and (cap is None or len(votes) < cap):
            return
        del self._open[item]
        correct = any(v.right for v in votes if v.label == top)
        share = self.settled if reached else self.unsettled
        share.record(confidence, correct, classes)

    def corrected(self, confidence: float, classes: int) -> float:
        """The printed confidence of a label the model puts at ``confidence``: with the
        settled share at or over the settling target, else with the unsettled one."""
        share = self.settled if confidence >= self.confidence else self.unsettled
        return share.printed(confidence, classes)
