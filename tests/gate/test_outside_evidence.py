"""Crowd evidence from outside a gate (``Gate.tell_outside``: a pool's other shards): it
enters crowd-prior's fit and never its arms, it replaces what was told before, and a gate
without a crowd prior refuses it."""

from __future__ import annotations

import numpy as np
import pytest

from screener.algorithms import CrowdPrior
from screener.errors import ConfigError
from screener.gate import DEFAULT_PARAMS, FirstGold, Gate, GateSettings, ReplyKind
from screener.stats.prior.evidence import check_outside

#: Gold at every request of a worker being screened; crowd-prior with a pilot of 2.
QUICK = GateSettings(
    policy=FirstGold(), max_unscreened=0, params={**DEFAULT_PARAMS, "pilot": 2}, audit_rate=0.0
)

#: Forty workers outside, most of them right on all five answers: a crowd well above the bar.
OUTSIDE = (np.array([5.0] * 30 + [1.0] * 10), np.array([5] * 40))


def _identified(gate: Gate) -> bool:
    assert isinstance(gate.method, CrowdPrior)
    return gate.method.identified


def _lone_worker(gate: Gate, answers: int = 4) -> None:
    """One worker, every gold answer right: alone it identifies no crowd prior."""
    for _ in range(answers):
        reply = gate.next("lone")
        assert reply.kind is ReplyKind.GOLD and reply.gold is not None
        gate.answer(reply.gold, worker="lone", reward=1.0)


def test_outside_evidence_judges_a_worker_its_own_crowd_cannot() -> None:
    alone, told = Gate(QUICK), Gate(QUICK)
    _lone_worker(alone)
    _lone_worker(told)
    assert not alone.decisions and not _identified(told)
    told.tell_outside(*OUTSIDE)
    assert [(d.worker, d.decision.value) for d in told.decisions] == [("lone", "accepted")]
    assert told.method.n_arms == alone.method.n_arms == 1  # never arms of this gate


def test_outside_evidence_replaces_what_was_told_before() -> None:
    gate = Gate(QUICK)
    gate.tell_outside(*OUTSIDE)
    assert _identified(gate)
    gate.tell_outside(np.zeros(0), np.zeros(0, dtype=np.int64))
    assert not _identified(gate)
    _lone_worker(gate)
    assert not gate.decisions


def test_a_gate_without_a_crowd_prior_shares_nothing() -> None:
    gate = Gate(
        GateSettings(algorithm="toloka-rule", params={"threshold": 0.6}, policy=FirstGold())
    )
    assert not gate.shares_prior and Gate(QUICK).shares_prior
    with pytest.raises(ConfigError, match="no crowd prior"):
        gate.tell_outside(*OUTSIDE)


@pytest.mark.parametrize(
    ("successes", "counts"),
    [([1.0], [1, 2]), ([3.0], [2]), ([1.0], [0]), ([0.5], [1.5]), ([float("nan")], [1])],
)
def test_bad_outside_evidence_is_refused(successes: list[float], counts: list[float]) -> None:
    with pytest.raises(ConfigError, match="outside evidence"):
        check_outside(successes, counts)
