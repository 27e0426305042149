"""The stream benchmark's adversarial streams (``screener.testing.doubles.adversaries``):
which runs, and how they are read.

Each adversary replays the first ``Plan.adversary_seeds`` answer orders of every dataset (one
by default: the full plan's time), through ``POLICIES``. ``spammers-first`` is defined on
every dataset; the colluding group and the gold recognisers need categories (a wrong class, a
chance answer), so graded datasets are skipped for them, and the report says which.

Read per adversary and policy: the geometric mean of money over no screening's on the same
adversarial stream, the mean accuracy change, the share of bans that were wrong over the crowds
(one dataset's stream) with at least ``MANY_BANS`` bans and how many of those crowds go over
``WRONG_BANS`` (issue 48: q + 0.05), and for ``recognise-10`` the share of the recognisers who
reached a 50th real task that were banned before it (issue 48's target: 75%).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks import harness
from screener.testing.doubles.adversaries import ADVERSARIES, Adversary

__all__ = [
    "POLICIES",
    "adversaries_for",
    "format_adversaries",
    "summarise_adversaries",
]

#: The policies run on every adversarial stream.
POLICIES = ("none", "toloka-10", "toloka-20", "screener", "screener-agree", "oracle-limit")
#: Adversaries that need categorical answers.
CATEGORICAL = ("collude-20", "collude-40", "recognise-10")
#: A crowd's wrong bans are read from this many bans on.
MANY_BANS = 10
#: The issue's bound on a crowd's share of wrong bans: q (0.1) + 0.05.
WRONG_BANS = 0.15
#: The issue's target: recognisers reaching a 50th real task banned before it.
CAUGHT = 0.75


def adversaries_for(graded: bool) -> tuple[Adversary, ...]:
    """The adversaries a dataset is replayed under (graded: ``spammers-first`` only)."""
    return tuple(a for a in ADVERSARIES if not (graded and a in CATEGORICAL))


def summarise_adversaries(rows: Sequence[dict[str, Any]], skipped: Sequence[str]) -> dict[str, Any]:
    """Per adversary and policy, the readings of the module docstring; ``skipped``: the
    graded datasets the categorical adversaries leave out."""
    by: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if row.get("adversary"):
            by[(row["adversary"], row["policy"])].append(row)
    table = []
    for adversary in ADVERSARIES:
        none = _per_dataset(by.get((adversary, "none"), []))
        for policy in POLICIES:
            runs = by.get((adversary, policy), [])
            if runs and policy != "none":
                table.append({"adversary": adversary, "policy": policy,
                              **_against_none(_per_dataset(runs), none), **_bans(runs),
                              **_recognisers(runs)})  # fmt: skip
    return {"table": table, "skipped": list(skipped)}


def _per_dataset(runs: Sequence[dict[str, Any]]) -> dict[str, tuple[float, float]]:
    """Per dataset, the mean money and accuracy over its orders."""
    found: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for run in runs:
        found[run["dataset"]].append(run)
    return {
        d: (float(np.mean([r["money"] for r in rs])), float(np.mean([r["accuracy"] for r in rs])))
        for d, rs in found.items()
    }


def _against_none(
    ours: dict[str, tuple[float, float]], none: dict[str, tuple[float, float]]
) -> dict[str, Any]:
    shared = sorted(set(ours) & set(none))
    ratios = [ours[d][0] / none[d][0] for d in shared]
    gains = [ours[d][1] - none[d][1] for d in shared]
    return {
        "datasets": len(shared),
        "money_ratio": math.exp(float(np.mean(np.log(ratios)))) if ratios else math.nan,
        "accuracy_gain": float(np.mean(gains)) if gains else math.nan,
    }


def _bans(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Wrong bans over the crowds with at least MANY_BANS bans."""
    many = [r for r in runs if r["banned"] >= MANY_BANS]
    banned = sum(r["banned"] for r in many)
    return {
        "crowds": len(many),
        "banned": banned,
        "wrong": sum(r["good_banned"] for r in many),
        "crowds_over": sum(r["good_banned"] / r["banned"] > WRONG_BANS for r in many),
    }


def _recognisers(runs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    return {
        "reached": sum(r.get("recognisers_reached", 0) for r in runs),
        "caught": sum(r.get("recognisers_caught", 0) for r in runs),
    }


def format_adversaries(summary: dict[str, Any]) -> list[str]:
    """The adversarial streams' section of the report (nothing when none ran)."""
    if not summary.get("table"):
        return []
    header = ["stream", "policy", "datasets", "money vs none", "accuracy vs none",
              f"wrong bans (crowds >= {MANY_BANS} bans)", f"crowds over {WRONG_BANS:.0%}",
              "recognisers banned before their 50th task"]  # fmt: skip
    rows = [
        [r["adversary"], r["policy"], str(r["datasets"]), f"{r['money_ratio']:.3f}x",
         f"{r['accuracy_gain']:+.4f}", _share(r["wrong"], r["banned"]),
         f"{r['crowds_over']} of {r['crowds']}",
         _share(r["caught"], r["reached"]) if r["adversary"] == "recognise-10" else "-"]
        for r in summary["table"]
    ]  # fmt: skip
    skipped = ", ".join(summary["skipped"]) or "none"
    return [
        "\n## Adversarial streams: each policy against no screening on the same stream\n",
        f"Graded datasets skipped by {', '.join(CATEGORICAL)} (no wrong class, no chance "
        f"answer): {skipped}. Targets: wrong bans at most {WRONG_BANS:.0%} on every crowd "
        f"with >= {MANY_BANS} bans; recognisers caught >= {CAUGHT:.0%}.\n",
        harness.markdown_table(header, rows),
    ]


def _share(part: float, whole: float) -> str:
    return f"{part:.0f} of {whole:.0f} ({part / whole:.1%})" if whole else "-"
