"""Money beside questions: one rule reads prices (screener.money's Prices) from a flag, a run
file's [price] table and Python; a budget in money is a budget in gold questions; progress,
plan and reports show what the questions cost, and it adds up, through a resume too."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from plan_helpers import make_plan

import screener
from screener.crowd import WorkerPool, synthetic_pool
from screener.errors import ConfigError
from screener.journal import EventKind, Journal
from screener.money import Prices
from screener.orchestrator import RunOptions
from screener.orchestrator.progress import ProgressLine
from screener.reports import cost_line, render_json, render_table
from screener.runs import run_prices, worker_pool
from screener.runs.planning import plan_cost
from screener.runs.results import load_result
from screener.runs.run_plan import RunPlan
from screener.runs.session import resume_run, start_run
from screener.runs.settings import AlgorithmSettings, MoneySettings, RunSettings
from screener.runs.setup import set_up_run


@pytest.mark.parametrize(
    ("text", "prices"),
    [
        ("gold=0.05,task=0.05", Prices(0.05, 0.05)),
        (" task = 0.02 , gold=0.1 ", Prices(0.1, 0.02)),
        ("gold=2", Prices(2.0, 0.05)),
        ("task=1e-3", Prices(0.05, 0.001)),
    ],
)
def test_prices_are_read_one_way(text: str, prices: Prices) -> None:
    assert Prices.parse(text) == prices == Prices.of(prices.to_dict())


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("gold", "not KEY=PRICE"),
        ("gold=0.1,gold=0.2", "gold twice"),
        ("silver=1", "unknown price silver"),
        ("gold=free", "must be a number > 0"),
        ("gold=0", "must be a number > 0"),
        ("task=-1", "must be a number > 0"),
        ("gold=inf", "must be a number > 0"),
        ("", "not KEY=PRICE"),
    ],
)
def test_a_bad_price_is_one_line_naming_the_fix(text: str, says: str) -> None:
    with pytest.raises(ConfigError, match=says) as raised:
        Prices.parse(text)
    assert "--price gold=0.05,task=0.05" in str(raised.value)


@pytest.mark.parametrize(
    ("money", "gold", "questions"),
    [(1.0, 0.05, 20), (0.7, 0.07, 10), (0.3, 0.1, 3), (10.0, 3.0, 3), (0.05, 0.05, 1)],
)
def test_a_budget_in_money_buys_whole_questions(money: float, gold: float, questions: int) -> None:
    bought = Prices(gold=gold).questions(money)
    assert bought == questions and bought * gold <= money + 1e-9 < (bought + 1) * gold


def test_a_budget_that_buys_nothing_is_refused() -> None:
    with pytest.raises(ConfigError, match="pays for no gold question"):
        Prices(gold=0.05).questions(0.01)


RUN_FILE = 'algorithm = "crowd-prior"\n[params]\nthreshold = 0.6\n[price]\ngold = 0.02\n'


def _set_up(tmp_path: Path, file: str = RUN_FILE, **given: Any) -> RunPlan:
    """The plan ``screener run`` sets up from this run file and the settings given."""
    (tmp_path / "run.toml").write_text(file, encoding="utf-8")
    settings = RunSettings(run_file=tmp_path / "run.toml", workers=10, **given)
    return set_up_run(settings).plan


def test_the_run_files_price_table_and_the_flags(tmp_path: Path) -> None:
    plan = _set_up(tmp_path, RUN_FILE + "budget = 3.0\n")
    assert plan.prices == Prices(gold=0.02) and plan.params["budget"] == 150
    flags = MoneySettings(price="gold=0.05", budget=2.0)
    plan = _set_up(tmp_path, RUN_FILE + "budget = 3.0\n", money=flags)
    assert plan.prices == Prices(gold=0.05) and plan.params["budget"] == 40  # flags win
    plan = _set_up(tmp_path, algorithm=AlgorithmSettings(budget=70))
    assert plan.params["budget"] == 70  # a budget in questions given wins over none
    assert _set_up(tmp_path, 'algorithm = "rr"\nbudget = 50\n').prices is None


@pytest.mark.parametrize(
    ("file", "given", "says"),
    [
        (RUN_FILE + "budget = 3.0\n", {"algorithm": AlgorithmSettings(budget=5),
                                       "money": MoneySettings(budget=1.0)}, "both given"),
        ('budget = 30\n[price]\ngold = 0.1\nbudget = 3.0\n', {}, "both given"),
        ('algorithm = "rr"\n', {"money": MoneySettings(budget=1.0)}, "needs the price"),
        (RUN_FILE + "silver = 1.0\n", {}, "unknown key"),
        (RUN_FILE + 'task = "cheap"\n', {}, "must be a number"),
    ],
)  # fmt: skip
def test_bad_money_settings_are_refused(
    tmp_path: Path, file: str, given: dict[str, Any], says: str
) -> None:
    with pytest.raises(ConfigError, match=says):
        _set_up(tmp_path, file, **given)


def test_python_takes_the_price_as_the_run_file_writes_it(tmp_path: Path) -> None:
    result = screener.run(
        synthetic_pool(10, 2, seed=1), algorithm="toloka-rule", params={"threshold": 0.6},
        price={"gold": 0.1, "budget": 4.0}, db=tmp_path / "runs.db", progress=None,
    )  # fmt: skip
    assert result.params["budget"] == 40 and result.total_pulls <= 40
    record, _ = load_result(str(tmp_path / "runs.db"), result.run_id)
    assert run_prices(record) == Prices(gold=0.1)


def test_the_progress_line_shows_the_money_beside_the_answers() -> None:
    line = ProgressLine(asked=12, answered=10, in_flight=2, decided=1, workers=6, budget=40,
                        gold_price=0.05)  # fmt: skip
    assert line.text(elapsed=2.0).startswith("answers 10 / 40  spent 0.50 / 2.00  in flight 2")


def test_the_plan_prices_its_questions() -> None:
    cost = plan_cost("toloka-rule", {"threshold": 0.6}, [0.9, 0.8, 0.5, 0.4], runs=10)
    summary = cost.summary(Prices(gold=0.25))
    for key in ("questions_per_worker", "questions_in_total"):
        assert summary["money"][key] == {k: 0.25 * v for k, v in summary[key].items()}


def _answered(db: str, run_id: str) -> int:
    with Journal(db, create=False) as journal:
        return len(journal.events(run_id, kinds=(EventKind.ANSWERED,)))


async def test_the_money_adds_up_through_an_interruption_and_a_resume(tmp_path: Path) -> None:
    db, prices = str(tmp_path / "runs.db"), Prices(gold=0.03, task=0.01)
    pool = synthetic_pool(12, 2, seed=3)
    options = RunOptions(concurrency=2, timeout=5.0)
    params, oracle = {"threshold": 0.6, "budget": 120}, {"latency": "constant:0.002"}
    plan = make_plan(
        pool, "crowd-prior", params, seed=1, oracle_options=oracle, options=options, prices=prices
    )
    started: list[str] = []
    task = asyncio.create_task(
        start_run(plan, db, on_start=lambda run_id, _: started.append(run_id))
    )
    while not started or _answered(db, started[0]) < 20:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    result = await resume_run(started[0], db)  # the stored config carries the prices too
    record, stored = load_result(db, started[0])
    assert run_prices(record) == prices and stored.total_pulls == result.total_pulls
    data = render_json(stored, worker_pool(record), record.id, prices=prices)
    spent = data["money"]
    assert spent["gold"] == pytest.approx(0.03 * result.total_pulls)
    assert spent["gold"] == pytest.approx(sum(0.03 * w["pulls"] for w in data["workers"]))
    assert spent["budget"] == pytest.approx(0.03 * 120) and spent["gold"] <= spent["budget"]
    table = render_table(stored, worker_pool(record), record.id, prices=prices)
    assert f"cost: {0.03 * result.total_pulls:,.2f} ({result.total_pulls:,} gold questions" in table


@pytest.mark.slow
def test_report_and_plan_show_money_from_the_command_line(tmp_path: Path) -> None:
    def cli(*args: str) -> Any:
        done = subprocess.run([sys.executable, "-m", "screener", *args, "--json"],
                              capture_output=True, text=True, cwd=tmp_path)  # fmt: skip
        assert done.returncode in (0, 3), done.stderr
        return json.loads(done.stdout)

    ran = cli("run", "--workers", "10", "-a", "toloka-rule", "--threshold", "0.6",
              "--price", "gold=0.04", "--budget-money", "2", "--quiet")  # fmt: skip
    assert ran["params"]["budget"] == 50
    reported = cli("report", ran["run_id"])
    assert reported["money"] == ran["money"] == {
        "gold_price": 0.04, "gold": pytest.approx(0.04 * ran["total_pulls"]), "budget": 2.0,
    }  # fmt: skip
    planned = cli("plan", "--workers", "10", "-a", "toloka-rule", "--threshold", "0.6",
                  "--price", "gold=0.04", "--runs", "5")  # fmt: skip
    spread = planned["questions_in_total"]
    assert planned["money"]["questions_in_total"]["max"] == pytest.approx(0.04 * spread["max"])


async def test_the_page_shows_the_cost_and_names_the_banned(tmp_path: Path) -> None:
    pytest.importorskip("plotly")
    from screener.reports.html import html_report

    db, prices = str(tmp_path / "runs.db"), Prices(gold=0.25)
    pool = WorkerPool(tuple(f"w{i}" for i in range(8)), (0.2, 0.25, *[0.9] * 6))
    plan = make_plan(pool, "toloka-rule", {"threshold": 0.6}, seed=0, prices=prices)
    run_id, result = await start_run(plan, db)
    page = html_report(db, run_id, result)
    assert f"<dt>Cost</dt><dd>{cost_line(result, prices).removeprefix('cost: ')}" in page
    assert "<dt>Banned</dt><dd>2: w0, w1</dd>" in page
