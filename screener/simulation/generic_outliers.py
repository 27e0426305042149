"""Random (eps, rho)-outlier instances (Ban & He, KDD 2020, Definition 3.2 and Section 6.1).

An arm group ``G`` is an (eps, rho)-outlier group when, with ``N_u`` the arms above ``max G`` and
``N_l`` the arms below ``min G`` (and no other arm: ``G`` is contiguous in the sorted means),

* Constraint (1): for every ``j`` in ``G``, ``min_{i in N_u} |y_j - y_i|`` and
  ``min_{i in N_l} |y_j - y_i|`` both exceed ``(1 + eps)`` times the neighbourhood distance
  ``max(gap above i, gap below i)`` of every normal arm ``i``, computed inside its own group
  (``N_u`` or ``N_l``); a bound over an empty group holds vacuously;
* Constraint (2): ``|N_u| + |N_l| > rho n``, and each of ``N_u``, ``N_l`` is empty or has more
  than ``n (1 - rho)`` arms;

and all means are distinct. Section 6.1 builds "upper-side" groups (``N_u`` empty) and
"intermediate" groups (both sides non-empty) by drawing normal means uniformly on [0, 1] and
injecting ``(1 - rho) n`` outliers. Two points of that recipe cannot be followed literally, and
this module says what it does instead:

* ``(1 - rho) n`` outliers would leave exactly ``rho n`` normal arms, violating
  ``|N_u| + |N_l| > rho n``: we inject ``ceil(n (1 - rho)) - 1`` outliers by default, the
  largest group the definition allows (1 for n = 20, rho = 0.9), or ``n_outliers`` of them.
  ``boundary=True`` follows Section 6.1 literally instead: ``floor(n (1 - rho))`` outliers
  (exactly ``(1 - rho) n`` when that is an integer: 2 for n = 20), checked against the
  *relaxed* Constraint (2), its three strict inequalities made non-strict:
  ``|N_u| + |N_l| >= rho n`` and each side empty or ``>= n (1 - rho)``. Such a group is not an
  outlier group of the definition; it is what GOLD's ``inclusive=True`` reading is for. The
  generator still draws every non-empty side with MORE than ``n (1 - rho)`` arms (the relaxed
  check would accept exactly ``n (1 - rho)``): inclusive GOLD's ranking guarantee needs that
  (see ``screener.algorithms.ksigma.gold``), and for upper groups it holds by itself.
* Normal means that fill [0, 1] leave no room in [0, 1] for arms ``(1 + eps)`` times their
  largest gap away. The definition only involves ratios of distances, so we draw in a free
  coordinate where the normal arms are uniform on [0, 1], place the outliers there, and map the
  whole instance affinely onto ``[low, high]`` (Bernoulli means in [0, 1]).

Section 6.1 asks intermediate groups for ``|N_u|, |N_l| > n (1 - rho) / 2``; Definition 3.1
needs ``> n (1 - rho)``, and we build (and check) the latter.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal, NamedTuple

import numpy as np
from numpy.typing import ArrayLike

from screener.arrays import FloatArray
from screener.errors import ConfigError, ScreenerError

__all__ = [
    "GenericOutlierInstance",
    "InstanceError",
    "OutlierKind",
    "generic_outlier_instance",
    "outlier_group_violations",
    "outlier_groups",
]

OutlierKind = Literal["upper", "intermediate"]
_KIND_CODE = {"upper": 0, "intermediate": 1}


class InstanceError(ScreenerError, RuntimeError):
    """No instance satisfying the definition was drawn within ``max_tries`` attempts."""


class GenericOutlierInstance(NamedTuple):
    """Bernoulli means and the indices of the injected (eps, rho)-outlier group."""

    means: FloatArray
    outliers: frozenset[int]


def _minority(n: int, rho: float) -> float:
    return round(n * (1.0 - rho), 9)


def _max_gap(values: FloatArray) -> float:
    """The largest neighbourhood distance inside a group: its largest adjacent gap."""
    if values.size < 2:
        return 0.0
    return float(np.diff(np.sort(values)).max())


def outlier_group_violations(
    means: ArrayLike, group: Iterable[int], eps: float, rho: float, boundary: bool = False
) -> list[str]:
    """Which parts of Definition 3.2 the arms ``group`` break (empty: a valid outlier group).

    ``boundary=True`` checks the relaxed Constraint (2) of Section 6.1's literal setup
    (``>=`` for its three ``>``; see the module docstring).
    """
    y = np.asarray(means, dtype=np.float64).reshape(-1)
    members = sorted(set(group))
    n = y.size
    problems: list[str] = []
    if not members:
        return ["the group is empty"]
    if np.unique(y).size != n:
        problems.append("means are not distinct")
    inside = np.zeros(n, dtype=bool)
    inside[members] = True
    top, bottom = y[inside].max(), y[inside].min()
    upper_arms, lower_arms = y[~inside & (y > top)], y[~inside & (y < bottom)]
    if upper_arms.size + lower_arms.size != n - len(members):
        problems.append("a normal arm lies between the group's smallest and largest means")
    reach = (1.0 + eps) * max(_max_gap(upper_arms), _max_gap(lower_arms))
    for side, others in (("N_u", upper_arms), ("N_l", lower_arms)):
        if others.size == 0:
            continue
        closest = float(np.abs(y[inside][:, None] - others[None, :]).min())
        if not closest > reach:
            problems.append(
                f"Constraint (1): distance {closest:.6g} from the group to {side} is not above "
                f"(1 + eps) x the largest normal neighbourhood distance = {reach:.6g}"
            )
    problems += _constraint_2(upper_arms.size, lower_arms.size, n, len(members), rho, boundary)
    return problems


def _constraint_2(
    n_upper: int, n_lower: int, n: int, n_group: int, rho: float, boundary: bool
) -> list[str]:
    """Constraint (2) on the side sizes of ``n`` arms; non-strict when ``boundary``."""
    minority = _minority(n, rho)
    problems: list[str] = []
    if boundary:
        if not n_upper + n_lower >= round(rho * n, 9):
            problems.append(f"Constraint (2), relaxed: {n - n_group} normal arms, fewer than rho n")
    elif not n_upper + n_lower > rho * n:
        problems.append(f"Constraint (2): {n - n_group} normal arms, not more than rho n")
    for side, size in (("N_u", n_upper), ("N_l", n_lower)):
        if boundary and size and not size >= minority:
            problems.append(
                f"Constraint (2), relaxed: |{side}| = {size} is neither 0 nor >= n (1 - rho)"
            )
        elif not boundary and size and not size > minority:
            problems.append(f"Constraint (2): |{side}| = {size} is neither 0 nor > n (1 - rho)")
    return problems


def _largest_group(n: int, rho: float, boundary: bool) -> int:
    """The largest group size Constraint (2) allows: ``< n (1 - rho)``, or ``<=`` (boundary)."""
    minority = _minority(n, rho)
    return math.floor(minority) if boundary else math.ceil(minority) - 1


def outlier_groups(
    means: ArrayLike, eps: float, rho: float, boundary: bool = False
) -> list[frozenset[int]]:
    """Every (eps, rho)-outlier group of an instance (contiguous windows in sorted order);
    with ``boundary``, every group of the relaxed definition."""
    y = np.asarray(means, dtype=np.float64).reshape(-1)
    order = np.argsort(y, kind="stable")
    largest = _largest_group(y.size, rho, boundary)
    found: list[frozenset[int]] = []
    for size in range(1, largest + 1):
        for start in range(y.size - size + 1):
            window = order[start : start + size].tolist()
            if not outlier_group_violations(y, window, eps, rho, boundary):
                found.append(frozenset(window))
    return found


def generic_outlier_instance(
    n: int,
    eps: float,
    rho: float = 0.9,
    kind: OutlierKind = "upper",
    seed: int = 0,
    *,
    n_outliers: int | None = None,
    margin: float = 1.5,
    low: float = 0.05,
    high: float = 0.95,
    max_tries: int = 100,
    boundary: bool = False,
) -> GenericOutlierInstance:
    """Bernoulli means of ``n`` arms holding exactly one (eps, rho)-outlier group, and the group.

    The generator, exactly (see the module docstring for the departures from Section 6.1):
    ``rng = default_rng(SeedSequence([seed, n, round(1000 eps), round(1000 rho), kind]))``;
    ``k = n_outliers`` or ``ceil(n (1 - rho)) - 1`` outliers (``floor(n (1 - rho))`` with
    ``boundary``), ``n - k`` normal arms, for "intermediate" ``n_l`` of them below the group
    (``_lower_side``); then at most ``max_tries`` draws (``_draw``), the first accepted whose
    injected group passes ``outlier_group_violations`` and is the instance's only outlier
    group (``outlier_groups``), both with ``boundary``.

    ``boundary=True`` builds Section 6.1's literal groups of ``(1 - rho) n`` arms, valid for the
    relaxed Constraint (2) only (module docstring); the default instances do not change.
    Raises ``ConfigError`` for impossible parameters and ``InstanceError`` after ``max_tries``
    rejected draws (rare: a rejection needs tied means or a normal arm far from the others).
    """
    _check_parameters(kind, eps, rho, margin, (low, high), seed, max_tries)
    k = _group_size(n, rho, n_outliers, boundary)
    n_normal = n - k
    side_min = _lower_side(kind, n, rho, n_normal)
    rng = np.random.default_rng(
        np.random.SeedSequence([seed, n, round(1000 * eps), round(1000 * rho), _KIND_CODE[kind]])
    )
    n_lower = n_normal if kind == "upper" else int(rng.integers(side_min, n_normal - side_min + 1))
    for _ in range(max_tries):
        drawn = _draw(rng, n_lower, n_normal, k, margin * (1.0 + eps), (low, high))
        # Positional ``boundary``: tests replace the checker with ``(*args)`` stand-ins.
        if drawn is None or outlier_group_violations(*drawn, eps, rho, boundary):
            continue
        if outlier_groups(drawn.means, eps, rho, boundary) != [drawn.outliers]:
            continue
        drawn.means.flags.writeable = False
        return drawn
    raise InstanceError(
        f"no {kind} (eps={eps}, rho={rho}) instance of {n} arms in {max_tries} draws",
        "raise max_tries or margin",
    )


def _check_parameters(
    kind: str,
    eps: float,
    rho: float,
    margin: float,
    span: tuple[float, float],
    seed: int,
    max_tries: int,
) -> None:
    low, high = span
    if kind not in _KIND_CODE:
        raise ConfigError(f"unknown outlier kind {kind!r}", "use 'upper' or 'intermediate'")
    if not (math.isfinite(eps) and eps > 0):
        raise ConfigError(f"eps must be a positive number, got {eps}")
    if not 0.5 < rho < 1.0:
        raise ConfigError(f"rho must lie in (0.5, 1), got {rho}")
    if not margin > 1.0:
        raise ConfigError(f"margin must exceed 1, got {margin}", "try margin=1.5")
    if not 0.0 <= low < high <= 1.0:
        raise ConfigError(f"need 0 <= low < high <= 1, got [{low}, {high}]")
    if seed < 0 or max_tries < 1:
        raise ConfigError("seed must be >= 0 and max_tries >= 1")


def _group_size(n: int, rho: float, n_outliers: int | None, boundary: bool) -> int:
    """``n_outliers``, or the largest group Constraint (2) allows; refused outside 1 to that."""
    largest = _largest_group(n, rho, boundary)
    k = largest if n_outliers is None else n_outliers
    if not 1 <= k <= largest:
        bound = "floor(n (1 - rho))" if boundary else "ceil(n (1 - rho)) - 1"
        raise ConfigError(
            f"an (eps, rho)-outlier group of {n} arms has 1 to {bound} = "
            f"{largest} members, asked for {k}",
            "use more arms or a smaller rho",
        )
    return k


def _lower_side(kind: OutlierKind, n: int, rho: float, n_normal: int) -> int:
    """The fewest normal arms a side of an intermediate group takes, ``floor(n (1 - rho)) + 1``
    (``n_l`` is uniform on ``[that, n_normal - that]``); refused when both sides cannot."""
    minority = _minority(n, rho)
    side_min = math.floor(minority) + 1
    if kind == "intermediate" and n_normal < 2 * side_min:
        raise ConfigError(
            f"an intermediate group needs more than n (1 - rho) = {minority:g} normal arms on "
            f"each side, but only {n_normal} normal arms exist",
            "use more arms",
        )
    return side_min


def _draw(
    rng: np.random.Generator,
    n_lower: int,
    n_normal: int,
    k: int,
    stretch: float,
    span: tuple[float, float],
) -> GenericOutlierInstance | None:
    """One candidate instance, drawn in the free coordinate (None when the normal arms tie):

    a. normal positions ``x ~ U[0, 1]`` sorted (the lowest ``n_lower`` form ``N_l``);
    b. ``D`` = the largest adjacent gap inside ``N_l`` and inside ``N_u``, ``s = stretch D``
       (``stretch = margin (1 + eps)``);
    c. outliers ``max(N_l) + s + U[0, D]`` each; for "intermediate", ``N_u`` is shifted so
       that its lowest arm sits at ``max(N_l) + s + D + s``;
    d. all positions mapped affinely onto ``span`` = [low, high], the arms shuffled.
    """
    low, high = span
    positions = np.sort(rng.uniform(0.0, 1.0, n_normal))
    lower_group, upper_group = positions[:n_lower], positions[n_lower:]
    spread = max(_max_gap(lower_group), _max_gap(upper_group))
    if spread <= 0.0:
        return None
    separation = stretch * spread
    start = float(lower_group.max()) + separation
    outliers = start + rng.uniform(0.0, spread, k)
    if upper_group.size:
        upper_group = upper_group - upper_group.min() + start + spread + separation
    free = np.concatenate([lower_group, upper_group, outliers])
    scaled = low + (free - free.min()) * ((high - low) / (free.max() - free.min()))
    order = rng.permutation(n_normal + k)
    return GenericOutlierInstance(
        scaled[order], frozenset(np.flatnonzero(order >= n_normal).tolist())
    )
