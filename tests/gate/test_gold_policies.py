"""The gate's gold policy as one small type per choice (issue 52, item 4): each type checks its
own parameters in one line naming the fix, GateSettings holds one and checks nothing across
fields, the value policy's need of a crowd prior is checked where the gate builds its judge,
and settings stored flat by earlier versions load as the types."""

from __future__ import annotations

from typing import Any

import pytest

from screener.errors import ConfigError
from screener.gate import (
    DEFAULT_PARAMS,
    FirstGold,
    Gate,
    GateSettings,
    GoldPolicy,
    GoldShare,
    ValueOfGold,
)
from screener.gate.policies import policy_dict, policy_of
from screener.money import Prices

#: What ``GateSettings(policy="share", gold_every=3, max_unscreened=0, params=...,
#: audit_rate=0.1).to_dict()`` wrote before the policy types (the version journals hold).
FLAT_SHARE: dict[str, Any] = {
    "algorithm": "crowd-prior", "params": {"threshold": 0.6, "pilot": 2, "reconsider": True},
    "policy": "share", "gold_every": 3, "max_unscreened": 0, "gold_share": None,
    "gold_budget": None, "audit_rate": 0.1, "alpha": 0.001, "on_change": "ban",
    "prices": {"gold": 0.05, "task": 0.05}, "expected_tasks": 20.0, "bad_label": None,
    "tenure": False, "bans": None, "agreement": None, "binary_labels": False, "panel": 5,
    "confidence": 0.95, "seed": 0,
}  # fmt: skip
PILOT = {**DEFAULT_PARAMS, "pilot": 2}


@pytest.mark.parametrize(
    ("kind", "values", "line"),
    [
        (GoldShare, {"every": 0}, "every must be a whole number >= 1, got 0 (one gold question "
         "in N requests, e.g. --gold-every 10)"),
        (GoldShare, {"every": 2.5}, "every must be a whole number >= 1, got 2.5 (one gold "
         "question in N requests, e.g. --gold-every 10)"),
        (ValueOfGold, {"bans": "sometimes"}, "unknown bans 'sometimes' (use 'cost' or "
         "'promise')"),
        (ValueOfGold, {"tenure": "yes"}, "tenure must be true or false, got 'yes' (pass "
         "tenure=True or tenure=False)"),
        (GateSettings, {"policy": "share"}, "policy must be a gold policy, got 'share' (give "
         "ValueOfGold(), FirstGold() or GoldShare(every=N) of screener.gate)"),
    ],
    ids=["every-0", "every-float", "bans", "tenure", "a-name"],
)  # fmt: skip
def test_each_policy_checks_its_own_parameters_in_one_line(
    kind: type[Any], values: dict[str, Any], line: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        kind(**values)
    assert str(caught.value) == line


def test_the_value_policy_needs_a_crowd_prior_which_the_gate_checks() -> None:
    """GateSettings holds any method beside any policy; the gate's judge is built only over a
    crowd prior, the one place that rule is written."""
    settings = GateSettings(algorithm="quiz", params={"threshold": 0.6})
    with pytest.raises(ConfigError) as caught:
        Gate(settings)
    assert str(caught.value) == (
        "the value policy prices gold with the crowd prior, and quiz has none (use "
        "--algorithm crowd-prior, or --policy first or share)"
    )
    assert Gate(GateSettings(algorithm="quiz", params={"threshold": 0.6}, policy=FirstGold()))


@pytest.mark.parametrize(
    ("policy", "tenure", "ban_rule", "judged"),
    [
        (ValueOfGold(), False, None, True),
        (ValueOfGold(tenure=True), True, "promise", True),
        (ValueOfGold(tenure=True, bans="cost"), True, "cost", True),
        (ValueOfGold(bans="cost"), False, "cost", True),
        (FirstGold(), False, None, False),
        (GoldShare(every=4), False, None, False),
    ],
)
def test_the_settings_read_the_tenure_and_ban_rule_off_the_policy(
    policy: GoldPolicy, tenure: bool, ban_rule: str | None, judged: bool
) -> None:
    settings = GateSettings(params=PILOT, policy=policy)
    assert (settings.uses_tenure, settings.ban_rule) == (tenure, ban_rule)
    gate = Gate(settings)
    assert (gate.judge is not None, gate.judge is not None and gate.judge.tenure is not None) == (
        judged,
        tenure,
    )


@pytest.mark.parametrize(
    "policy", [ValueOfGold(), ValueOfGold(tenure=True, bans="cost"), FirstGold(), GoldShare(7)]
)
def test_settings_round_trip_with_their_policy(policy: GoldPolicy) -> None:
    settings = GateSettings(policy=policy, gold_share=0.2, prices=Prices(0.1, 0.2))
    stored = {**settings.to_dict(), "gold_key": settings.gold_key}
    assert stored["policy"] == policy_dict(policy) and stored["policy"]["name"] == policy.name
    assert GateSettings.from_dict(stored) == settings


@pytest.mark.parametrize(
    ("stored", "line"),
    [
        ({"name": "sometimes"}, "unknown gold policy 'sometimes' (use one of: value, first, "
         "share)"),
        ({"name": "first", "every": 5}, "the first policy takes no parameter every (give it "
         "only its own: none)"),
        ({"name": "share", "tenure": True}, "the share policy takes no parameter tenure (give "
         "it only its own: every)"),
        ({"name": "share", "every": -1}, "every must be a whole number >= 1, got -1 (one gold "
         "question in N requests, e.g. --gold-every 10)"),
    ],
)  # fmt: skip
def test_a_stored_policy_that_is_no_policy_is_refused_naming_it(
    stored: dict[str, Any], line: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        policy_of(stored)
    assert str(caught.value) == line


@pytest.mark.parametrize(
    ("flat", "policy"),
    [
        ({}, GoldShare(every=3)),
        ({"policy": "value", "gold_every": 10}, ValueOfGold()),
        ({"policy": "value", "gold_every": 10, "tenure": True, "bans": "cost"},
         ValueOfGold(tenure=True, bans="cost")),
        ({"policy": "first", "gold_every": 10}, FirstGold()),
        ({"policy": "first", "gold_every": 10, "tenure": None}, None),  # no default: kept
        ({"policy": "first", "gold_every": 5}, None),  # another policy's pace: refused
        ({"policy": "share", "bans": "promise"}, None),
        ({"policy": "quiz"}, None),
    ],
)  # fmt: skip
def test_settings_stored_flat_before_the_policy_types_load_as_them(
    flat: dict[str, Any], policy: GoldPolicy | None
) -> None:
    """Journals hold the settings as the earlier ``to_dict`` wrote them: the policy a name,
    its parameters flat beside the other settings, every one stored whatever the policy."""
    stored = {**FLAT_SHARE, **flat, "gold_key": None}
    if policy is None:
        with pytest.raises(ConfigError) as caught:
            GateSettings.from_dict(stored)
        assert "\n" not in str(caught.value)
        return
    settings = GateSettings.from_dict(stored)
    expected = GateSettings(
        params=PILOT, policy=policy, max_unscreened=0, audit_rate=0.1, gold_key=None
    )
    assert settings == expected
    assert GateSettings.from_dict({**settings.to_dict(), "gold_key": None}) == settings
