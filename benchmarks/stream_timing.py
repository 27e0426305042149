"""How long the stream benchmark's full plan would take, estimated from a smaller run of it.

Each policy's CPU seconds per recorded answer, over the run's rows, times the recorded answers
of each dataset the full plan runs it on (a run's time grows about linearly with its dataset:
the quick run of 2026-12-06 put the full plan at 869 CPU seconds where it took 952); the wall
time at the run's own wall seconds per CPU second (its processes, the machine's load).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["estimate", "format_estimate"]

#: The issue's target for the full plan, wall seconds on 2 cores.
TARGET = 600.0


def estimate(
    rows: Sequence[dict[str, Any]],
    seconds: float,
    planned: Sequence[tuple[str, str]],
    answers: Mapping[str, int],
) -> dict[str, float]:
    """The full plan's runs, CPU seconds and wall seconds, from ``rows`` (a run's, that took
    ``seconds`` of wall time); ``planned``: the full plan's (policy, dataset) runs;
    ``answers``: each dataset's recorded answers."""
    cpu: dict[str, float] = defaultdict(float)
    size: dict[str, float] = defaultdict(float)
    for row in rows:
        cpu[row["policy"]] += row["cpu"]
        size[row["policy"]] += answers[row["dataset"]]
    spent = sum(cpu.values())
    if not spent:
        return {"runs": float(len(planned)), "cpu": 0.0, "seconds": 0.0}
    overall = spent / sum(size.values())
    rate = {policy: cpu[policy] / size[policy] for policy in cpu if size[policy]}
    full = sum(rate.get(policy, overall) * answers[dataset] for policy, dataset in planned)
    return {"runs": float(len(planned)), "cpu": full, "seconds": full * seconds / spent}


def format_estimate(found: Mapping[str, float] | None, mode: str) -> list[str]:
    """The estimate as a target line (nothing for the full plan itself, which is measured)."""
    if not found or mode.startswith("full"):
        return []
    return [
        f"- the full plan estimated from this run: {found['runs']:.0f} runs, "
        f"{found['cpu']:.0f} CPU s, {found['seconds']:.0f} s wall at this run's wall time per "
        f"CPU second (target: under {TARGET:.0f} s on 2 cores)"
    ]
