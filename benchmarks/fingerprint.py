"""A fingerprint of what screener decides, to show a refactor changed no behaviour.

Runs every registered algorithm's conformance setups (``TEST_SETUPS``) against seeded
simulated workers, one pull at a time and in batches, and hashes each run's pulls (arm, seq
in order) and its result (``Result.to_dict``, its timing fields left out); then, when
SCREENER_DATA is set, the tables of ``benchmarks.realdata --quick``. Equal digests before
and after a change mean the same pulls and the same decisions.

    python -m benchmarks.fingerprint            # prints one digest per part and a total
    python -m benchmarks.fingerprint --no-data  # the algorithms only (a few seconds)
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from typing import Any

import numpy as np

from screener.algorithms import create_algorithm
from screener.simulation import BernoulliRewards
from screener.testing.algorithm_conformance import TEST_SETUPS

SEEDS = (0, 1, 2)
_SPREAD = (0.1, 0.3, 0.45, 0.55, 0.7, 0.9)
_VOLATILE = frozenset({"elapsed", "seconds", "wall_time", "started", "finished"})


def _stable(value: Any) -> Any:
    """``value`` without the keys that hold times, floats rounded to 12 digits."""
    if isinstance(value, dict):
        return {k: _stable(v) for k, v in sorted(value.items()) if k not in _VOLATILE}
    if isinstance(value, list | tuple):
        return [_stable(v) for v in value]
    if isinstance(value, float):
        return round(value, 12)
    return value


def _run(name: str, params: dict[str, Any], n: int, means: tuple[float, ...], seed: int,
         batch: int) -> str:  # fmt: skip
    algorithm = create_algorithm(name, n, {**params, "seed": seed})
    rewards = BernoulliRewards(np.asarray(means, dtype=float), seed=seed + 100)
    digest = hashlib.sha256()
    while True:
        ask = algorithm.ask(batch)
        if ask.done or ask.wait:
            break
        digest.update(np.asarray(ask.arms, dtype=np.int64).tobytes())
        digest.update(np.asarray(ask.seqs, dtype=np.int64).tobytes())
        algorithm.tell_many(ask.ids, rewards.sample(ask.arms, ask.seqs))
    result = json.dumps(_stable(algorithm.result().to_dict()), sort_keys=True, default=str)
    digest.update(result.encode())
    return digest.hexdigest()


def algorithms_digest() -> dict[str, str]:
    """One digest per (algorithm, setup): its runs over SEEDS, one pull and many at a time."""
    digests = {}
    for name, setups in sorted(TEST_SETUPS.items()):
        for setup in setups:
            means = setup.means or _SPREAD
            runs = [
                _run(name, dict(setup.params), len(means), means, seed, batch)
                for seed in SEEDS
                for batch in (1, len(means))
            ]
            key = f"{name}/{setup.label or 'default'}"
            digests[key] = hashlib.sha256("".join(runs).encode()).hexdigest()[:16]
    return digests


def _table_digest(module: str, extra: list[str]) -> str:
    import subprocess

    command = [sys.executable, "-m", module, "--quick", *extra]
    output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return hashlib.sha256("\n".join(_untimed(output.splitlines())).encode()).hexdigest()[:16]


def _untimed(lines: list[str]) -> list[str]:
    """The lines without times: a table's column headed "s" and lines naming seconds."""
    kept, timed, in_table = [], False, False
    for line in lines:
        if not line.startswith("|"):
            in_table = False
            if "seconds" not in line and " s " not in line:
                kept.append(line)
            continue
        cells = line.split("|")
        if not in_table:
            in_table, timed = True, cells[-2].strip() == "s"
        kept.append("|".join(cells[:-2] + cells[-1:]) if timed else line)
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--no-data", action="store_true", help="skip the real-data tables")
    args = parser.parse_args(argv)
    digests = algorithms_digest()
    if not args.no_data and os.environ.get("SCREENER_DATA"):
        digests["realdata --quick"] = _table_digest("benchmarks.realdata", [])
    for key, value in digests.items():
        print(f"{key:45s} {value}")
    total = hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()[:16]
    print(f"{'total':45s} {total}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
