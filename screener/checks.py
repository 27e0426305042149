"""Argument checks shared by every layer (the algorithms, the crowd, the gate, the oracles, runs,
reports, the commands): one wording for one mistake, each a ``ConfigError`` naming the fix.
They sit just above ``errors``, the only part of screener they need, so that any module can
check its arguments the same way without depending on the algorithms."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from screener.errors import ConfigError

__all__ = [
    "MAX_BUDGET",
    "MAX_CONCURRENCY",
    "MAX_SEED",
    "MAX_WORKERS",
    "check_choice",
    "check_count",
    "check_flag",
    "check_seed",
]


#: Seeds are kept as SQLite integers (signed 64-bit) and numpy takes no negative seed.
MAX_SEED = 2**63 - 1
#: Workers in one pool: screener is run and tested up to here (a pool is one journal row).
MAX_WORKERS = 100_000
#: Questions in flight at once: a log replay has one per worker of the largest pool in
#: flight; more only piles questions up in memory.
MAX_CONCURRENCY = MAX_WORKERS
#: Answers one run may pay for: more rows than a journal (one per answer) can hold.
MAX_BUDGET = 10**12


def check_choice(label: str, value: str, choices: Sequence[str]) -> None:
    """``value`` must be one of ``choices``."""
    if value not in choices:
        options = " or ".join(repr(choice) for choice in choices)
        raise ConfigError(f"unknown {label} {value!r}", f"use {options}")


def check_count(
    label: str, value: object, minimum: int, fix: str = "", *, maximum: int | None = None
) -> int:
    """A whole number (of answers, questions...), at least ``minimum`` and at most
    ``maximum`` when one is given; bools and floats are refused rather than truncated."""
    if isinstance(value, int | np.integer) and not isinstance(value, bool):
        number = int(value)
        if number >= minimum and (maximum is None or number <= maximum):
            return number
    limits = f">= {minimum}" if maximum is None else f"from {minimum:,} to {maximum:,}"
    raise ConfigError(f"{label} must be a whole number {limits}, got {value!r}", fix)


def check_seed(seed: object) -> int:
    """A seed a run can keep in its journal and hand to numpy."""
    return check_count("seed", seed, 0, "e.g. --seed 0", maximum=MAX_SEED)


def check_flag(label: str, value: object) -> bool:
    """A switch must be a real bool: ``bool("false")`` would silently turn it on."""
    if not isinstance(value, bool):
        raise ConfigError(
            f"{label} must be true or false, got {value!r}", f"pass {label}=True or {label}=False"
        )
    return value
