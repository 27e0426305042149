"""Block and qualify: what a worker's decision asks a platform to do, and which decisions a
stream may act on before the run ends.

A platform acts on two words. ``banned``: block the worker (Toloka's user restriction,
Appen's contributor flag or reject, MTurk's worker block). ``accepted``: qualify it (a skill
or qualification value). Each question screener answers maps to them:

* against a bar (the thresholding methods, crowd-prior, the platform rules): BELOW is
  banned, ABOVE accepted;
* k-sigma outliers with ``direction="low"`` (spammers): OUTLIER is banned, NORMAL accepted
  (screened, and not found below the crowd);
* the best K: SELECTED is accepted (a qualification for the best K); REJECTED is neither: a
  worker outside the best K may still be a good one;
* outliers on the high side (``direction="high"``) or on either side (GOLD): neither. An
  abnormally high accuracy on gold questions is as likely a leaked key as a star worker,
  so no block or qualification follows from it alone; the report shows them.

``reopened`` is the gate's third word: a decided worker screened again after its change
detector's alarm (its earlier decision no longer stands).

Reports show a decision by one word (``decision_word``): the verdict where there is one,
else "not selected" (outside the best K) or the algorithm's own word (outlier, normal), and
"undecided". The JSON and CSV reports keep the algorithm's word in their ``decision`` field
(below, above, ...) for the programs that read them; this mapping turns it into the shown one.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from screener.algorithms.base import Algorithm
from screener.algorithms.thresholding import ThresholdingAlgorithm
from screener.algorithms.worker_result import Decision

__all__ = ["Verdict", "decision_word", "streamable_verdicts", "verdict_of"]


class Verdict(enum.StrEnum):
    """A decision as a platform acts on it (the module docstring says which is which).

    Examples
    --------
    >>> Verdict.of_sign(-1).value, Verdict.of_sign(1).value
    ('banned', 'accepted')
    """

    BANNED = "banned"
    ACCEPTED = "accepted"
    REOPENED = "reopened"

    @classmethod
    def of_sign(cls, sign: int) -> Verdict:
        """The verdict of a thresholding method's ``verdicts()`` entry: -1 banned, +1
        accepted (0 is no decision: not a verdict)."""
        if sign not in (-1, 1):
            raise ValueError(f"a verdict's sign is -1 or +1, got {sign}")
        return cls.BANNED if sign < 0 else cls.ACCEPTED


def verdict_of(decision: Decision, params: Mapping[str, Any]) -> Verdict | None:
    """What ``decision`` asks a platform to do, in a run with algorithm parameters
    ``params`` (their ``direction``, for the k-sigma outliers); None: nothing.

    Examples
    --------
    >>> verdict_of(Decision.BELOW, {}), verdict_of(Decision.SELECTED, {"k": 3})
    (<Verdict.BANNED: 'banned'>, <Verdict.ACCEPTED: 'accepted'>)
    >>> verdict_of(Decision.OUTLIER, {"direction": "low"}).value
    'banned'
    >>> verdict_of(Decision.OUTLIER, {"direction": "high"}) is None
    True
    """
    if decision in _BY_BAR:
        return _BY_BAR[decision]
    if params.get("direction") == "low":
        return _LOW_OUTLIERS.get(decision)
    return None


_BY_BAR = {
    Decision.BELOW: Verdict.BANNED,
    Decision.ABOVE: Verdict.ACCEPTED,
    Decision.SELECTED: Verdict.ACCEPTED,
}
_LOW_OUTLIERS = {Decision.OUTLIER: Verdict.BANNED, Decision.NORMAL: Verdict.ACCEPTED}


def decision_word(decision: Decision, params: Mapping[str, Any]) -> str:
    """The one word reports show for ``decision`` in a run with parameters ``params``: its
    verdict (banned, accepted) where it has one; "not selected" for a worker outside the best
    K (no verdict: it may still be a good worker); else the decision itself (outlier and
    normal on the high side or either side, undecided).

    Examples
    --------
    >>> decision_word(Decision.BELOW, {}), decision_word(Decision.REJECTED, {"k": 3})
    ('banned', 'not selected')
    >>> decision_word(Decision.OUTLIER, {"direction": "both"})
    'outlier'
    """
    verdict = verdict_of(decision, params)
    if verdict is not None:
        return verdict.value
    return "not selected" if decision is Decision.REJECTED else decision.value


#: The shown words in the order reports list them: the banned first, the undecided last.
WORD_ORDER = ("banned", "accepted", "outlier", "normal", "not selected", "undecided")


def streamable_verdicts(algorithm: Algorithm) -> NDArray[np.int8] | None:
    """The decisions ``algorithm`` has taken for good so far, per worker: -1 banned, +1
    accepted, 0 none yet; None when it cannot say before it stops (its decisions are
    provisional until then, and are acted on from its final result).

    A thresholding method whose ``verdicts`` are final says so (``verdicts_final``): the
    crowd-prior, the platform rules, the e-BH lists once settled, and the fixed-budget
    methods (they decide everyone when the budget is spent, no one before).

    Examples
    --------
    >>> from screener.algorithms import ConfidentThresholding, CrowdPrior, RoundRobin
    >>> streamable_verdicts(CrowdPrior(3, threshold=0.6)).tolist()
    [0, 0, 0]
    >>> streamable_verdicts(ConfidentThresholding(3, threshold=0.6)) is None
    True
    >>> streamable_verdicts(RoundRobin(3)) is None
    True
    """
    if isinstance(algorithm, ThresholdingAlgorithm) and algorithm.verdicts_final:
        return algorithm.verdicts()
    return None
