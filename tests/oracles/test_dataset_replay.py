"""Faithful dataset replay (issue 11): both file layouts, the items and raw answers each pull
replays, and rewards that are exactly those of a replay that knows the scores only."""

from __future__ import annotations

import asyncio
import csv
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from screener.bank import Scoring, score_answer
from screener.crowd import WorkerPool
from screener.errors import ConfigError, PoolError
from screener.oracles import Answer, PullRequest
from screener.oracles.answer_file import load_answers, load_gold
from screener.oracles.dataset import DatasetOracle
from screener.simulation.recorded import RecordedRewards
from screener.testing import OracleConformance

Row = tuple[str, str, str, str]  # worker, item, answer, gold


def labelled_rows(n_workers: int = 6, n_items: int = 30, seed: int = 0) -> list[Row]:
    """Workers answer a random subset of items (some twice), right with their accuracy;
    answers differ from gold in case now and then, which the replay must ignore."""
    rng = np.random.default_rng(seed)
    gold = {f"i{j}": str(rng.choice(["yes", "no", "maybe"])) for j in range(n_items)}
    rows: list[Row] = []
    for w in range(n_workers):
        accuracy = 0.4 + 0.1 * w
        items = [*rng.choice(n_items, size=n_items // 2, replace=False), 0]  # i0 twice
        for j in items:
            key = gold[f"i{j}"]
            answer = key if rng.random() < accuracy else "wrong"
            answer = answer.upper() if rng.random() < 0.2 else answer
            rows.append((f"w{w}", f"i{j}", answer, key))
    return rows


def write(path: Path, header: Sequence[str], rows: Iterable[Sequence[object]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def replayed(
    oracle: DatasetOracle, pool: WorkerPool, pulls: Sequence[tuple[int, int]]
) -> list[tuple[str | None, Answer]]:
    """Each pull's question id (as the orchestrator would journal it) and its answer."""
    requests = [
        PullRequest(i, pool.workers[arm], arm, seq, oracle.question_for(pool, arm, seq, 0))
        for i, (arm, seq) in enumerate(pulls)
    ]

    async def collect() -> list[Answer]:
        async with oracle:
            await oracle.submit(requests)
            answers: list[Answer] = []
            while len(answers) < len(requests):
                answers.extend(await oracle.receive())
        return sorted(answers, key=lambda a: a.pull_id)

    answers = asyncio.run(collect())
    return [
        (None if r.question is None else r.question.id, a)
        for r, a in zip(requests, answers, strict=True)
    ]


def test_crowd_kit_layouts_load_like_the_long_format(tmp_path: Path) -> None:
    rows = labelled_rows()
    long = load_answers(write(tmp_path / "long.csv", ("worker", "item", "answer", "gold"), rows))
    column = write(
        tmp_path / "column.csv",
        ("task", "worker", "label", "true_label"),
        [(i, w, a, g) for w, i, a, g in rows],
    )
    gold = {item: key for _, item, _, key in rows}
    answers = write(tmp_path / "answers.csv", ("task", "worker", "label"),
                    [(i, w, a) for w, i, a, _ in rows])  # fmt: skip
    gold_file = write(tmp_path / "gold.csv", ("task", "true_label"), sorted(gold.items()))
    for other in (load_answers(column), load_answers(answers, gold=gold_file)):
        assert other.workers == long.workers and other.records == long.records
        assert other.gold == long.gold == gold
    for records, rewards in zip(long.records, long.rewards, strict=True):
        expected = [
            score_answer(Scoring.CASE_INSENSITIVE, gold[r.item], 0, r.answer) for r in records
        ]
        np.testing.assert_array_equal(rewards, expected)
        assert all(r.answer is not None for r in records)  # every answer can be replayed raw


def test_tasks_without_gold_are_skipped_and_counted(tmp_path: Path) -> None:
    rows = labelled_rows()
    gold = {item: key for _, item, _, key in rows}
    kept = {item: gold[item] for item in sorted(gold)[::2]}  # gold for half the tasks
    answers = write(tmp_path / "answers.csv", ("task", "worker", "label"),
                    [(i, w, a) for w, i, a, _ in rows])  # fmt: skip
    recorded = load_answers(answers, gold=write(tmp_path / "g.csv", ("task", "gold"), kept.items()))
    assert recorded.skipped == sum(item not in kept for _, item, _, _ in rows) > 0
    assert sum(len(r) for r in recorded.records) == len(rows) - recorded.skipped
    assert {r.item for rs in recorded.records for r in rs} <= set(kept)
    assert "rows without gold skipped" in recorded.pool().source
    none = write(tmp_path / "g0.csv", ("task", "label"), [("nowhere", "yes")])
    with pytest.raises(PoolError, match=r"none of its \d+ answers is to a task with gold"):
        load_answers(answers, gold=none)


def test_bad_layouts_are_one_clear_error(tmp_path: Path) -> None:
    gold = write(tmp_path / "gold.csv", ("task", "true_label"), [("t1", "a")])
    both = write(
        tmp_path / "both.csv", ("task", "worker", "label", "gold"), [("t1", "w", "a", "a")]
    )
    with pytest.raises(PoolError, match="has its own gold column and a gold file was given"):
        load_answers(both, gold=gold)
    clash = write(tmp_path / "clash.csv", ("worker", "item", "answer", "gold"),
                  [("w1", "t1", "a", "a"), ("w2", "t1", "a", "b")])  # fmt: skip
    with pytest.raises(PoolError, match="line 3: item 't1' has gold 'b' here but 'a' on line 2"):
        load_answers(clash)
    no_gold = write(tmp_path / "no_gold.csv", ("task", "worker", "label"), [("t1", "w", "a")])
    with pytest.raises(PoolError, match="expected columns worker,item,answer"):
        load_answers(no_gold)
    with pytest.raises(PoolError, match="expected columns task,true_label"):
        load_gold(write(tmp_path / "tasks.csv", ("task", "worker"), [("t1", "w")]))
    with pytest.raises(PoolError, match="no gold file at"):
        load_answers(no_gold, gold=tmp_path / "missing.csv")


def test_a_raw_answer_is_kept_only_where_it_reproduces_the_recorded_reward(
    tmp_path: Path,
) -> None:
    # A `correct` column following another rule (Maglione's multi-label answers) and graded
    # scores keep the recorded reward; their answers cannot be replayed raw.
    correct = write(tmp_path / "correct.csv", ("worker", "item", "answer", "gold", "correct"),
                    [("w1", "a", "1|1", "1", 1), ("w1", "b", "YES", "yes", 1),
                     ("w2", "a", "0", "1", 0)])  # fmt: skip
    records = load_answers(correct).records
    assert [r.answer for r in records[0]] == [None, "YES"] and records[1][0].answer == "0"
    graded = write(tmp_path / "graded.csv", ("worker", "item", "answer", "gold", "score"),
                   [("w1", "a", "0.6", "0.6", 1.0), ("w2", "a", "0.5", "0.6", 0.9)])  # fmt: skip
    loaded = load_answers(graded)
    assert [r.answer for rs in loaded.records for r in rs] == [None, None]
    assert loaded.rewards[1].tolist() == [0.9] and loaded.gold == {"a": "0.6"}


@pytest.mark.parametrize("replacement", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 7])
def test_records_name_what_sample_draws(replacement: bool, seed: int) -> None:
    rng = np.random.default_rng(seed)
    records = [rng.random(int(rng.integers(1, 40))) for _ in range(12)]
    model = RecordedRewards([f"w{i}" for i in range(12)], records, seed, replacement=replacement)
    arms = np.repeat(np.arange(12), 60)
    seqs = np.tile(np.arange(60), 12)
    index = model.records(arms, seqs)
    drawn = model.sample(arms, seqs)
    assert np.array_equal(np.isnan(drawn), index < 0)
    picked = [records[a][i] for a, i in zip(arms, index, strict=True) if i >= 0]
    np.testing.assert_array_equal(drawn[index >= 0], picked)
    if not replacement:  # each record once: the first n questions are a permutation
        for arm, rewards in enumerate(records):
            assert sorted(index[arms == arm][: rewards.size]) == list(range(rewards.size))


@pytest.mark.parametrize("replacement", [True, False])
def test_pulls_ask_the_item_of_the_record_and_score_as_the_reward_alone_did(
    tmp_path: Path, replacement: bool
) -> None:
    rows = labelled_rows(seed=3)
    file = write(tmp_path / "answers.csv", ("worker", "item", "answer", "gold"), rows)
    options = {"path": str(file), "replacement": replacement}
    pool = DatasetOracle.default_pool(options)
    assert pool is not None and pool.bank is not None
    bare = WorkerPool(pool.workers, pool.accuracies, "no bank")
    pulls = [(arm, seq) for arm in range(len(pool)) for seq in range(40)]
    faithful = replayed(DatasetOracle.from_options(pool, options, 5), pool, pulls)
    rewards_only = replayed(DatasetOracle.from_options(bare, options, 5), bare, pulls)
    seen: Counter[tuple[str, str, str]] = Counter()
    for (arm, _), (item, answer), (none, reward) in zip(pulls, faithful, rewards_only, strict=True):
        assert none is None and answer.reward is None
        if reward.unavailable is not None:  # exhausted: no item is named for that pull
            assert item is None and not replacement
            continue
        assert item is not None and answer.response is not None
        question = pool.bank.get(item)
        assert question.score(answer.response) == reward.reward  # the same reward stream
        seen[(pool.workers[arm], item, str(answer.response))] += 1
    recorded = Counter((w, i, a) for w, i, a, _ in rows)
    if replacement:  # the same item may come back: only the worker's own records are drawn
        assert set(seen) <= set(recorded) and max(seen.values()) > 1
    else:  # every record exactly once, duplicates in the data included
        assert seen == recorded


def test_a_bank_that_is_not_the_datasets_items_is_refused(tmp_path: Path) -> None:
    file = write(tmp_path / "answers.csv", ("worker", "item", "answer", "gold"), labelled_rows())
    options = {"path": str(file)}
    pool = DatasetOracle.default_pool(options)
    assert pool is not None and pool.bank is not None
    journaled = WorkerPool.from_dict(pool.to_dict())  # how a resumed run sees its pool
    oracle = DatasetOracle.from_options(journaled, options, 0)
    assert oracle.question_for(journaled, 0, 0, 0) is not None
    changed = [(w, i, a, "changed") for w, i, a, _ in labelled_rows()]
    other = load_answers(
        write(tmp_path / "other.csv", ("worker", "item", "answer", "gold"), changed)
    )
    wrong = WorkerPool(pool.workers, pool.accuracies, "x", other.bank())
    with pytest.raises(ConfigError, match=r"does not hold item .* with gold"):
        DatasetOracle.from_options(wrong, options, 0)


class TestDatasetOracleWithItemsConformance(OracleConformance):
    """The conformance suite on the dataset's own pool, whose bank is its items: the oracle
    then answers with raw answers."""

    path: ClassVar[Path]

    @pytest.fixture(autouse=True)
    def _file(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        folder = tmp_path_factory.mktemp("items")
        rows = labelled_rows(n_workers=8, n_items=60)
        type(self).path = write(folder / "answers.csv", ("worker", "item", "answer", "gold"), rows)
        type(self).pool = DatasetOracle.default_pool({"path": str(self.path)})

    def make_oracle(self, pool: WorkerPool, options: Any, seed: int) -> DatasetOracle:
        return DatasetOracle.from_options(pool, {"path": str(self.path), **options}, seed)

    silent_options: ClassVar[dict[str, Any]] = {"loss": 0.4}
