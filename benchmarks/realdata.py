"""Every method on every real dataset, beside the platforms' static rules and doing nothing.

Question: "who is below the bar?" (ban the workers whose accuracy is under it). Each file of
``$SCREENER_DATA`` is replayed WITHOUT replacement: each worker's own answers in R seeded
orders, as a live run would meet them; a worker whose answers run out is exhausted. Truth is a
worker's accuracy over all of its answers (bad = below the bar). Two populations: workers with
at least 30 answers (the headline: every method can reach a decision) and all workers (few-answer
workers end undecided, or under a rule's default: never banned, so kept). Two bars: 0.6 and the
population's 20th percentile of worker accuracy (``benchmarks.realcrowds``).

Per method (a registered algorithm by name with parameters, ``NAME:key=value,...``, or one of
the two policies that ask nothing: ``accept-all`` and ``ban-all``):

- questions per worker (mean over runs; median over workers and runs);
- false-ban rate = good workers banned / good workers; missed-bad rate = bad workers not banned
  (accepted, undecided or exhausted) / bad workers; undecided share; wall seconds;
- expected cost per worker = questions x 1 + false bans x c_ban + missed bad x c_miss (per
  worker), for c_ban in {10, 30, 100} and c_miss in {10, 30, 100, 300, 1000}.

The fair reading, per cost setting: screener is the crowd prior's cost mode built for those
costs (``crowd-prior:contamination=0.2,false_ban=B,missed_bad=M,pilot=20``: a requester states
its costs before the run; no configuration built for other costs is picked after the fact),
against the cheapest rule configuration after the fact (toloka-rule N = 10/20/30, quiz Q =
5/10/20: a choice that favours the rule) and against doing nothing (the cheaper of accepting
and banning everyone unasked, also after the fact). Whether ANY method can beat doing nothing
there is the oracle's answer (``benchmarks.limits.oracle_cost``: Bernoulli answers at each
worker's accuracy and the crowd known exactly; "no" means no policy can, in that model).

Decisions: BELOW (and OUTLIER for the low-direction outlier methods) is a ban; everything else
keeps the worker. No worker is asked more than ``--cap`` questions (default 60, the most gold
questions real workers answer in most of these datasets): a requester would not pay more, and
the fixed-confidence methods would otherwise spend thousands on a worker sitting at the bar.
``lsa:budget=rule`` gives LSA the total questions toloka-rule (N = 20) spent on the same answer
order.

Usage::

    SCREENER_DATA=../shared/data python -m benchmarks.realdata            # ~10 min on 2 cores
    SCREENER_DATA=../shared/data python -m benchmarks.realdata --quick    # ~30 s
    python -m benchmarks.realdata --datasets EBCC_ACT_SP --methods toloka-rule crowd-prior:q=0.05

Prints the tables, the readings and the summary, writes ``benchmarks/results/realdata.json``
and a PNG per dataset (questions per worker against errors per worker) in
``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# One BLAS thread per process: the algorithms' small matrix products slow down many times over
# when the processes' thread pools fight over the two cores.
for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")

if __package__ in (None, ""):  # run as `python benchmarks/realdata.py`: import from the checkout
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from numpy.typing import NDArray  # noqa: E402

from benchmarks.harness import (  # noqa: E402
    RESULTS_DIR,
    machine_info,
    markdown_table,
    run_in_processes,
    write_json,
)
from benchmarks.realcrowds import (  # noqa: E402
    COSTS,
    DEFAULT_CAP,
    bar_value,
    capped_rewards,
    cost_key,
    dataset_answers,
    datasets,
    population,
)
from benchmarks.realdata_reading import (  # noqa: E402
    RULE_NAMES,
    TRIVIAL,
    Cell,
    cost_method,
    kind,
    reading,
    reading_lines,
    summary,
    summary_tables,
)
from screener.algorithms import (  # noqa: E402
    ALGORITHMS,
    Algorithm,
    Decision,
    ThresholdingAlgorithm,
    create_algorithm,
)
from screener.runs.run_file import parse_value  # noqa: E402
from screener.simulation import RewardModel, simulate  # noqa: E402
from screener.simulation.loop import drive  # noqa: E402

__all__ = [
    "COSTS",
    "Cell",
    "Method",
    "Score",
    "Unit",
    "capped_rewards",
    "cost_key",
    "cost_method",
    "dataset_answers",
    "datasets",
    "main",
    "parse_method",
    "population",
    "reading",
    "run_unit",
    "summary",
]

#: The rule configuration whose spend ``budget=rule`` copies.
BUDGET_RULE = "toloka-rule:accept_after=20"
QUICK_DATASETS = ("EBCC_ACT_SP", "EBCC_SMEM_web", "Zheng_s4_Dog", "Snow08_rte")


@dataclass(frozen=True)
class Method:
    """A registered algorithm with parameters; ``label`` names it in the tables."""

    label: str
    algorithm: str
    params: tuple[tuple[str, Any], ...] = ()

    @property
    def is_rule(self) -> bool:
        return self.algorithm in RULE_NAMES

    def build_params(self, bar: float, rule_spend: int | None) -> dict[str, Any]:
        params: dict[str, Any] = dict(self.params)
        if params.get("budget") == "rule":
            if rule_spend is None:
                raise ValueError(f"{self.label}: budget=rule needs {BUDGET_RULE} in the run")
            params["budget"] = max(rule_spend, 1)
        if self.algorithm in ("wrr", "rr", "gold", "ade", "ib", "nrr"):
            params.setdefault("direction", "low")
        else:
            params.setdefault("threshold", bar)
        return params


def parse_method(text: str) -> Method:
    """``NAME`` or ``NAME:key=value,key=value`` (values parsed as int, float, bool or text)."""
    name, _, rest = text.partition(":")
    if name not in ALGORITHMS:
        raise SystemExit(f"unknown algorithm {name!r}: choose from {', '.join(sorted(ALGORITHMS))}")
    params = []
    for item in filter(None, rest.split(",")):
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"method {text!r}: parameters are key=value")
        params.append((key.strip(), parse_value(value.strip())))
    return Method(text, name, tuple(params))


def default_methods() -> list[str]:
    """The rules at every configuration the issue names, then screener's methods: the crowd
    prior's posterior mode, its cost mode with a pilot at each cost setting (the requester
    states its costs), the frequentist modes and the papers' methods; the two policies that
    ask nothing run in every unit anyway."""
    methods = [f"toloka-rule:accept_after={n}" for n in (10, 20, 30)]
    methods += [f"quiz:quiz_size={q}" for q in (5, 10, 20)]
    methods += ["crowd-prior", "crowd-prior:contamination=0.2"]
    methods += [cost_method(b, m) for b, m in COSTS]
    methods += ["fdr-thresholding:q=0.1", "confident-thresholding:delta=0.1,eps=0.05"]
    methods += ["confident-thresholding:delta=0.1", "lsa:budget=rule", "wrr:k=2"]
    return methods


@dataclass(frozen=True)
class Unit:
    """One answer order of one population of one dataset at one bar: every method runs on it."""

    dataset: str
    path: str
    population: str  # "30+" or "all"
    bar_name: str  # "0.6" or "p20"
    seed: int
    methods: tuple[str, ...]
    cap: int


@dataclass
class Outcome:
    """One method's run on one unit: per-worker questions and bans, and its wall time."""

    method: str
    pulls: NDArray[np.int64]
    banned: NDArray[np.bool_]
    undecided: NDArray[np.bool_]
    seconds: float


@dataclass
class UnitResult:
    unit: Unit
    bar: float
    truth: NDArray[np.float64]
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def bad(self) -> NDArray[np.bool_]:
        return np.asarray(self.truth < self.bar)


def run_unit(unit: Unit) -> UnitResult:
    """Every method of ``unit`` on the same answer order (the rule first, for budget=rule)."""
    workers, records = population(dataset_answers(unit.path), unit.population)
    truth = np.array([r.mean() for r in records])
    bar = bar_value(unit.bar_name, truth)
    result = UnitResult(unit, bar, truth)
    rule_spend: int | None = None
    ordered = sorted(unit.methods, key=lambda m: m != BUDGET_RULE)
    rewards = capped_rewards(workers, records, unit.seed, unit.cap)  # stateless: shared
    for text in ordered:
        if text in TRIVIAL:
            everyone = np.full(len(workers), TRIVIAL[text])
            nobody = np.zeros(len(workers), dtype=bool)
            result.outcomes.append(Outcome(text, np.zeros(len(workers), np.int64), everyone,
                                           nobody, 0.0))  # fmt: skip
            continue
        method = parse_method(text)
        params = {**method.build_params(bar, rule_spend), "seed": unit.seed}
        algorithm = create_algorithm(method.algorithm, len(workers), params)
        started = time.perf_counter()
        pulls, banned, undecided = run_to_end(algorithm, rewards)
        seconds = time.perf_counter() - started
        result.outcomes.append(Outcome(text, pulls, banned, undecided, seconds))
        if text == BUDGET_RULE:
            rule_spend = int(pulls.sum())
    return result


def run_to_end(
    algorithm: Algorithm, rewards: RewardModel
) -> tuple[NDArray[np.int64], NDArray[np.bool_], NDArray[np.bool_]]:
    """``simulate``'s run, read as the tables need it: questions per worker, banned,
    undecided. A thresholding method is read from its ``verdicts`` (what its result would
    say, without building every worker's interval and reason, which the tables do not
    read); the k-sigma methods from their result."""
    if isinstance(algorithm, ThresholdingAlgorithm):
        drive(algorithm, rewards)
        verdicts = algorithm.verdicts()
        return algorithm.stats.count.copy(), verdicts < 0, verdicts == 0
    lines = sorted(simulate(algorithm, rewards).workers, key=lambda w: w.arm)
    decisions = [w.decision for w in lines]
    return (
        np.array([w.pulls for w in lines], dtype=np.int64),
        np.array([d in (Decision.BELOW, Decision.OUTLIER) for d in decisions]),
        np.array([d is Decision.UNDECIDED for d in decisions]),
    )


# ----------------------------------------------------------------------------- scoring
@dataclass
class Score:
    """A method on one (dataset, population, bar), over all its seeds."""

    method: str
    workers: int
    good: int
    bad: int
    questions: float
    median_questions: float
    false_ban_rate: float
    missed_bad_rate: float
    wrong_ban_share: float
    undecided: float
    seconds: float
    costs: dict[str, float]

    @property
    def kind(self) -> str:
        return kind(self.method)


def score(results: Sequence[UnitResult], method: str) -> Score:
    outcomes = [(r, o) for r in results for o in r.outcomes if o.method == method]
    workers = sum(o.pulls.size for _, o in outcomes)
    good = sum(int((~r.bad).sum()) for r, _ in outcomes)
    bad = sum(int(r.bad.sum()) for r, _ in outcomes)
    questions = sum(int(o.pulls.sum()) for _, o in outcomes)
    false_bans = sum(int((o.banned & ~r.bad).sum()) for r, o in outcomes)
    missed = sum(int((~o.banned & r.bad).sum()) for r, o in outcomes)
    bans = sum(int(o.banned.sum()) for _, o in outcomes)
    costs = {cost_key(b, m): (questions + b * false_bans + m * missed) / workers for b, m in COSTS}
    return Score(
        method=method,
        workers=workers // max(len(outcomes), 1),
        good=good,
        bad=bad,
        questions=questions / workers,
        median_questions=float(np.median(np.concatenate([o.pulls for _, o in outcomes]))),
        false_ban_rate=false_bans / good if good else math.nan,
        missed_bad_rate=missed / bad if bad else math.nan,
        wrong_ban_share=false_bans / bans if bans else math.nan,
        undecided=sum(int(o.undecided.sum()) for _, o in outcomes) / workers,
        seconds=sum(o.seconds for _, o in outcomes),
        costs=costs,
    )


def group(results: Iterable[UnitResult]) -> dict[tuple[str, str, str], list[UnitResult]]:
    groups: dict[tuple[str, str, str], list[UnitResult]] = {}
    for result in results:
        unit = result.unit
        groups.setdefault((unit.dataset, unit.population, unit.bar_name), []).append(result)
    return groups


def _pct(value: float) -> str:
    return "-" if math.isnan(value) else f"{100 * value:.1f}%"


def method_table(scores: Sequence[Score]) -> str:
    header = ["method", "q/worker", "median", "false bans", "missed bad", "wrong/bans",
              "undecided", "cost 30/30", "cost 30/300", "s"]  # fmt: skip
    rows = [
        [s.method, f"{s.questions:.1f}", f"{s.median_questions:g}", _pct(s.false_ban_rate),
         _pct(s.missed_bad_rate), _pct(s.wrong_ban_share), _pct(s.undecided),
         f"{s.costs[cost_key(30, 30)]:.2f}", f"{s.costs[cost_key(30, 300)]:.2f}",
         f"{s.seconds:.1f}"]
        for s in scores
    ]  # fmt: skip
    return markdown_table(header, rows)


def plot(name: str, per_group: dict[str, list[Score]]) -> Path | None:
    """Questions per worker against errors per worker, one panel per (population, bar); the
    policies that ask nothing are left out (no questions on a log scale)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    figure, axes = plt.subplots(
        1, len(per_group), figsize=(5.5 * len(per_group), 4.5), squeeze=False
    )
    for axis, (title, scores) in zip(axes[0], per_group.items(), strict=True):
        for s in (s for s in scores if s.kind != "trivial"):
            errors = (_rate(s.false_ban_rate) * s.good + _rate(s.missed_bad_rate) * s.bad) / max(
                s.good + s.bad, 1
            )
            marker = "s" if s.kind == "rule" else "o"
            colour = "tab:grey" if s.kind == "rule" else "tab:blue"
            axis.scatter(s.questions, errors, marker=marker, color=colour)
            axis.annotate(s.method.replace("crowd-prior", "cp"), (s.questions, errors), fontsize=6)
        axis.set_xscale("log")
        axis.set_xlabel("gold questions per worker")
        axis.set_ylabel("wrong decisions per worker (false bans + missed bad)")
        axis.set_title(title, fontsize=9)
    figure.suptitle(f"{name}: screener (circles) and platform rules (squares)")
    figure.tight_layout()
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"realdata-{name}.png"
    figure.savefig(path, dpi=90)
    plt.close(figure)
    return path


def _plot_item(item: tuple[str, dict[str, list[Score]]]) -> Path | None:
    return plot(*item)


def _rate(value: float) -> float:
    return 0.0 if math.isnan(value) else value


# -------------------------------------------------------------------------------- main
def plan(args: argparse.Namespace, root: Path) -> list[Unit]:
    names = args.datasets or (QUICK_DATASETS if args.quick else None)
    populations = ("30+",) if args.quick else ("30+", "all")
    bars = ("0.6",) if args.quick else ("0.6", "p20")
    chosen = list(args.methods or default_methods())
    methods = tuple(chosen + [m for m in TRIVIAL if m not in chosen])
    units = []
    for (name, path), pop, bar in itertools.product(datasets(root, names), populations, bars):
        workers, _ = population(dataset_answers(str(path)), pop)
        if len(workers) < 2:
            continue  # e.g. no worker with 30 answers
        units += [Unit(name, str(path), pop, bar, seed, methods, args.cap)
                  for seed in range(args.seeds)]  # fmt: skip
    return units


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 datasets, 3 orders, bar 0.6, 30+")
    parser.add_argument("--seeds", type=int, default=None, help="answer orders (default 20)")
    parser.add_argument("--datasets", nargs="*", default=None, help="file stems to run")
    parser.add_argument("--methods", nargs="*", default=None, help="NAME[:key=value,...]")
    parser.add_argument("--cap", type=int, default=DEFAULT_CAP, help="questions per worker at most")
    parser.add_argument("--processes", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--no-plots", action="store_true")
    args = parser.parse_args(argv)
    args.seeds = args.seeds or (3 if args.quick else 20)
    data = os.environ.get("SCREENER_DATA")
    if not data:
        raise SystemExit("set SCREENER_DATA to the folder of the real datasets (../shared/data)")
    units = plan(args, Path(data))
    results, wall = run_in_processes("realdata", run_unit, units, args.processes)
    report = render(results, cap=args.cap, plots=0 if args.no_plots else args.processes)
    print(report["text"])
    print(f"\n{len(units)} units, {wall:.0f} s wall on {args.processes} processes")
    payload = {"machine": machine_info(), "wall_seconds": wall, "argv": list(argv or sys.argv[1:]),
               **{k: v for k, v in report.items() if k != "text"}}  # fmt: skip
    write_json("realdata-quick" if args.quick else "realdata", payload)
    return payload


def render(results: Sequence[UnitResult], *, cap: int, plots: int) -> dict[str, Any]:
    """The tables, readings and summary of ``results``; with ``plots`` > 0 also the PNGs,
    drawn on that many processes (about a second each: a serial loop added half a minute)."""
    groups = group(results)
    methods = list(dict.fromkeys(o.method for r in results for o in r.outcomes))
    text: list[str] = []
    tables: dict[str, Any] = {}
    per_dataset: dict[str, dict[str, list[Score]]] = {}
    for (dataset, pop, bar_name), members in sorted(groups.items()):
        scores = [score(members, m) for m in methods]
        bar = members[0].bar
        title = f"{dataset}, {pop} answers, bar {bar:.3f}" + (" (p20)" if bar_name == "p20" else "")
        cells = reading(scores, members[0].truth, bar, cap)
        tables[f"{dataset}|{pop}|{bar_name}"] = {
            "bar": bar, "workers": scores[0].workers, "scores": [vars(s) for s in scores],
            "reading": {key: vars(cell) for key, cell in cells.items()},
        }  # fmt: skip
        text += [
            f"\n### {title}",
            f"{scores[0].workers} workers x {len(members)} orders; "
            f"{scores[0].bad // len(members)} below the bar",
            "",
            method_table(scores),
            "",
        ]
        text += reading_lines(title, cells)
        per_dataset.setdefault(dataset, {})[f"{pop} answers, bar {bar_name}"] = scores
    text += ["", *summary(tables), *summary_tables(tables)]
    if plots:
        run_in_processes("plots", _plot_item, list(per_dataset.items()), plots, progress=False)
    return {"text": "\n".join(text), "tables": tables}


if __name__ == "__main__":
    main()
