"""Screening algorithms: pure ask/tell decision objects (no I/O, no clock, no awaits)."""

from screener.algorithms.base import (
    Algorithm,
    Ask,
    AskState,
    Pull,
    PullInfo,
    PullStatus,
    TellOutcome,
)
from screener.algorithms.crowd_prior import CrowdPrior
from screener.algorithms.fdr import FDRThresholding
from screener.algorithms.ksigma import (
    ADE,
    GOLD,
    IteratedBestArm,
    KSigmaAlgorithm,
    NaiveRoundRobin,
    RoundRobin,
    WeightedRoundRobin,
)
from screener.algorithms.platform_rules import PlatformRule, Quiz, TolokaRule
from screener.algorithms.registry import (
    ALGORITHMS,
    accepted_parameters,
    create_algorithm,
    parameter_choices,
)
from screener.algorithms.result import Decision, Result, StopReason, Threshold, WorkerResult
from screener.algorithms.thresholding import LSA, ConfidentThresholding, ThresholdingAlgorithm
from screener.algorithms.thresholding_baselines import APT, UCBE, OptKG, UniformThresholding
from screener.algorithms.topk import CLUCBPAC, AdaptiveTopK, OptMAI
from screener.algorithms.verdicts import Verdict, streamable_verdicts, verdict_of

__all__ = [
    "ADE",
    "ALGORITHMS",
    "APT",
    "CLUCBPAC",
    "GOLD",
    "LSA",
    "UCBE",
    "AdaptiveTopK",
    "Algorithm",
    "Ask",
    "AskState",
    "ConfidentThresholding",
    "CrowdPrior",
    "Decision",
    "FDRThresholding",
    "IteratedBestArm",
    "KSigmaAlgorithm",
    "NaiveRoundRobin",
    "OptKG",
    "OptMAI",
    "PlatformRule",
    "Pull",
    "PullInfo",
    "PullStatus",
    "Quiz",
    "Result",
    "RoundRobin",
    "StopReason",
    "TellOutcome",
    "Threshold",
    "ThresholdingAlgorithm",
    "TolokaRule",
    "UniformThresholding",
    "Verdict",
    "WeightedRoundRobin",
    "WorkerResult",
    "accepted_parameters",
    "create_algorithm",
    "parameter_choices",
    "streamable_verdicts",
    "verdict_of",
]
