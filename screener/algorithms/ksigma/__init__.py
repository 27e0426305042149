"""The outlier question: which workers lie beyond the crowd. The k-sigma algorithms of Zhuang,
Wang, Wang (NIPS 2017: RR, WRR, NRR, IB) and Zhang et al. (AAAI 2020: ADE) over the k-sigma
rule (``rule``), the intervals and active set they share (``intervals``, ``algorithm``), and
GOLD (Ban & He, KDD 2020), the eps-rho outlier ranking; each round robin over one
``RoundRobinCursor``. ``lockstep`` restates RR's and WRR's step over a runs axis (many
simulated runs as one computation, for ``screener plan``)."""

from screener.algorithms._checks import HEURISTIC_INTERVALS, IntervalKind
from screener.algorithms.ksigma.ade import ADE
from screener.algorithms.ksigma.algorithm import KSigmaAlgorithm
from screener.algorithms.ksigma.cursor import RoundRobinCursor
from screener.algorithms.ksigma.gold import EPS_LOWER_BOUND, GOLD, gold_b, minority_size
from screener.algorithms.ksigma.intervals import KSigmaIntervals
from screener.algorithms.ksigma.iterated_best_arm import IteratedBestArm
from screener.algorithms.ksigma.naive_round_robin import NaiveRoundRobin
from screener.algorithms.ksigma.neighbour_graph import NeighbourGraph
from screener.algorithms.ksigma.round_robin import RoundRobin
from screener.algorithms.ksigma.rule import Direction, KSigmaRule
from screener.algorithms.ksigma.weighted_round_robin import WeightedRoundRobin, optimal_rho

__all__ = [
    "ADE",
    "EPS_LOWER_BOUND",
    "GOLD",
    "HEURISTIC_INTERVALS",
    "Direction",
    "IntervalKind",
    "IteratedBestArm",
    "KSigmaAlgorithm",
    "KSigmaIntervals",
    "KSigmaRule",
    "NaiveRoundRobin",
    "NeighbourGraph",
    "RoundRobin",
    "RoundRobinCursor",
    "WeightedRoundRobin",
    "gold_b",
    "minority_size",
    "optimal_rho",
]
