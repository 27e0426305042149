"""A pilot of the first arrivals is not the crowd: spammers first must not ban those after them."""

from __future__ import annotations

import numpy as np
from crowd_streams import Crowd, drive
from stats_helpers import assert_rate_at_most

from screener.gate import Gate, GateSettings

Q = 0.1  # crowd-prior's default error level


def spammers_first(seed: int, spammers: int = 20, good: int = 30) -> Crowd:
    """The first ``spammers`` workers to arrive answer at 0.2-0.4, the others at 0.85-0.98."""
    rng = np.random.default_rng(seed)
    accuracy = {f"s{i:03d}": float(rng.uniform(0.2, 0.4)) for i in range(spammers)}
    accuracy |= {f"g{i:03d}": float(rng.uniform(0.85, 0.98)) for i in range(good)}
    return Crowd(accuracy)


def test_workers_after_a_pilot_of_spammers_are_not_banned_unasked() -> None:
    """The default gate's pilot is its first 20 workers; when they are all spammers, the prior
    fitted on them puts every newcomer under the bar. No newcomer may be banned before it
    has answered a question of its own (it would be turned away on its first request)."""
    for seed in range(3):
        gate = Gate(GateSettings(seed=seed))
        replies = drive(gate, spammers_first(seed), requests=3_000, seed=seed)
        for worker, seen in replies.items():
            if worker.startswith("g") and "blocked" in seen:
                assert "gold" in seen[: seen.index("blocked")], (seed, worker, seen[:5])


def test_bans_in_a_spammers_first_stream_are_wrong_at_most_q_of_the_time() -> None:
    """Over seeded spammers-first streams, the share of the bans that hit a good worker is
    not significantly above q (one-sided binomial test)."""
    bans = wrong = 0
    for seed in range(12):
        people = spammers_first(seed)
        gate = Gate(GateSettings(seed=seed))
        drive(gate, people, requests=3_000, seed=seed)
        banned = [d.worker for d in gate.decisions if d.decision == "banned"]
        bans += len(banned)
        wrong += sum(people.accuracy[w] >= 0.6 for w in banned)
    assert bans >= 100  # the spammers are caught
    assert_rate_at_most(wrong, bans, Q)
