"""What screening is worth: final labels per dollar on the real datasets, streamed.

Every dataset of SCREENER_DATA is replayed as a task stream (``screener.testing.doubles.platform``):
workers arrive at seeded times and ask for work as often as they answered in the data; a
seeded share of the items (``--gold-share``, 10% by default) serves as gold, the others are
the real tasks, whose truth is hidden from every policy and used only to score. A banned
worker's labels are discarded and its tasks re-issued and paid again; items left short at the
end are filled by replacement labels from the whole crowd not banned, never twice from one
worker on one item, each keeping the item's difficulty (paid too; each policy's share of
filled labels is reported). Each task item collects labels until its top answer leads by two
votes, at most the number it has in the data (``--overlap recorded``: always that number).

Policies, each a gate (``screener.gate``) configured before any outcome is seen:

* ``none``: no screening, every request a real task; ``none-lead3`` and ``none-lead4``: the
  same with labels collected until the top answer leads by 3 / 4 votes (``StreamSettings.lead``):
  the money-accuracy frontier no screening can buy. A policy is *dominated* on a dataset when
  one of these three rows is at most as dear and at least as accurate (means over orders);
  the report counts the datasets on which each policy is not (issue 48's target: 16 of 26);
* ``toloka-N`` (N = 5, 10, 20): Toloka's control tasks, one in N requests, a ban when fewer
  than 60% of the last 10 control answers are right (from 3 answers on), for ever;
* ``quiz-N`` (N = 5, 10, 20): Appen's quiz of N questions up front, passed at 60%;
* ``screener``: the default gate (crowd-prior against the bar 0.6, q = 0.1, a pilot of 20,
  gold by its value at the stated prices, audits of 2% of a qualified worker's requests and
  the change detector);
* ``screener-tenure``: the same with the tenure prior (a heuristic,
  ``ValueOfGold(tenure=True)``: each worker priced and judged against the workers who made as
  many requests, the gate's own bans at P(below) >= 0.9 under it); ``screener-cost``: with
  the tenure prior and bans by cost (``ValueOfGold(tenure=True, bans="cost")``: where keeping
  the worker costs more in expectation);
* ``screener-first``: the same method, every request gold until it decides (a quiz that stops
  when the answers suffice);
* ``screener-agree`` and ``fdr-agree``: the default gate and fdr, with the agreement ban
  anchored on gold (``agreement=0.05``; ``binary_labels`` where the task has two classes);
* ``fdr`` and ``confident``: fdr-thresholding (q = 0.1, eps = 0.05) and
  confident-thresholding (delta = 0.1, eps = 0.1, Beta-mixture intervals: the betting ones
  cost about ten times the time here), gold until they decide, 3 answers at least, their error
  level spread over 1,000 workers;
* ``lsa``: LSA with the gold budget toloka-10 spent on the same stream, gold at one in 10;
* ``oracle`` and ``oracle-limit``: bounds, not policies (``benchmarks.stream_oracle``): every
  worker under the bar turned away at its first request by a gate that knows, with no gold
  question, or with the one gold question per kept worker the limit of 3 unscreened tasks
  demands.

Adversarial streams (``benchmarks.stream_adversary``; ``screener.testing.doubles.adversaries``):
beside the real orders, order 0 of every dataset is replayed with the workers under the bar
first (``spammers-first``), with a colluding group of 20% / 40% of the workers sharing one
wrong label per item (``collude-20``, ``collude-40``; graded datasets skipped), and with 10% of
the workers right on every gold question and at chance on real tasks (``recognise-10``; graded
skipped), through none, toloka-10, toloka-20, screener, screener-agree and oracle-limit: one
order each, for the full plan's time. An adversary's accuracy on real tasks is what puts it
under the bar, in the bounds and the scores alike.

Prices: a gold question and a real task 0.05 each (``--price``). Scored per run: money, the
accuracy of the final labels of the task items (majority vote; Dawid-Skene through crowd-kit,
when it is installed, for the policies of ``DAWID_SKENE``), labels kept from workers under
the bar, good workers banned, items left short, and the most real tasks a worker did before
its first gold question. Dawid-Skene is scored on the real orders only. A quick run prints how
long the full plan would take, estimated from its own runs (``benchmarks.stream_timing``).

    python -m benchmarks.stream --quick      # 4 datasets, 2 orders (adversaries: 1)
    python -m benchmarks.stream              # every dataset, 3 orders, the gold-share sweep
    python -m benchmarks.stream --seeds 1 --param prior=npmle   # screener's gates otherwise
"""

from __future__ import annotations

import argparse
import functools
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import harness
from benchmarks.stream_adversary import POLICIES as ADVERSARY_POLICIES
from benchmarks.stream_adversary import adversaries_for
from benchmarks.stream_oracle import ORACLES, run_oracle
from benchmarks.stream_scores import RunScore, score_outcome
from screener.gate import DEFAULT_PARAMS, FirstGold, Gate, GateSettings, GoldShare, ValueOfGold
from screener.money import Prices
from screener.oracles.answer_file import RecordedAnswers, load_answers
from screener.testing.doubles.adversaries import Adversary
from screener.testing.doubles.platform import StreamSettings, TaskStream, run_stream

BAR = 0.6
QUICK_DATASETS = ("EBCC_SMEM_web", "Zheng_d_jn-product", "EBCC_ACT_SP_amt", "Zheng_s4_Dog")
RULE_SHARES = (5, 10, 20)
QUIZ_SIZES = (5, 10, 20)
MAX_WORKERS = 1000  # the roster fdr and confident spread their error level over
AGREEMENT = 0.05  # the error level of the agreement bans of the -agree policies
#: No screening at each lead (``StreamSettings.lead``): the rows a policy's dominance is read on.
LEADS = {"none": 2, "none-lead3": 3, "none-lead4": 4}


@dataclass(frozen=True)
class Plan:
    mode: str
    datasets: tuple[str, ...]
    seeds: int
    gold_shares: tuple[float, ...] = (0.1,)
    overlap: str = "dynamic"
    gold_price: float = 0.05
    task_price: float = 0.05
    processes: int = 2
    resume: bool = False
    #: crowd-prior parameters of screener's gates, over the gate's defaults (``--param``)
    params: tuple[tuple[str, Any], ...] = ()
    #: answer orders each adversarial stream replays (0: none)
    adversary_seeds: int = 1


QUICK = Plan("quick", QUICK_DATASETS, seeds=2)
FULL = Plan("full", (), seeds=3, gold_shares=(0.05, 0.1, 0.2))


@dataclass(frozen=True)
class Task:
    path: str
    policy: str
    seed: int
    gold_share: float
    overlap: str
    gold_price: float
    task_price: float
    lsa_budget: int = 0
    params: tuple[tuple[str, Any], ...] = ()
    adversary: Adversary | None = None


def policies(
    prices: Prices, params: Sequence[tuple[str, Any]] = ()
) -> dict[str, GateSettings | None]:
    """Every policy but lsa (whose budget comes from toloka-10's run), by name; ``params``:
    crowd-prior parameters of screener's gates over the gate's defaults."""
    chosen: dict[str, GateSettings | None] = dict.fromkeys(LEADS)
    for share in RULE_SHARES:
        chosen[f"toloka-{share}"] = GateSettings(
            algorithm="toloka-rule", params={"threshold": BAR, "accept_after": 10**9},
            policy=GoldShare(every=share), max_unscreened=share - 1, audit_rate=0.0,
            prices=prices,
        )  # fmt: skip
    for size in QUIZ_SIZES:
        chosen[f"quiz-{size}"] = GateSettings(
            algorithm="quiz", params={"threshold": BAR, "quiz_size": size}, policy=FirstGold(),
            audit_rate=0.0, prices=prices,
        )  # fmt: skip
    ours = {**DEFAULT_PARAMS, **dict(params)}
    chosen["screener"] = GateSettings(params=ours, prices=prices)
    tenure, cost = ValueOfGold(tenure=True), ValueOfGold(tenure=True, bans="cost")
    chosen["screener-tenure"] = GateSettings(params=ours, policy=tenure, prices=prices)
    chosen["screener-cost"] = GateSettings(params=ours, policy=cost, prices=prices)
    chosen["screener-first"] = GateSettings(params=ours, policy=FirstGold(), prices=prices)
    chosen["screener-agree"] = GateSettings(params=ours, agreement=AGREEMENT, prices=prices)
    common = {"threshold": BAR, "min_answers": 3, "max_workers": MAX_WORKERS}
    chosen["fdr"] = GateSettings(
        algorithm="fdr-thresholding", params={**common, "q": 0.1, "eps": 0.05},
        policy=FirstGold(), prices=prices,
    )  # fmt: skip
    chosen["fdr-agree"] = GateSettings(
        algorithm="fdr-thresholding", params={**common, "q": 0.1, "eps": 0.05},
        policy=FirstGold(), prices=prices, agreement=AGREEMENT,
    )  # fmt: skip
    chosen["confident"] = GateSettings(
        algorithm="confident-thresholding",
        params={**common, "delta": 0.1, "eps": 0.1, "interval": "mixture"},
        policy=FirstGold(), prices=prices,
    )  # fmt: skip
    return chosen


def _settings(task: Task) -> GateSettings | None:
    prices = Prices(task.gold_price, task.task_price)
    if task.policy == "lsa":
        return GateSettings(
            algorithm="lsa", params={"threshold": BAR, "budget": max(task.lsa_budget, 1)},
            policy=GoldShare(every=10), max_unscreened=9, audit_rate=0.0, prices=prices,
        )  # fmt: skip
    return policies(prices, task.params)[task.policy]


#: Policies whose final labels are also aggregated by Dawid-Skene (crowd-kit's EM takes about
#: a second a run; majority vote is scored for every policy).
DAWID_SKENE = ("none", "screener", "toloka-10", "quiz-10")


@functools.lru_cache(maxsize=4)
def _answers(path: str) -> RecordedAnswers:
    return load_answers(path)


def run_task(task: Task) -> dict[str, Any]:
    answers = _answers(task.path)
    stream = TaskStream(answers, StreamSettings(
        gold_share=task.gold_share, overlap=task.overlap, seed=task.seed,  # type: ignore[arg-type]
        lead=LEADS.get(task.policy, 2), adversary=task.adversary, bar=BAR,
    ))  # fmt: skip
    clock = harness.clock()
    if task.policy in ORACLES:
        outcome, before_gold = run_oracle(stream, BAR, ORACLES[task.policy])
    else:
        settings = _settings(task)
        if settings is not None and settings.agreement is not None:
            settings = replace(settings, binary_labels=_binary(answers))
        gate = None if settings is None else Gate(replace(settings, seed=task.seed))
        outcome, before_gold = run_stream(stream, gate)
    seconds = harness.since(0, clock).cpu
    prices = Prices(task.gold_price, task.task_price)
    dawid_skene = task.policy in DAWID_SKENE and task.gold_share == 0.1 and not task.adversary
    score = score_outcome(outcome, prices, BAR, seed=task.seed, dawid_skene=dawid_skene)
    return {
        "dataset": Path(task.path).stem, "policy": task.policy, "seed": task.seed,
        "gold_share": task.gold_share, "adversary": task.adversary or "",
        "before_gold": before_gold, "cpu": seconds, **score.to_dict(),
    }  # fmt: skip


def _binary(answers: RecordedAnswers) -> bool:
    """Whether the task has two classes (a requester knows it before any answer)."""
    given = {r.given if r.given is not None else r.answer for rs in answers.records for r in rs}
    return len(given) == 2


def _tasks(plan: Plan, root: Path) -> list[Task]:
    """The real orders' runs, then the adversarial streams' (``benchmarks.stream_adversary``)."""
    names = [*policies(Prices()), *ORACLES]
    tasks = []
    for path in _dataset_paths(root, plan.datasets):
        for share in plan.gold_shares:
            chosen = names if share == 0.1 else ["none", "screener", "toloka-10", "quiz-10"]
            for seed in range(plan.seeds):
                for name in chosen:
                    tasks.append(
                        Task(str(path), name, seed, share, plan.overlap, plan.gold_price,
                             plan.task_price, params=plan.params)
                    )  # fmt: skip
    for path in _dataset_paths(root, plan.datasets):
        for adversary in adversaries_for(_graded(path)):
            for seed in range(plan.adversary_seeds):
                tasks += [
                    Task(str(path), name, seed, 0.1, plan.overlap, plan.gold_price,
                         plan.task_price, params=plan.params, adversary=adversary)
                    for name in ADVERSARY_POLICIES
                ]  # fmt: skip
    return tasks


def _graded(path: Path) -> bool:
    """Whether a dataset's answers are graded (the data's layout: a ``graded`` folder)."""
    return path.parent.name == "graded"


def _lsa_tasks(rows: Sequence[dict[str, Any]], root: Path, plan: Plan) -> list[Task]:
    """LSA on every stream toloka-10 ran, with the gold it spent as the budget."""
    paths = {p.stem: str(p) for p in _dataset_paths(root, plan.datasets)}
    return [
        Task(paths[row["dataset"]], "lsa", row["seed"], row["gold_share"], plan.overlap,
             plan.gold_price, plan.task_price, lsa_budget=int(row["gold"]), params=plan.params)
        for row in rows
        if row["policy"] == "toloka-10" and row["gold_share"] == 0.1 and not row.get("adversary")
    ]  # fmt: skip


def _dataset_paths(root: Path, only: Sequence[str]) -> list[Path]:
    files = sorted(root.glob("gold_answers/*.csv")) + sorted(root.glob("graded/*.csv"))
    chosen = [f for f in files if not only or f.stem in only]
    if not chosen:
        raise SystemExit(f"no datasets under {root}")
    return chosen


def run(plan: Plan) -> harness.Report:
    root = Path(os.environ.get("SCREENER_DATA", ""))
    if not os.environ.get("SCREENER_DATA") or not root.is_dir():
        raise SystemExit("set SCREENER_DATA to the folder of the real datasets (../shared/data)")
    keep = harness.kept_runs("stream", plan)
    tasks = _tasks(plan, root)
    rows, seconds = harness.run_in_processes("stream", run_task, tasks, plan.processes, keep=keep)
    lsa = _lsa_tasks(rows, root, plan)
    more, extra = harness.run_in_processes("stream-lsa", run_task, lsa, plan.processes, keep=keep)
    from benchmarks.stream_report import summarise
    from benchmarks.stream_timing import estimate

    skipped = sorted(p.stem for p in _dataset_paths(root, plan.datasets) if _graded(p))
    full = replace(FULL, overlap=plan.overlap, params=plan.params)
    timing = estimate(rows + more, seconds + extra, _planned(full, root), _answer_counts(root))
    return harness.new_report("stream", plan, seconds + extra, rows=rows + more, **summarise(
        rows + more, _under_bar_shares(root, plan), skipped
    ), full_estimate=timing)  # fmt: skip


def _planned(plan: Plan, root: Path) -> list[tuple[str, str]]:
    """The (policy, dataset) runs of ``plan``, lsa's included (one per toloka-10 run on a real
    order at the default gold share)."""
    tasks = _tasks(plan, root)
    lsa = [t for t in tasks if t.policy == "toloka-10" and t.gold_share == 0.1 and not t.adversary]
    runs = [(t.policy, Path(t.path).stem) for t in tasks]
    return runs + [("lsa", Path(t.path).stem) for t in lsa]


def _answer_counts(root: Path) -> dict[str, int]:
    """Per dataset, its recorded answers (the rows of its file): what a run's time scales by."""
    counts = {}
    for path in _dataset_paths(root, ()):
        with path.open(encoding="utf-8") as file:
            counts[path.stem] = sum(1 for _ in file) - 1
    return counts


def _under_bar_shares(root: Path, plan: Plan) -> dict[str, float]:
    """Per dataset, the share of its labels made by workers under the bar."""
    shares = {}
    for path in _dataset_paths(root, plan.datasets):
        rewards = load_answers(path).rewards
        sizes = np.array([r.size for r in rewards], dtype=float)
        under = np.array([r.mean() < BAR for r in rewards])
        shares[path.stem] = float(sizes[under].sum() / sizes.sum())
    return shares


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--datasets", nargs="*", help="dataset names (file stems)")
    parser.add_argument("--seeds", type=int, help="answer orders per dataset")
    parser.add_argument("--overlap", choices=("dynamic", "recorded"))
    parser.add_argument("--price", help="gold=0.05,task=0.05")
    parser.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="a crowd-prior parameter of screener's gates (repeat for more; default: the "
        "gate's); the results go to results/stream-MODE-KEY=VALUE.*",
    )
    parser.add_argument("--pilot", type=int, help="the same as --param pilot=N")


def _adjust(plan: Plan, args: argparse.Namespace) -> Plan:
    if args.datasets:
        plan = replace(plan, datasets=tuple(args.datasets))
    if args.seeds:
        plan = replace(plan, seeds=args.seeds)
    if args.overlap:
        plan = replace(plan, overlap=args.overlap)
    given = [*args.param, *([] if args.pilot is None else [f"pilot={args.pilot}"])]
    if given:
        params = _key_values(given)
        names = [f"pilot{v}" if k == "pilot" else f"{k}={v}" for k, v in params]
        plan = replace(plan, params=params, mode="-".join([plan.mode, *names]))
    if args.price:
        prices = dict(item.split("=") for item in args.price.split(","))
        plan = replace(
            plan,
            gold_price=float(prices.get("gold", plan.gold_price)),
            task_price=float(prices.get("task", plan.task_price)),
        )
    return plan


def _key_values(items: Sequence[str]) -> tuple[tuple[str, Any], ...]:
    """``KEY=VALUE`` items read as the command line's ``-p`` reads them (``key_values``)."""
    import click

    from screener.cli.options import key_values

    try:
        return tuple(key_values(items, "--param").items())
    except click.UsageError as error:
        raise SystemExit(error.message) from None


def main(argv: Sequence[str] | None = None) -> int:
    from benchmarks.stream_report import format_report, plot_curves

    return harness.main(
        argv, __doc__, (QUICK, FULL), run, format_report,
        quick_help="4 datasets, 2 answer orders, the default gold share",
        options=_options, adjust=_adjust, after=plot_curves,
    )  # fmt: skip


__all__ = ["FULL", "QUICK", "Plan", "RunScore", "Task", "main", "policies", "run_task"]

if __name__ == "__main__":
    sys.exit(main())
