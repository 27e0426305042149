"""Thresholding: classify every worker as ABOVE or BELOW a known bar ``threshold``.

Arm i is ABOVE when its mean reward is at least the threshold, BELOW otherwise. The methods,
one per module, by the question they answer:

* fixed budget (``lsa``: LSA of Tao, Blanco, Peng, Zhou, NeurIPS 2019; the baselines
  ``uniform``, ``apt``, ``ucbe``, ``opt_kg``): spend exactly ``budget`` pulls, then classify
  every worker by its estimate. These minimise the expected number of misclassified workers
  (the aggregate regret); no single worker's decision carries a confidence level, and the
  intervals in the result are informational only.
* fixed confidence (``confident``: ConfidentThresholding): pull until every worker's anytime
  confidence sequence lies on one side of the bar (or of an indifference zone
  ``threshold +- eps``); every decided worker more than eps from the bar is right with
  probability at least 1 - delta (jointly).
* false-discovery rate (``fdr``: FDRThresholding): ban and accept lists by e-BH, each list
  wrong in expectation for at most a share q of its workers.
* a crowd prior (``crowd_prior``: CrowdPrior): empirical-Bayes decisions, each wrong with
  posterior probability at most q, or Bayes-optimal under stated costs.
* the platforms' static rules (``platform_rule``, ``toloka_rule``, ``quiz``): no guarantee.

The shared machinery, named once: ``_base`` (ThresholdingAlgorithm: the bar, the estimates,
the result lines), ``_scheduler`` (the pending-aware index scheduler: each arm's priority
from its answered mean and its effective count ``T_i = answered_i + pending_i``, so that
``ask(k)`` hands out exactly what k calls of ``ask(1)`` with no tell between would), and
``_roster`` (an error level spread over the workers of an open pool). ``confident_lockstep``
restates ConfidentThresholding's step over a runs axis (many simulated runs as one
computation, for ``screener plan``), on the same private pieces.
"""

from screener.algorithms.thresholding._base import ThresholdingAlgorithm
from screener.algorithms.thresholding._clearing import HOPE
from screener.algorithms.thresholding._intervals import (
    BACKSTOP_SHARE,
    CONFIDENT_INTERVALS,
    ConfidentInterval,
)
from screener.algorithms.thresholding.apt import APT
from screener.algorithms.thresholding.confident import ConfidentSchedule, ConfidentThresholding
from screener.algorithms.thresholding.crowd_prior import CrowdPrior
from screener.algorithms.thresholding.fdr import FDRThresholding
from screener.algorithms.thresholding.lsa import LSA
from screener.algorithms.thresholding.opt_kg import OptKG
from screener.algorithms.thresholding.platform_rule import PlatformRule
from screener.algorithms.thresholding.quiz import Quiz
from screener.algorithms.thresholding.toloka_rule import TolokaRule
from screener.algorithms.thresholding.ucbe import UCBE, ucbe_exploration
from screener.algorithms.thresholding.uniform import UniformThresholding

__all__ = [
    "APT",
    "BACKSTOP_SHARE",
    "CONFIDENT_INTERVALS",
    "HOPE",
    "LSA",
    "UCBE",
    "ConfidentInterval",
    "ConfidentSchedule",
    "ConfidentThresholding",
    "CrowdPrior",
    "FDRThresholding",
    "OptKG",
    "PlatformRule",
    "Quiz",
    "ThresholdingAlgorithm",
    "TolokaRule",
    "UniformThresholding",
    "ucbe_exploration",
]
