"""Screening inside the task stream: gold or task for each arriving worker, decisions out.

``Gate`` is the pure decision object (no I/O, no clock): a platform asks it, per arriving
worker, whether to give a gold question or a real task, and hands back the gold answers.
``GateSettings`` holds what the requester sets, its gold policy one of ``ValueOfGold``,
``FirstGold`` and ``GoldShare``; ``Prices`` (of ``screener.money``) what questions cost.
"""

from screener.gate.core import Gate
from screener.gate.labels import LabelOutcome
from screener.gate.policies import (
    GOLD_POLICIES,
    BanRule,
    FirstGold,
    GoldPolicy,
    GoldShare,
    ValueOfGold,
)
from screener.gate.replies import AnswerOutcome, Decided, Reply, ReplyKind
from screener.gate.roster import Status
from screener.gate.settings import DEFAULT_PARAMS, GateSettings, OnChange
from screener.money import Prices

__all__ = [
    "DEFAULT_PARAMS",
    "GOLD_POLICIES",
    "AnswerOutcome",
    "BanRule",
    "Decided",
    "FirstGold",
    "Gate",
    "GateSettings",
    "GoldPolicy",
    "GoldShare",
    "LabelOutcome",
    "OnChange",
    "Prices",
    "Reply",
    "ReplyKind",
    "Status",
    "ValueOfGold",
]
