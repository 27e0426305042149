"""What a requester sets for a gate: the algorithm, when gold is asked, the prices, the audits."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from screener.algorithms import ALGORITHMS
from screener.checks import check_choice, check_count, check_seed
from screener.errors import ConfigError
from screener.gate.ids import check_gold_key, new_gold_key
from screener.gate.policies import (
    GOLD_POLICIES,
    BanRule,
    GoldPolicy,
    ValueOfGold,
    policy_dict,
    policy_of,
)
from screener.money import Prices

__all__ = ["DEFAULT_PARAMS", "GateSettings", "GoldIds", "OnChange"]

#: What the change detector's alarm does to a qualified worker: ban it at once, or screen it
#: again from its next answers on.
OnChange = Literal["ban", "reopen"]
#: How gold ids are made (``screener.gate.ids``): sealed, or hashed (gates journaled before).
GoldIds = Literal["sealed", "hashed"]
#: The gate's default algorithm: crowd-prior against Toloka's bar, its first 20 workers a pilot
#: whose answers fit the prior that judges everyone after them, a qualified worker's audit
#: answers judged too (a ban under the same rule).
DEFAULT_PARAMS: Mapping[str, Any] = {"threshold": 0.6, "pilot": 20, "reconsider": True}
#: The flat keys of a policy in settings stored before the policy types, and the parameter
#: each one became (``_flat_policy``).
_FLAT_KEYS = {"gold_every": "every", "tenure": "tenure", "bans": "bans"}
#: Each of those parameters' default: what a policy without it was stored with.
_FLAT_DEFAULTS = {f.name: f.default for p in GOLD_POLICIES.values() for f in dataclasses.fields(p)}


@dataclass(frozen=True)
class GateSettings:
    """Everything that defines a gate (plain values: a gate is rebuilt from them to replay).

    ``algorithm`` and ``params``: the screening algorithm (an open-roster one: crowd-prior,
    confident-thresholding and fdr-thresholding with ``max_workers``, toloka-rule, quiz,
    lsa...). ``policy``: when gold is asked, with its own parameters (``GoldPolicy``:
    ``ValueOfGold``, the default, ``FirstGold`` or ``GoldShare``, ``screener.gate.policies``).
    ``max_unscreened``: real tasks a worker may do before its first gold question, whatever
    the policy says. ``gold_share``: the most gold questions may be of all replies, beyond
    those ``max_unscreened`` makes; ``gold_budget``: the most gold questions in all (None:
    no cap). ``audit_rate``: share of a qualified worker's requests that get a gold question,
    watched by the change detector (``alpha`` its false-alarm level, ``on_change`` what its
    alarm does). ``prices``; ``expected_tasks``: real tasks a worker does, before the stream
    says; ``bad_label``: what a label from a worker under the bar costs the requester
    (default: twice the task price: it is worth nothing, and another is bought in its
    place). ``agreement``: the error level of a ban on task labels' agreement with workers
    whose gold puts them above the bar (``screener.gate.agreement``; None: labels are kept,
    and decide nothing);
    ``binary_labels``: the task labels have two classes (agreement then counts two wrong
    labels as one, a sharper test); ``panel``: the references the gate makes on purpose with
    extra gold, with ``agreement`` (0: only those the algorithm's gold makes). ``confidence``:
    the probability of its label at which a registered item is done
    (``screener.gate.items``). ``seed``: the
    audits' draws. ``gold_key``: the secret the gold ids are made with
    (``screener.gate.ids``), drawn at random unless given, so that the same settings give the
    same ids; kept out of ``to_dict`` and ``repr``, and stored only where a resume needs it
    (the run's spec in the journal, ``gate_spec``); None only for a gate journaled before
    gold keys (sequential ids ``g0, g1, ...``). ``gold_ids``: ``sealed`` ids name their
    worker and number, so that no record of an answered question is kept
    (``screener.gate.golds``); ``hashed`` only for a gate journaled before them.

    Examples
    --------
    >>> GateSettings().params["threshold"], GateSettings().policy
    (0.6, ValueOfGold(tenure=False, bans=None))
    """

    algorithm: str = "crowd-prior"
    params: Mapping[str, Any] = field(default_factory=lambda: dict(DEFAULT_PARAMS))
    policy: GoldPolicy = field(default_factory=ValueOfGold)
    max_unscreened: int = 3
    gold_share: float | None = None
    gold_budget: int | None = None
    audit_rate: float = 0.02
    alpha: float = 0.001
    on_change: OnChange = "ban"
    prices: Prices = field(default_factory=Prices)
    expected_tasks: float = 20.0
    bad_label: float | None = None
    agreement: float | None = None
    binary_labels: bool = False
    panel: int = 5
    confidence: float = 0.95
    seed: int = 0
    gold_key: str | None = field(default_factory=new_gold_key, repr=False)
    gold_ids: GoldIds = "sealed"

    def __post_init__(self) -> None:
        self._check_method()
        self._check_policy()
        self._check_amounts()

    def _check_method(self) -> None:
        if self.algorithm not in ALGORITHMS:
            known = ", ".join(sorted(ALGORITHMS))
            raise ConfigError(f"unknown algorithm {self.algorithm!r}", f"choose one of: {known}")
        cls = ALGORITHMS[self.algorithm]
        if cls.fixed_roster is not None:
            raise ConfigError(
                f"a gate needs an algorithm whose workers may join: {self.algorithm} needs a "
                f"fixed roster ({cls.fixed_roster})",
                "use crowd-prior (the default), toloka-rule, quiz, lsa, or "
                "confident-thresholding / fdr-thresholding with max_workers",
            )
        if "seed" in self.params:
            raise ConfigError(
                "seed is the gate's setting, which the algorithm is given too, not a parameter",
                "give it with --seed N (seed= in Python), not -p seed=",
            )
        check_seed(self.seed)
        check_gold_key(self.gold_key)
        check_choice("gold_ids", self.gold_ids, get_args(GoldIds))

    def _check_policy(self) -> None:
        if not isinstance(self.policy, GoldPolicy):
            raise ConfigError(
                f"policy must be a gold policy, got {self.policy!r}",
                "give ValueOfGold(), FirstGold() or GoldShare(every=N) of screener.gate",
            )
        check_choice("on_change", self.on_change, get_args(OnChange))

    def _check_amounts(self) -> None:
        check_count("max_unscreened", self.max_unscreened, 0, "e.g. 3 tasks before the first")
        if self.gold_share is not None:
            _fraction("gold_share", self.gold_share, open_low=True)
        if self.gold_budget is not None:
            check_count("gold_budget", self.gold_budget, 1, "the most gold questions, e.g. 500")
        _fraction("audit_rate", self.audit_rate, open_low=False)
        _fraction("alpha", self.alpha, open_low=True, below_one=True)
        if self.agreement is not None:
            _fraction("agreement", self.agreement, open_low=True, below_one=True)
        check_count("panel", self.panel, 0, "references made on purpose, e.g. 5")
        if not (isinstance(self.confidence, int | float) and 0.5 <= self.confidence < 1):
            raise ConfigError(
                f"confidence must be a probability in [0.5, 1), got {self.confidence!r}",
                "e.g. --confidence 0.95 (an item is done when its label is this likely right)",
            )
        if not (math.isfinite(self.expected_tasks) and self.expected_tasks >= 1):
            raise ConfigError(
                f"expected_tasks must be a number >= 1, got {self.expected_tasks}", "e.g. 20"
            )
        if self.bad_label is not None and not (
            math.isfinite(self.bad_label) and self.bad_label >= 0
        ):
            raise ConfigError(f"bad_label must be a cost >= 0, got {self.bad_label}")

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values of every setting but the secret ``gold_key`` (this is what
        status and reports show), which ``from_dict`` turns back into these settings when
        given the key.

        Examples
        --------
        >>> from screener.gate.policies import GoldShare
        >>> settings = GateSettings(policy=GoldShare(every=5), prices=Prices(gold=0.1))
        >>> settings.to_dict()["policy"]
        {'name': 'share', 'every': 5}
        >>> "gold_key" in settings.to_dict()
        False
        >>> stored = {**settings.to_dict(), "gold_key": settings.gold_key}
        >>> GateSettings.from_dict(stored) == settings
        True
        """
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        del values["gold_key"]
        return {
            **values, "params": dict(self.params), "policy": policy_dict(self.policy),
            "prices": self.prices.to_dict(),
        }  # fmt: skip

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GateSettings:
        """The settings ``to_dict`` wrote (a fresh ``gold_key`` unless ``data`` holds one),
        or an earlier version wrote with the policy flat (``_flat_policy``); ConfigError,
        naming the keys, for any other."""
        values = _flat_policy(data)
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ConfigError(
                f"these gate settings hold keys this screener does not know: {unknown}",
                "use the screener version that wrote them",
            )
        if "prices" in values:
            values["prices"] = Prices.of(values["prices"])
        if "policy" in values:
            values["policy"] = policy_of(values["policy"])
        return cls(**values)

    @property
    def uses_tenure(self) -> bool:
        """Whether the tenure prior prices and judges the workers."""
        return isinstance(self.policy, ValueOfGold) and self.policy.tenure

    @property
    def ban_rule(self) -> BanRule | None:
        """The value policy's own ban rule, if any (None: only the algorithm bans)."""
        return self.policy.ban_rule if isinstance(self.policy, ValueOfGold) else None

    @property
    def label_cost(self) -> float:
        """What a label from a worker under the bar costs the requester: by default twice the
        task price (the label is worth nothing, and another must be bought in its place)."""
        return 2.0 * self.prices.task if self.bad_label is None else self.bad_label


def _flat_policy(data: Mapping[str, Any]) -> dict[str, Any]:
    """``data`` in the form ``to_dict`` writes now (``{"policy": {"name": ..., ...}}``),
    from the form of the versions before the policy types: ``policy`` a name, and the
    parameters flat beside the other settings (``gold_every``, ``tenure``, ``bans``), each
    stored whatever the policy, at its default where the policy has none. Settings in the
    form of now are returned as they are.

    Examples
    --------
    >>> flat = {"policy": "share", "gold_every": 20, "tenure": False, "bans": None}
    >>> _flat_policy(flat)
    {'policy': {'name': 'share', 'every': 20}}
    """
    values = dict(data)
    name = values.get("policy", ValueOfGold.name)
    if not isinstance(name, str):
        return values  # the form to_dict writes
    policy = GOLD_POLICIES.get(name)
    own = set() if policy is None else {f.name for f in dataclasses.fields(policy)}
    flat = {_FLAT_KEYS[key]: values.pop(key) for key in _FLAT_KEYS if key in values}
    # Another policy's parameter was stored at its default, and meant nothing; at another
    # value (never stored: it was refused) it stays, for policy_of to refuse by name.
    kept = {k: v for k, v in flat.items() if k in own or v != _FLAT_DEFAULTS[k]}
    values["policy"] = {"name": name, **kept}
    return values


def _fraction(label: str, value: float, *, open_low: bool, below_one: bool = False) -> None:
    low_ok = value > 0 if open_low else value >= 0
    high_ok = value < 1 if below_one else value <= 1
    if not (isinstance(value, int | float) and math.isfinite(value) and low_ok and high_ok):
        raise ConfigError(f"{label} must be a share in [0, 1], got {value!r}", f"e.g. {label}=0.1")
