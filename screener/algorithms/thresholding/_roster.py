"""An error level spread over the workers: what an open pool must declare for it to hold."""

from __future__ import annotations

from screener.algorithms.thresholding._base import ThresholdingAlgorithm
from screener.checks import check_count
from screener.errors import ConfigError

__all__ = ["RosterThresholding", "check_max_workers"]


class RosterThresholding(ThresholdingAlgorithm):
    """A thresholding method whose error level (delta, q) is spread over a roster of
    workers: the starting pool, or ``max_workers`` in an open pool, past which no worker may
    join (a worker beyond the roster would break the promise). Subclasses set
    ``max_workers`` (``check_max_workers``) in their constructor."""

    max_workers: int | None = None

    @property
    def _roster(self) -> int:
        """The workers the level is spread over: ``max_workers`` in an open pool (those yet
        to join included, so the promise holds whoever joins), else the pool."""
        return self.n_arms if self.max_workers is None else self.max_workers

    def _check_joining(self, count: int) -> None:
        """Workers join only while the roster the level was spread over has room."""
        wanted = self.n_arms + count
        if self.max_workers is None:
            raise ConfigError(
                f"{self.name} spreads its error level over the workers it started with, so no "
                "worker can join",
                "give max_workers (-p max_workers=N): the most workers the pool may ever hold",
            )
        if wanted > self.max_workers:
            raise ConfigError(
                f"{self.name} spreads its error level over max_workers = {self.max_workers} "
                f"workers: {wanted} would break its promise",
                "start a new run with a larger max_workers",
            )


def check_max_workers(max_workers: int | None, n_workers: int) -> int | None:
    """An open pool's roster for spreading an error level: at least the starting pool."""
    if max_workers is None:
        return None
    return check_count(
        "max_workers", max_workers, max(n_workers, 1),
        "give the most workers the pool may ever hold (delta or q is spread over them)",
    )  # fmt: skip
