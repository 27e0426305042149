"""Write examples/pool30.csv: 30 simulated workers, 2 of them spammers (low accuracy).

    python examples/make_pool.py
"""

from pathlib import Path

from screener import synthetic_pool

pool = synthetic_pool(30, 2, seed=7)
assert pool.accuracies is not None
lines = ["worker,accuracy"] + [
    f"{worker},{accuracy}" for worker, accuracy in zip(pool.workers, pool.accuracies, strict=True)
]
Path(__file__).with_name("pool30.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
