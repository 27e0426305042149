"""The stream benchmark's tables, targets and figure (``benchmarks.stream``)."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.stream_adversary import format_adversaries, summarise_adversaries
from benchmarks.stream_oracle import ORACLES
from benchmarks.stream_timing import format_estimate

__all__ = ["format_report", "not_dominated", "overall", "plot_curves", "summarise"]

DEFAULT = "screener"
RULES = ("toloka-5", "toloka-10", "toloka-20", "quiz-5", "quiz-10", "quiz-20")
#: Workers under the bar must make at least this share of a dataset's labels for the first
#: target (screening can pay there).
MANY_UNDER_BAR = 0.10
#: Where no one is under the bar, a policy may spend at most this much of no screening's money.
FRUGAL = 1.05
MEASURES = ("money", "accuracy", "accuracy_ds", "gold", "bad_labels_kept", "banned",
            "good_banned", "replacements", "final_labels", "short_items", "before_gold",
            "cpu")  # fmt: skip
#: An accuracy change counts as one (``overall``) above this: a few items' labels.
ACCURATE = 0.005
#: screener's other gates, options (heuristics): each judged as the default is, in the targets.
VARIANTS = ("screener-tenure", "screener-cost")
#: The bounds (``benchmarks.stream_oracle``), judged as the default is: where they do not win,
#: no screening that bans the workers under the bar and keeps the others can.
BOUNDS = tuple(ORACLES)
#: No screening at leads 2, 3 and 4 (``benchmarks.stream.LEADS``): the frontier it can buy.
NONE_ROWS = ("none", "none-lead3", "none-lead4")
#: The issue's target: datasets (of 26) on which a policy is dominated by no none row.
NOT_DOMINATED = 16


def summarise(
    rows: Sequence[dict[str, Any]], under_bar: dict[str, float], skipped: Sequence[str] = ()
) -> dict[str, Any]:
    """Means over the real answer orders per (dataset, gold share, policy), the targets, and
    the adversarial streams' readings (``skipped``: graded datasets they leave out)."""
    groups: dict[tuple[str, float, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        if not row.get("adversary"):
            groups[(row["dataset"], row["gold_share"], row["policy"])].append(row)
    means = [
        {"dataset": d, "gold_share": g, "policy": p, "runs": len(group),
         **{m: _mean([r[m] for r in group]) for m in MEASURES},
         "before_gold_max": max(r["before_gold"] for r in group)}
        for (d, g, p), group in sorted(groups.items())
    ]  # fmt: skip
    variants = {policy: _verdicts(means, under_bar, policy) for policy in VARIANTS}
    bounds = {policy: _verdicts(means, under_bar, policy) for policy in BOUNDS}
    return {"means": means, "under_bar": under_bar, "verdicts": _verdicts(means, under_bar),
            "variants": variants, "bounds": bounds,
            "adversaries": summarise_adversaries(rows, skipped)}  # fmt: skip


def _mean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


def _verdicts(
    means: Sequence[dict[str, Any]], under_bar: dict[str, float], policy: str = DEFAULT
) -> list[dict[str, Any]]:
    """Per dataset (default gold share): ``policy`` (the default's) against no screening and
    every rule configuration."""
    by = {(m["dataset"], m["policy"]): m for m in means if m["gold_share"] == 0.1}
    verdicts = []
    for dataset in sorted({d for d, _ in by}):
        ours, none = by.get((dataset, policy)), by.get((dataset, "none"))
        if ours is None or none is None:
            continue
        dominated_by = [
            rule for rule in RULES
            if (r := by.get((dataset, rule))) is not None
            and r["money"] <= ours["money"] and r["accuracy"] >= ours["accuracy"]
            and (r["money"] < ours["money"] or r["accuracy"] > ours["accuracy"])
        ]  # fmt: skip
        verdicts.append({
            "dataset": dataset,
            "under_bar": under_bar.get(dataset, math.nan),
            "money_ratio": ours["money"] / none["money"],
            "accuracy_gain": ours["accuracy"] - none["accuracy"],
            "cheaper": ours["money"] < none["money"],
            "no_worse": ours["accuracy"] >= none["accuracy"],
            "dominated_by": dominated_by,
        })  # fmt: skip
    return verdicts


def overall(means: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each policy over every dataset at the default gold share: the geometric mean of its
    money over no screening's (a ratio per dataset, so each dataset counts once whatever its
    size), its mean accuracy change, and on how many datasets it is cheaper / more accurate
    (by more than ACCURATE), and on how many no none row (``not_dominated``) is at most as dear
    and at least as accurate. The default first, then its variants, the rules and the bounds."""
    policies = {m["policy"] for m in means if m["gold_share"] == 0.1} - {"none"}
    rank = {policy: i for i, policy in enumerate((DEFAULT, *VARIANTS, *RULES, *BOUNDS))}
    rows = []
    for policy in sorted(policies, key=lambda p: (rank.get(p, len(rank)), p)):
        verdicts = _verdicts(means, {}, policy)
        if not verdicts:
            continue
        ratios = [v["money_ratio"] for v in verdicts]
        gains = [v["accuracy_gain"] for v in verdicts]
        ours = [m for m in means if m["policy"] == policy and m["gold_share"] == 0.1]
        filled = [m["replacements"] / m["final_labels"] for m in ours if m["final_labels"]]
        rows.append({
            "policy": policy,
            "datasets": len(verdicts),
            "money_ratio": math.exp(float(np.mean(np.log(ratios)))),
            "accuracy_gain": _mean(gains),
            "cheaper": sum(v["cheaper"] for v in verdicts),
            "more_accurate": sum(g > ACCURATE for g in gains),
            "filled": _mean(filled),
            "not_dominated": not_dominated(means, policy),
        })  # fmt: skip
    return rows


def not_dominated(means: Sequence[dict[str, Any]], policy: str) -> int:
    """The datasets (default gold share) on which no none row but ``policy`` itself is at most
    as dear and at least as accurate as ``policy``, means over orders: equal counts as
    dominated (no screening buys the same for no more)."""
    by = {(m["dataset"], m["policy"]): m for m in means if m["gold_share"] == 0.1}
    count = 0
    for dataset in sorted({d for d, p in by if p == policy}):
        ours = by[(dataset, policy)]
        count += not any(
            (row := by.get((dataset, none))) is not None
            and row["money"] <= ours["money"] and row["accuracy"] >= ours["accuracy"]
            for none in NONE_ROWS if none != policy
        )  # fmt: skip
    return count


def _wins(verdicts: Sequence[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The datasets with many labels under the bar, and those of them a policy wins."""
    many = [v for v in verdicts if v["under_bar"] >= MANY_UNDER_BAR]
    return many, [v for v in many if v["cheaper"] and v["no_worse"] and not v["dominated_by"]]


def _frugal(
    verdicts: Sequence[dict[str, Any]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The datasets with no one under the bar, and those of them a policy spends at most
    FRUGAL of no screening's money on."""
    nobody = [v for v in verdicts if v["under_bar"] == 0.0]
    return nobody, [v for v in nobody if v["money_ratio"] <= FRUGAL]


def _wrong_bans(means: Sequence[dict[str, Any]], policy: str) -> str:
    """Good workers among the banned, summed over datasets (gold share 10%)."""
    rows = [m for m in means if m["policy"] == policy and m["gold_share"] == 0.1]
    banned = sum(m["banned"] for m in rows)
    good = sum(m["good_banned"] for m in rows)
    return f"{good:.0f} good of {banned:.0f} banned ({good / banned:.1%})" if banned else "no bans"


def _targets(report: harness.Report) -> list[str]:
    verdicts = report["verdicts"]
    many, wins = _wins(verdicts)
    nobody, frugal = _frugal(verdicts)
    limit = max(
        (m["before_gold_max"] for m in report["means"] if m["policy"] == DEFAULT), default=0
    )
    datasets = len({m["dataset"] for m in report["means"]})
    lines = [
        f"- datasets where workers under the bar make >= {MANY_UNDER_BAR:.0%} of the labels: "
        f"{len(wins)} of {len(many)} with {DEFAULT} cheaper than no screening, as accurate "
        f"or more, and no rule configuration dominating it (target: 80%)",
        f"- datasets with no one under the bar: {len(frugal)} of {len(nobody)} with {DEFAULT} "
        f"at most {FRUGAL - 1:.0%} dearer than no screening",
        f"- most real tasks a worker did before its first gold question under {DEFAULT}: "
        f"{limit:g} (its limit: 3)",
        f"- datasets where no none row (leads 2, 3, 4) is at most as dear and at least as "
        f"accurate as {DEFAULT}: {not_dominated(report['means'], DEFAULT)} of {datasets} "
        f"(target: {NOT_DOMINATED} of 26)",
        f"- wall time: {report['seconds']:.0f} s (target: under 600 s for the full run)",
        *format_estimate(report.get("full_estimate"), report["plan"]["mode"]),
        f"- wrong bans under {DEFAULT}: {_wrong_bans(report['means'], DEFAULT)}",
    ]
    for policy, found in report.get("variants", {}).items():
        many, wins = _wins(found)
        lines.append(
            f"- {policy} (a heuristic, an option): {len(wins)} of {len(many)} as above; wrong "
            f"bans: {_wrong_bans(report['means'], policy)}"
        )
    for policy, found in report.get("bounds", {}).items():
        many, wins = _wins(found)
        nobody, frugal = _frugal(found)
        lines.append(
            f"- {policy} (a bound, not a policy): {len(wins)} of {len(many)} as above; "
            f"{len(frugal)} of {len(nobody)} with no one under the bar at most "
            f"{FRUGAL - 1:.0%} dearer"
        )
    return lines


def format_report(report: harness.Report) -> str:
    plan = report["plan"]
    out = [
        f"# Stream benchmark ({plan['mode']}): final labels per dollar, {plan['overlap']} "
        f"overlap, gold {plan['gold_price']:g} and task {plan['task_price']:g}\n",
        "## Targets\n",
        *_targets(report),
        "\n## Over every dataset (gold share 10%): each policy against no screening\n",
        _overall_table(overall(report["means"])),
        *format_adversaries(report.get("adversaries", {})),
        "\n## Per dataset (gold share 10%): the default against no screening and the rules\n",
        _verdict_table(report["verdicts"]),
        *_bound_tables(report.get("bounds", {})),
        "\n## Every policy (gold share 10%, means over answer orders)\n",
        _policy_table([m for m in report["means"] if m["gold_share"] == 0.1]),
    ]
    sweep = [m for m in report["means"] if m["gold_share"] != 0.1]
    if sweep:
        out += ["\n## Gold share sweep\n", _policy_table(sweep, share=True)]
    return "\n".join(out) + "\n"


def _overall_table(rows: Sequence[dict[str, Any]]) -> str:
    header = ["policy", "datasets", "money vs none (geometric mean)", "accuracy vs none (mean)",
              "cheaper on", f"more accurate (> {ACCURATE:g}) on",
              "filled labels (mean share)", "not dominated by a none row on"]  # fmt: skip
    table = [
        [r["policy"], str(r["datasets"]), f"{r['money_ratio']:.3f}x",
         f"{r['accuracy_gain']:+.4f}", str(r["cheaper"]), str(r["more_accurate"]),
         f"{r['filled']:.1%}", str(r["not_dominated"])]
        for r in rows
    ]  # fmt: skip
    return harness.markdown_table(header, table)


def _verdict_table(verdicts: Sequence[dict[str, Any]]) -> str:
    rows = [
        [v["dataset"], f"{v['under_bar']:.0%}", f"{v['money_ratio']:.2f}x",
         f"{v['accuracy_gain']:+.3f}", ", ".join(v["dominated_by"]) or "-"]
        for v in verdicts
    ]  # fmt: skip
    header = ["dataset", "labels under bar", "money vs none", "accuracy vs none", "dominated by"]
    return harness.markdown_table(header, rows)


def _bound_tables(bounds: dict[str, list[dict[str, Any]]]) -> list[str]:
    """The bounds' verdicts per dataset, when the run had them."""
    out = []
    for policy, found in bounds.items():
        out += [f"\n### {policy}: a bound, judged as the default is\n", _verdict_table(found)]
    return out


def _policy_table(means: Sequence[dict[str, Any]], *, share: bool = False) -> str:
    rows = []
    for m in means:
        row = [m["dataset"], m["policy"]]
        row += [f"{m['gold_share']:.0%}"] if share else []
        row += [f"{m['money']:.2f}", f"{m['accuracy']:.3f}", _show(m["accuracy_ds"]),
                f"{m['gold']:.0f}", f"{m['bad_labels_kept']:.0f}", f"{m['good_banned']:.1f}",
                f"{m['replacements']:.0f}", f"{m['before_gold_max']:g}"]  # fmt: skip
        rows.append(row)
    header = ["dataset", "policy", *(["gold share"] if share else []), "money", "acc MV",
              "acc DS", "gold", "bad labels kept", "good banned", "replaced",
              "max unscreened"]  # fmt: skip
    return harness.markdown_table(header, rows)


def _show(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}"


def plot_curves(report: harness.Report) -> None:
    """Accuracy against money per dataset, every policy a point (one PNG of small panels)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.lines import Line2D
    except ImportError:
        print("(no figure: pip install 'crowd-screener[bench]' for matplotlib)")
        return
    means = [m for m in report["means"] if m["gold_share"] == 0.1]
    datasets = sorted({m["dataset"] for m in means})
    columns = min(4, len(datasets))
    rows = math.ceil(len(datasets) / columns)
    figure, axes = plt.subplots(rows, columns, figsize=(4 * columns, 3.2 * rows), squeeze=False)
    for axis, dataset in zip(axes.flat, datasets, strict=False):
        for m in (m for m in means if m["dataset"] == dataset):
            style = _style(m["policy"])
            axis.scatter(m["money"], m["accuracy"], **style)
        axis.set_title(dataset, fontsize=9)
        axis.set_xlabel("money", fontsize=8)
        axis.set_ylabel("accuracy (MV)", fontsize=8)
        axis.tick_params(labelsize=7)
    for axis in list(axes.flat)[len(datasets) :]:
        axis.axis("off")
    handles = [Line2D([], [], linestyle="", **_legend(p)) for p in _LEGEND]
    figure.legend(handles=handles, loc="lower center", ncol=len(_LEGEND), fontsize=8)
    figure.tight_layout(rect=(0, 0.04, 1, 1))
    path = harness.RESULTS_DIR / f"stream-{report['plan']['mode']}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    print(f"figure: {path}")


_LEGEND = {
    "none": ("black", "s"),
    "toloka": ("tab:red", "v"),
    "quiz": ("tab:orange", "^"),
    "screener": ("tab:blue", "o"),
    "oracle": ("tab:green", "*"),
    "other": ("tab:gray", "x"),
}


def _kind(policy: str) -> str:
    if policy == "none" or policy.startswith(("toloka", "quiz", "oracle")):
        return policy.split("-")[0]
    return "screener" if policy == DEFAULT else "other"


def _style(policy: str) -> dict[str, Any]:
    color, marker = _LEGEND[_kind(policy)]
    size = 60 if policy in (DEFAULT, "none") else 25
    return {"color": color, "marker": marker, "s": size}


def _legend(kind: str) -> dict[str, Any]:
    color, marker = _LEGEND[kind]
    return {"color": color, "marker": marker, "label": kind}
