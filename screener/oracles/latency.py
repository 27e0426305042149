"""Latency models for simulated answers: none, constant, exponential."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from screener.errors import ConfigError
from screener.simulation.hashing import uniforms

__all__ = ["Latency"]

_LATENCY_STREAM = 1
_KINDS = ("none", "constant", "exponential")


@dataclass(frozen=True, slots=True)
class Latency:
    """Seconds between asking and answering: ``none``, ``constant:S`` or ``exponential:MEAN``.

    Examples
    --------
    >>> Latency.parse("exponential:0.5"), str(Latency.parse("none"))
    (Latency(kind='exponential', seconds=0.5), 'none')
    """

    kind: str = "none"
    seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.kind not in _KINDS:
            raise ConfigError(
                f"unknown latency model {self.kind!r}", "use none, constant:S or exponential:S"
            )
        if not 0.0 <= self.seconds < math.inf:  # NaN fails too
            raise ConfigError(
                f"latency must be a finite number of seconds >= 0, got {self.seconds:g}",
                "e.g. constant:0.05; answers that never come are -O loss=P",
            )

    @classmethod
    def parse(cls, text: str) -> Latency:
        """Parse ``none``, ``0.05`` (constant), ``constant:0.05`` or ``exponential:0.05``."""
        kind, _, value = text.strip().lower().partition(":")
        if kind == "none" and not value:
            return cls()
        if not value:
            kind, value = "constant", kind
        try:
            seconds = float(value)
        except ValueError:
            raise ConfigError(
                f"cannot read latency {text!r}", "use none, constant:0.05 or exponential:0.05"
            ) from None
        return cls(kind, seconds)

    def __str__(self) -> str:
        return "none" if self.kind == "none" else f"{self.kind}:{self.seconds:g}"

    @property
    def is_zero(self) -> bool:
        return self.kind == "none" or self.seconds == 0.0

    def delays(self, seed: int, arms: ArrayLike, seqs: ArrayLike) -> NDArray[np.float64]:
        """Delay of each (arm, seq) pull, a pure function of the seed."""
        size = np.asarray(arms).size
        if self.is_zero:
            return np.zeros(size)
        if self.kind == "constant":
            return np.full(size, self.seconds)
        u = uniforms(seed, _LATENCY_STREAM, arms, seqs)
        return -self.seconds * np.log1p(-u)
