"""The value policy's pieces: request lengths against numpy, the table read per worker as
StoppingTable.lookup reads it, and the default gate's bans keeping crowd-prior's promise."""

from __future__ import annotations

import numpy as np
import pytest
from crowd_streams import Crowd, drive
from stats_helpers import assert_rate_at_most

from screener.algorithms import CrowdPrior
from screener.gate import Gate, GateSettings
from screener.gate.value import GoldValue, RequestLengths
from screener.stats.prior import StoppingTable


def test_request_lengths_are_the_mean_residual_shrunk_to_the_guess() -> None:
    rng = np.random.default_rng(1)
    totals = rng.zipf(1.8, 200).clip(max=5000)
    lengths = RequestLengths(expected=20.0)
    for total in totals.tolist():
        for count in range(1, total + 1):
            lengths.grew(count)
    lengths._rebuild()  # the counts as of now, not of the last refresh
    for age in (0, 1, 5, 30, 400):
        longer = totals[totals > age]
        guess = max(20.0 - age, 1.0)
        weight = RequestLengths.PRIOR_WORKERS
        expected = ((longer - age).sum() + weight * guess) / (longer.size + weight)
        assert lengths.remaining(age) == pytest.approx(max(expected, age))
    assert lengths.remaining(400) > lengths.remaining(5)  # heavy tails: older, longer
    oldest = int(totals.max())
    assert lengths.remaining(oldest) == oldest  # no longer peers: at least its own age


def test_the_value_read_per_worker_is_the_tables_lookup() -> None:
    rng = np.random.default_rng(2)
    method = CrowdPrior(0, threshold=0.6, pilot=5, seed=0)
    value = GoldValue(GateSettings())
    for _ in range(40):
        arm = int(method.add_workers(1)[0])
        rate = 0.3 if rng.random() < 0.2 else 0.85
        for _ in range(int(rng.integers(0, 12))):
            ask = method.ask_for(arm)
            if len(ask) == 0:
                break
            method.tell(int(ask.first_id), float(rng.random() < rate))
    for arm in range(method.n_arms):
        if method.stats.count[arm] < method.min_counts[arm]:
            continue
        for remaining in (3.0, 40.0, 900.0):
            table = value._table(method, remaining, 0)
            successes = method.scaled_successes()[arm : arm + 1]
            action, _ = table.lookup(successes, method.stats.count[arm : arm + 1])
            wanted = bool(action[0] != StoppingTable.ACCEPT)
            assert value.wants(method, arm, remaining) is wanted


@pytest.mark.slow
def test_the_default_gate_keeps_crowd_priors_promise_on_its_bans() -> None:
    """The default gate (value policy, audits, bans of qualified workers on their audits):
    pooled over seeded Beta crowds, the share of wrong bans is not significantly above q."""
    wrong = bans = 0
    for seed in range(16):
        rng = np.random.default_rng(300 + seed)
        accuracy = {f"w{i:03d}": float(rng.beta(5, 2.5)) for i in range(80)}
        gate = Gate(GateSettings(seed=seed))
        drive(gate, Crowd(accuracy), 4000, seed)
        for decision in gate.decisions:
            if decision.decision == "banned":
                bans += 1
                wrong += accuracy[decision.worker] >= 0.6
    assert bans >= 40
    assert_rate_at_most(wrong, bans, 0.1)
