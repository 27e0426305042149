"""The eps-top-k question: select k workers whose mean total is within ``eps * k`` of the
best k workers'. ADAPTIVETOPK (Chen, Chen, Zhang, Zhou, ICML 2017) and the paper's two
baselines, OptMAI and CLUCB-PAC, over the machinery they share (``_selection``)."""

from screener.algorithms.topk._selection import (
    SelectionAlgorithm,
    check_eps,
    check_k,
    rank_key,
    ranked,
    top_by_mean,
    water_fill,
)
from screener.algorithms.topk.adaptive import AdaptiveTopK, accept_reject, round_target
from screener.algorithms.topk.clucb_pac import CLUCBPAC
from screener.algorithms.topk.optmai import OptMAI, optmai_round_pulls, quantile_step

__all__ = [
    "CLUCBPAC",
    "AdaptiveTopK",
    "OptMAI",
    "SelectionAlgorithm",
    "accept_reject",
    "check_eps",
    "check_k",
    "optmai_round_pulls",
    "quantile_step",
    "rank_key",
    "ranked",
    "round_target",
    "top_by_mean",
    "water_fill",
]
