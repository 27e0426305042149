"""How a run talks to its oracle: a value of its own, so that the commands that set it up
need not import the orchestrator (and its journal) to check it."""

from __future__ import annotations

import math
from dataclasses import dataclass

from screener.errors import ConfigError

__all__ = ["RunOptions"]


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a run talks to its oracle."""

    concurrency: int = 16
    timeout: float | None = 60.0
    drain: float = 0.0
    #: A worker whose questions fail or time out this many times in a row is given up on.
    max_failures: int = 10
    #: Store the algorithm's state every this many events (0: never), so that reports and
    #: resumes replay at most this many events.
    snapshot_every: int = 50_000

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {self.concurrency}")
        if self.timeout is not None and not 0 < self.timeout < math.inf:
            raise ConfigError(
                f"timeout must be a finite number of seconds > 0, got {self.timeout}",
                "a question never timed out is never asked again; e.g. --timeout 600",
            )
        if not 0 <= self.drain < math.inf:
            raise ConfigError(f"drain must be a finite number of seconds >= 0, got {self.drain}")
        if self.max_failures < 1:
            raise ConfigError(f"max_failures must be at least 1, got {self.max_failures}")
        if self.snapshot_every < 0:
            raise ConfigError(
                f"snapshot_every must be >= 0 events (0: never), got {self.snapshot_every}"
            )
