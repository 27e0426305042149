"""Seeded streams of simulated workers through a gate, shared by the gate's tests."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from screener.gate import Gate, ReplyKind

__all__ = ["Crowd", "crowd", "drive"]


@dataclass
class Crowd:
    """Simulated workers: accuracy, (for a worker who turns) the request from which it
    answers with ``after`` instead, and how often each asks for work relative to the others
    (``activity``; none given: all alike)."""

    accuracy: dict[str, float]
    turns: dict[str, tuple[int, float]] = field(default_factory=dict)
    activity: dict[str, float] = field(default_factory=dict)

    def rate(self, worker: str, request: int) -> float:
        turn = self.turns.get(worker)
        if turn is not None and request >= turn[0]:
            return turn[1]
        return self.accuracy[worker]


def crowd(n: int, seed: int, spam: float = 0.2) -> Crowd:
    rng = np.random.default_rng(seed)
    return Crowd({f"w{i:03d}": 0.35 if rng.random() < spam else 0.85 for i in range(n)})


def drive(gate: Gate, people: Crowd, requests: int, seed: int) -> dict[str, list[str]]:
    """Workers arrive over the stream (late joiners too) and ask for work at random; gold
    questions are answered at once. Returns each worker's replies in order."""
    rng = np.random.default_rng(seed)
    names = list(people.accuracy)
    arrival = np.sort(rng.integers(0, requests // 2, len(names)))
    arrival[0] = 0
    seen: dict[str, list[str]] = {}
    for step in range(requests):
        present = [w for w, a in zip(names, arrival, strict=True) if a <= step]
        if people.activity:
            weights = np.array([people.activity[w] for w in present])
            worker = present[int(rng.choice(len(present), p=weights / weights.sum()))]
        else:
            worker = present[int(rng.integers(len(present)))]
        reply = gate.next(worker)
        seen.setdefault(worker, []).append(reply.kind.value)
        if reply.kind is ReplyKind.GOLD:
            assert reply.gold is not None
            right = rng.random() < people.rate(worker, len(seen[worker]))
            gate.answer(reply.gold, worker=reply.worker, reward=float(right))
    return seen
