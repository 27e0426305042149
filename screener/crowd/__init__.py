"""The crowd to screen: a worker pool (its workers in a fixed order, their true accuracies
for simulations, the gold questions they may be asked), read from a CSV file or simulated."""

from screener.crowd.pool import WorkerPool
from screener.crowd.pool_file import load_pool_csv
from screener.crowd.synthetic import demo_pool, synthetic_pool

__all__ = ["WorkerPool", "demo_pool", "load_pool_csv", "synthetic_pool"]
