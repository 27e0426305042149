"""Screening algorithms: pure ask/tell decision objects (no I/O, no clock, no awaits)."""

from screener.algorithms._test_setups import AlgorithmSetup
from screener.algorithms.ask_tell import (
    Ask,
    AskState,
    Pull,
    PullInfo,
    PullStatus,
    PullTuple,
    TellOutcome,
)
from screener.algorithms.base import Algorithm
from screener.algorithms.ksigma import (
    ADE,
    GOLD,
    IteratedBestArm,
    KSigmaAlgorithm,
    NaiveRoundRobin,
    RoundRobin,
    WeightedRoundRobin,
)
from screener.algorithms.registry import (
    ALGORITHMS,
    accepted_parameters,
    create_algorithm,
    parameter_choices,
)
from screener.algorithms.result import Result, StopReason
from screener.algorithms.thresholding import (
    APT,
    LSA,
    UCBE,
    ConfidentThresholding,
    CrowdPrior,
    FDRThresholding,
    OptKG,
    PlatformRule,
    Quiz,
    ThresholdingAlgorithm,
    TolokaRule,
    UniformThresholding,
)
from screener.algorithms.topk import CLUCBPAC, AdaptiveTopK, OptMAI
from screener.algorithms.verdicts import Verdict, streamable_verdicts, verdict_of
from screener.algorithms.worker_result import Decision, Threshold, WorkerResult

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
    "AlgorithmSetup",
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
    "PullTuple",
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
