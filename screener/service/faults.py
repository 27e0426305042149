"""How the reference service misbehaves, the way real platforms do: the fault switches, and the
token bucket behind its rate limit."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from screener.errors import ConfigError

__all__ = ["Faults", "TokenBucket"]


@dataclass(frozen=True, slots=True)
class Faults:
    """How the service misbehaves (all off by default).

    - ``error_rate``: share of requests answered HTTP 503, decided before any processing.
    - ``timeout_rate``: share of requests processed normally whose response is then held
      ``timeout_delay`` seconds (longer than the client's timeout: it retries, same ids).
    - ``duplicate_rate``: share of answers delivered a second time.
    - ``silence_rate``: share of new assignments the worker never answers (they stay pending
      until cancelled; the client must time them out).
    - ``reorder``: answers within a page or webhook batch are shuffled.
    - ``slow``: extra seconds before every response.
    - ``rate_limit``: requests per second allowed (token bucket, burst of one second's
      worth); beyond it, HTTP 429 with ``Retry-After`` in decimal seconds. 0: no limit.
    """

    error_rate: float = 0.0
    timeout_rate: float = 0.0
    timeout_delay: float = 5.0
    duplicate_rate: float = 0.0
    silence_rate: float = 0.0
    reorder: bool = False
    slow: float = 0.0
    rate_limit: float = 0.0

    def __post_init__(self) -> None:
        for label in ("error_rate", "timeout_rate", "duplicate_rate", "silence_rate"):
            rate = getattr(self, label)
            if not 0.0 <= rate < 1.0:
                raise ConfigError(f"{label} must lie in [0, 1), got {rate}")
        for label in ("timeout_delay", "slow", "rate_limit"):
            value = getattr(self, label)
            if not (math.isfinite(value) and value >= 0.0):
                raise ConfigError(f"{label} must be a finite number >= 0, got {value}")


class TokenBucket:
    """``rate`` requests per second with a burst of one second's worth (``rate`` 0: no limit)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self._tokens = rate
        self._refilled = time.monotonic()

    def wait(self) -> float:
        """Seconds to wait when the bucket is empty, else 0 (and a token is spent)."""
        rate = self.rate
        if rate <= 0:
            return 0.0
        now = time.monotonic()
        self._tokens = min(rate, self._tokens + (now - self._refilled) * rate)
        self._refilled = now
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return 0.0
        return (1.0 - self._tokens) / rate
