"""Final labels per dollar: whole pipelines, each a platform's job from first request to label.

Every categorical dataset of SCREENER_DATA is replayed as the stream benchmark replays it
(``benchmarks.stream``: seeded arrivals, 10% of the items gold, banned workers' labels
discarded and paid again, short items filled honestly at the end). Graded datasets are left
out: one-coin settlement needs categories (the report names them). Pipelines:

* ``none``, ``none-lead3``, ``none-lead4``: no screening, labels until the top answer leads by
  2 / 3 / 4 votes, majority vote: the money-accuracy frontier doing nothing buys;
* ``none+DS``: ``none``'s labels aggregated by Dawid-Skene (crowd-kit, afterwards);
* ``toloka-10+DS``, ``toloka-20+DS``, ``quiz-10+DS``: a rule's screening, the two-vote lead,
  Dawid-Skene afterwards (Toloka plus crowd-kit: what a requester runs today);
* ``screener``: the default gate's screening with the two-vote lead, majority vote;
* ``oracle-limit``: the bound of ``benchmarks.stream_oracle`` with the two-vote lead: a
  ceiling for screening alone (item choice and weighting may pass it);
* ``items-C`` (C = 0.8, 0.9, 0.95; 0.95 the gate's default): the default gate owning the
  items (``overlap="gate"``, ``screener.gate.items``): it names the item each worker labels
  among the platform's page of candidates and settles each at confidence C or its recorded
  count; its final labels are the gate's;
* ``oracle-items-C``: the items pipeline's bound (``benchmarks.stream_oracle``): oracle-limit's
  screening, and the same item book naming and settling the items, but weighing each label at
  its worker's recorded accuracy, known for free: what item choice and weighting could buy
  if the workers were known.

Each configuration is fixed before any outcome is seen (the gate's defaults at the stated
prices, 0.05 a gold question and a task). Read per pipeline over the datasets: money over no
screening's (geometric mean) and accuracy change (mean) at its own point; on how many datasets
it reaches no screening's accuracy and at what money (a curve's points interpolated: the
``items-C`` together, the ``none`` leads together; a single point where it is one); its
accuracy at no screening's money (curves only). Calibration of ``items-C``: per confidence
decile with at least ``DECILE_ITEMS`` settled items, the stated and the realised share of wrong
final labels (issue 49's target: within 0.03), on the real orders and, for the default C,
under the adversarial streams of ``screener.testing.doubles.adversaries`` (order 0).

    python -m benchmarks.labels --quick     # 4 datasets, 2 orders
    python -m benchmarks.labels             # every categorical dataset, 3 orders
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.stream import QUICK_DATASETS, _answers, _binary, _dataset_paths, policies
from benchmarks.stream_oracle import ORACLES, recorded_book, run_oracle
from benchmarks.stream_scores import score_outcome
from screener.gate import Gate
from screener.money import Prices
from screener.testing.doubles.adversaries import ADVERSARIES, Adversary
from screener.testing.doubles.platform import StreamSettings, TaskStream, run_stream

BAR = 0.6
CONFIDENCES = (0.8, 0.9, 0.95)
DEFAULT_CONFIDENCE = 0.95
DEFAULT_RUN = f"items-{DEFAULT_CONFIDENCE:g}"
ORACLE_LIMIT = "oracle-limit"
#: The items pipeline's bound: oracle-limit's screening, labels weighed at recorded accuracy.
ORACLE_ITEMS = "oracle-items"
ITEMS_RUNS = tuple(f"{kind}-{c:g}" for kind in ("items", ORACLE_ITEMS) for c in CONFIDENCES)
#: Runs and how each is scored: (the stream's policy, lead, Dawid-Skene afterwards).
RUNS: dict[str, tuple[str, int, bool]] = {
    "none": ("none", 2, True),
    "none-lead3": ("none", 3, False),
    "none-lead4": ("none", 4, False),
    "toloka-10": ("toloka-10", 2, True),
    "toloka-20": ("toloka-20", 2, True),
    "quiz-10": ("quiz-10", 2, True),
    "screener": ("screener", 2, False),
    ORACLE_LIMIT: (ORACLE_LIMIT, 2, False),
}
#: Pipelines read from the runs: (run, scored by Dawid-Skene).
PIPELINES: dict[str, tuple[str, bool]] = {
    "none": ("none", False),
    "none+DS": ("none", True),
    "toloka-10+DS": ("toloka-10", True),
    "toloka-20+DS": ("toloka-20", True),
    "quiz-10+DS": ("quiz-10", True),
    "screener": ("screener", False),
    ORACLE_LIMIT: (ORACLE_LIMIT, False),
    **{run: (run, False) for run in ITEMS_RUNS},
}
#: Every reading of the runs: the pipelines and the none leads of its curve.
READINGS = {**PIPELINES, "none-lead3": ("none-lead3", False), "none-lead4": ("none-lead4", False)}
#: Curves: pipelines whose points are read together for "money to reach" and "accuracy at".
CURVES = {
    "none leads 2-4": ("none", "none-lead3", "none-lead4"),
    "items 0.8-0.95": tuple(f"items-{c:g}" for c in CONFIDENCES),
    "oracle-items 0.8-0.95": tuple(f"{ORACLE_ITEMS}-{c:g}" for c in CONFIDENCES),
}
#: A calibration decile is read from this many settled items.
DECILE_ITEMS = 200
#: The issue's calibration target: realised wrong share within this of the stated one.
CALIBRATION = 0.03


@dataclass(frozen=True)
class Plan:
    mode: str
    datasets: tuple[str, ...]
    seeds: int
    processes: int = 2
    resume: bool = False


QUICK = Plan("quick", QUICK_DATASETS, seeds=2)
FULL = Plan("full", (), seeds=3)


@dataclass(frozen=True)
class Task:
    path: str
    run: str
    seed: int
    adversary: Adversary | None = None


def run_task(task: Task) -> dict[str, Any]:
    """One run: its money, accuracies and, for ``items-C``, each item's stated confidence
    and whether its final label is right, and the gate's gold check (its settlements, the
    share of misleading items it took from them)."""
    answers = _answers(task.path)
    prices = Prices()
    confidence = _confidence(task.run)
    bound = task.run.startswith(ORACLE_ITEMS)
    policy, lead, dawid_skene = (
        (ORACLE_LIMIT if bound else "screener", 2, False) if confidence else RUNS[task.run]
    )
    stream = TaskStream(answers, StreamSettings(
        gold_share=0.1, overlap="gate" if confidence else "dynamic", seed=task.seed, lead=lead,
        adversary=task.adversary, bar=BAR,
    ))  # fmt: skip
    gate = None
    if policy in ORACLES:
        book = recorded_book(stream, confidence, _binary(answers)) if confidence else None
        outcome, _ = run_oracle(stream, BAR, ORACLES[policy], book)
    else:
        settings = policies(prices)[policy]
        if confidence:
            assert settings is not None
            settings = replace(settings, confidence=confidence, binary_labels=_binary(answers))
        gate = None if settings is None else Gate(replace(settings, seed=task.seed))
        outcome, _ = run_stream(stream, gate)
    checked = gate.items.check if confidence and gate is not None else None
    score = score_outcome(outcome, prices, BAR, seed=task.seed, dawid_skene=dawid_skene)
    calibration = []
    if outcome.confidence is not None and outcome.final is not None:
        calibration = [
            [outcome.confidence[item], outcome.final[item] == outcome.truth[item]]
            for item in sorted(outcome.labels)
        ]
    return {
        "dataset": Path(task.path).stem, "run": task.run, "seed": task.seed,
        "adversary": task.adversary or "", "money": score.money, "accuracy": score.accuracy,
        "accuracy_ds": score.accuracy_ds, "calibration": calibration,
        "checks": None if checked is None else checked.checks,
        "misleading": None if checked is None else checked.misleading,
    }  # fmt: skip


def _confidence(run: str) -> float | None:
    """The settling target of an items run (``items-C``, ``oracle-items-C``), else None."""
    prefix, _, tail = run.rpartition("-")
    return float(tail) if prefix in ("items", ORACLE_ITEMS) else None


def _tasks(plan: Plan, paths: Sequence[Path]) -> list[Task]:
    runs = [*RUNS, *ITEMS_RUNS]
    tasks = [Task(str(p), run, seed) for p in paths for seed in range(plan.seeds) for run in runs]
    tasks += [Task(str(p), DEFAULT_RUN, 0, adversary) for p in paths for adversary in ADVERSARIES]
    return tasks


def _categorical(root: Path, only: Sequence[str]) -> tuple[list[Path], list[str]]:
    paths = _dataset_paths(root, only)
    graded = [p.stem for p in paths if p.parent.name == "graded"]
    return [p for p in paths if p.parent.name != "graded"], graded


def run(plan: Plan) -> harness.Report:
    root = Path(os.environ.get("SCREENER_DATA", ""))
    if not os.environ.get("SCREENER_DATA") or not root.is_dir():
        raise SystemExit("set SCREENER_DATA to the folder of the real datasets (../shared/data)")
    paths, graded = _categorical(root, plan.datasets)
    keep = harness.kept_runs("labels", plan)
    rows, seconds = harness.run_in_processes(
        "labels", run_task, _tasks(plan, paths), plan.processes, keep=keep
    )
    return harness.new_report("labels", plan, seconds, **summarise(rows), graded=graded)


# ----------------------------------------------------------------------------- reading
def summarise(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per (dataset, pipeline): money and accuracy, means over the real orders; the
    pipelines' readings; calibration on the real orders and the adversarial streams."""
    points = _points([r for r in rows if not r["adversary"]])
    return {
        "points": [{"dataset": d, "pipeline": p, "money": m, "accuracy": a}
                   for (d, p), (m, a) in sorted(points.items())],
        "pipelines": _pipelines(points),
        "calibration": {
            **{f"items-{c:g}": _calibration(rows, f"items-{c:g}", "") for c in CONFIDENCES},
            **{f"{DEFAULT_RUN} {a}": _calibration(rows, DEFAULT_RUN, a) for a in ADVERSARIES},
        },
        "gold_check": _gold_check(rows),
    }  # fmt: skip


def _gold_check(rows: Sequence[dict[str, Any]]) -> dict[str, float]:
    """The default pipeline's gold check over its real-order runs: settlements a run
    (median, least, most) and the share of misleading items taken (mean)."""
    runs = [r for r in rows if r["run"] == DEFAULT_RUN and not r["adversary"]]
    checks = [r["checks"] for r in runs if r.get("checks") is not None]
    shares = [r["misleading"] for r in runs if r.get("misleading") is not None]
    if not checks:
        return {}
    return {
        "runs": len(checks), "median": float(np.median(checks)), "least": min(checks),
        "most": max(checks), "misleading": float(np.mean(shares)),
    }  # fmt: skip


def _points(rows: Sequence[dict[str, Any]]) -> dict[tuple[str, str], tuple[float, float]]:
    """Per (dataset, pipeline or none lead): mean money and accuracy over the orders."""
    grouped: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[(row["dataset"], row["run"])].append(row)
    points = {}
    for pipeline, (run, dawid_skene) in READINGS.items():
        for (dataset, source), group in grouped.items():
            if source == run:
                scored = [r["accuracy_ds" if dawid_skene else "accuracy"] for r in group]
                money = float(np.mean([r["money"] for r in group]))
                points[(dataset, pipeline)] = (money, float(np.nanmean(scored)))
    return points


def _pipelines(points: dict[tuple[str, str], tuple[float, float]]) -> list[dict[str, Any]]:
    datasets = sorted({d for d, _ in points})
    rows = []
    for name, members in [*((p, (p,)) for p in PIPELINES), *CURVES.items()]:
        ratios, gains, reach, at_money = [], [], [], []
        for dataset in datasets:
            none = points.get((dataset, "none"))
            curve = sorted(points[(dataset, m)] for m in members if (dataset, m) in points)
            if none is None or not curve:
                continue
            if len(members) == 1:
                ratios.append(curve[0][0] / none[0])
                gains.append(curve[0][1] - none[1])
            money = _money_to_reach(curve, none[1])
            reach.append(math.nan if money is None else money / none[0])
            at_money.append(_accuracy_at(curve, none[0]) - none[1])
        rows.append({
            "pipeline": name, "datasets": len(reach),
            "money_ratio": _geometric(ratios), "accuracy_gain": _nanmean(gains),
            "reaches": sum(not math.isnan(r) for r in reach), "reach_money": _geometric(reach),
            "accuracy_at_none_money": _nanmean(at_money) if len(members) > 1 else math.nan,
        })  # fmt: skip
    return rows


def _money_to_reach(curve: Sequence[tuple[float, float]], target: float) -> float | None:
    """The least money along ``curve`` (points by money, joined by straight lines) at which
    its accuracy reaches ``target``; None if no point does."""
    best = None
    for (m0, a0), (m1, a1) in itertools.pairwise(curve):
        if a0 < target <= a1:
            found = m0 + (target - a0) / (a1 - a0) * (m1 - m0)
            best = found if best is None else min(best, found)
    for money, accuracy in curve:
        if accuracy >= target:
            best = money if best is None else min(best, money)
    return best


def _accuracy_at(curve: Sequence[tuple[float, float]], money: float) -> float:
    """The accuracy along ``curve`` at ``money`` (NaN outside its money range)."""
    moneys = [m for m, _ in curve]
    if not moneys[0] <= money <= moneys[-1]:
        return math.nan
    return float(np.interp(money, moneys, [a for _, a in curve]))


def _calibration(rows: Sequence[dict[str, Any]], run: str, adversary: str) -> list[dict[str, Any]]:
    pairs = [p for r in rows if r["run"] == run and r["adversary"] == adversary
             for p in r["calibration"]]  # fmt: skip
    if not pairs:
        return []
    stated = np.array([c for c, _ in pairs])
    right = np.array([ok for _, ok in pairs], dtype=float)
    table = []
    for low in np.arange(0.0, 1.0, 0.1):
        chosen = (stated >= low) & (stated < low + 0.1 if low < 0.9 else stated <= 1.0)
        if chosen.sum() == 0:
            continue
        wrong, said = 1.0 - float(right[chosen].mean()), 1.0 - float(stated[chosen].mean())
        table.append({"decile": round(float(low), 1), "items": int(chosen.sum()),
                      "stated_wrong": said, "wrong": wrong})  # fmt: skip
    return table


def _geometric(ratios: Sequence[float]) -> float:
    finite = [r for r in ratios if not math.isnan(r)]
    return math.exp(float(np.mean(np.log(finite)))) if finite else math.nan


def _nanmean(values: Sequence[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return float(np.mean(finite)) if finite else math.nan


# ----------------------------------------------------------------------------- tables
def format_report(report: harness.Report) -> str:
    plan = report["plan"]
    out = [
        f"# Final labels per dollar ({plan['mode']}): pipelines against no screening\n",
        f"Categorical datasets: {len({p['dataset'] for p in report['points']})}; graded, "
        f"left out: {', '.join(report['graded']) or 'none'}.\n",
        _pipeline_table(report["pipelines"]),
        "\n## Calibration of the settled labels (deciles of stated confidence)\n",
    ]
    check = report.get("gold_check") or {}
    if check:
        out.append(
            f"The gold check behind the printed confidence ({DEFAULT_RUN}, {check['runs']} "
            f"runs): {check['median']:g} gold settlements a run (median; {check['least']} to "
            f"{check['most']}), misleading items taken as {check['misleading']:.1%} on average."
        )
    for name, table in report["calibration"].items():
        out += [f"\n### {name}\n", _calibration_table(table)]
    out += ["\n## Per dataset (means over orders)\n", _points_table(report["points"])]
    return "\n".join(out) + "\n"


def _pipeline_table(rows: Sequence[dict[str, Any]]) -> str:
    header = ["pipeline", "datasets", "money vs none (geo)", "accuracy vs none",
              "reaches none's accuracy on", "money to reach it (geo)",
              "accuracy at none's money"]  # fmt: skip
    table = [
        [r["pipeline"], str(r["datasets"]), _ratio(r["money_ratio"]), _signed(r["accuracy_gain"]),
         str(r["reaches"]), _ratio(r["reach_money"]), _signed(r["accuracy_at_none_money"])]
        for r in rows
    ]  # fmt: skip
    return harness.markdown_table(header, table)


def _calibration_table(rows: Sequence[dict[str, Any]]) -> str:
    table = [
        [f"[{r['decile']:.1f}, {r['decile'] + 0.1:.1f})", str(r["items"]),
         f"{r['stated_wrong']:.3f}", f"{r['wrong']:.3f}",
         _verdict(r) if r["items"] >= DECILE_ITEMS else "(few items)"]
        for r in rows
    ]  # fmt: skip
    header = ["stated confidence", "items", "stated wrong", "wrong", f"within {CALIBRATION:g}"]
    return harness.markdown_table(header, table)


def _verdict(row: dict[str, Any]) -> str:
    gap = row["wrong"] - row["stated_wrong"]
    return "yes" if abs(gap) <= CALIBRATION else f"no ({gap:+.3f})"


def _points_table(points: Sequence[dict[str, Any]]) -> str:
    rows = [[p["dataset"], p["pipeline"], f"{p['money']:.2f}", f"{p['accuracy']:.3f}"]
            for p in points]  # fmt: skip
    return harness.markdown_table(["dataset", "pipeline", "money", "accuracy"], rows)


def _ratio(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.3f}x"


def _signed(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:+.4f}"


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--datasets", nargs="*", help="dataset names (file stems)")
    parser.add_argument("--seeds", type=int, help="answer orders per dataset")


def _adjust(plan: Plan, args: argparse.Namespace) -> Plan:
    if args.datasets:
        plan = replace(plan, datasets=tuple(args.datasets))
    return replace(plan, seeds=args.seeds) if args.seeds else plan


def main(argv: Sequence[str] | None = None) -> int:
    return harness.main(
        argv, __doc__, (QUICK, FULL), run, format_report,
        quick_help="4 datasets, 2 answer orders", options=_options, adjust=_adjust,
    )  # fmt: skip


__all__ = ["FULL", "QUICK", "Plan", "Task", "main", "run_task", "summarise"]

if __name__ == "__main__":
    sys.exit(main())
