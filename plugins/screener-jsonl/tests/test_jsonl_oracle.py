"""The jsonl oracle: conformance, the inbox format (partial and malformed lines), a full run.

An in-test "answerer" task plays the other process: it follows the outbox and appends
answers to the inbox, deterministically from the seed (no mocks of the oracle).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import tempfile
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import pytest
from screener.bank import GoldBank, GoldQuestion
from screener.crowd import WorkerPool, synthetic_pool
from screener.journal import Journal
from screener.oracles import Answer, PullRequest, available_oracles
from screener.orchestrator import RunOptions
from screener.runs.run_plan import RunPlan
from screener.runs.session import start_run
from screener.simulation.hashing import uniforms
from screener.testing import OracleConformance

from screener_jsonl import JsonlOracle, inbox_line, parse_answer

_CORRECT_STREAM, _LOSS_STREAM = 41, 42


class Answerer:
    """Answers each outbox question like a worker of the pool would: correctly with the
    worker's accuracy, skipping a ``loss`` share of pulls, all keyed by the seed."""

    def __init__(self, pool: WorkerPool, seed: int, outbox: Path, inbox: Path, loss: float = 0.0):
        self.pool, self.seed, self.loss = pool, seed, loss
        self.outbox, self.inbox = outbox, inbox
        self.offset = outbox.stat().st_size if outbox.exists() else 0

    async def run(self, poll: float = 0.002) -> None:
        while True:
            self.answer_new_lines()
            await asyncio.sleep(poll)

    def answer_new_lines(self) -> None:
        if not self.outbox.exists():
            return
        with self.outbox.open("rb") as file:
            file.seek(self.offset)
            data = file.read()
        complete = data[: data.rfind(b"\n") + 1]
        self.offset += len(complete)
        replies = [self._reply(json.loads(line)) for line in complete.splitlines()]
        with self.inbox.open("a", encoding="utf-8") as file:
            file.write("".join(reply for reply in replies if reply))

    def _reply(self, record: dict[str, Any]) -> str:
        if record.get("cancel"):
            return ""
        pull_id, seq = record["pull_id"], record["seq"]
        arm = self.pool.workers.index(record["worker"])
        if self.loss and uniforms(self.seed, _LOSS_STREAM, [pull_id], [0])[0] < self.loss:
            return ""  # this pull is never answered
        assert self.pool.accuracies is not None
        correct = uniforms(self.seed, _CORRECT_STREAM, [arm], [seq])[0] < self.pool.accuracies[arm]
        question = record["question"]
        run = {"run": record["run"]} if "run" in record else {}  # a good answerer echoes it
        if question is None:
            return inbox_line(pull_id, reward=float(correct), **run)
        key = self.pool.bank.get(question["id"]).key if self.pool.bank else ""
        return inbox_line(pull_id, answer=key if correct else "wrong", **run)


class AnsweredJsonlOracle(JsonlOracle):
    """The jsonl oracle plus, between open and close, an answerer following its outbox."""

    pool: WorkerPool
    seed: int
    loss: float = 0.0

    @classmethod
    def from_options(cls, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> Self:
        own = dict(options)
        loss = float(own.pop("answerer_loss", 0.0))
        oracle = super().from_options(pool, own, seed)
        oracle.pool, oracle.seed, oracle.loss = pool, seed, loss
        return oracle

    async def open(self) -> None:
        await super().open()
        answerer = Answerer(self.pool, self.seed, self.outbox, self.inbox, self.loss)
        self._answerer = asyncio.create_task(answerer.run(), name="test-answerer")

    async def close(self) -> None:
        task = getattr(self, "_answerer", None)
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await super().close()


class TestJsonlConformance(OracleConformance):
    oracle_class = AnsweredJsonlOracle
    options: ClassVar[Mapping[str, Any]] = {"poll": 0.002}
    silent_options: ClassVar[Mapping[str, Any]] = {"poll": 0.002, "answerer_loss": 0.3}

    def setup_method(self) -> None:
        self.folder = tempfile.TemporaryDirectory()

    def teardown_method(self) -> None:
        self.folder.cleanup()

    def make_oracle(self, pool: WorkerPool, options: Mapping[str, Any], seed: int) -> JsonlOracle:
        files = {"outbox": f"{self.folder.name}/out.jsonl", "inbox": f"{self.folder.name}/in.jsonl"}
        return AnsweredJsonlOracle.from_options(pool, {**files, **options}, seed)


# ------------------------------------------------------------------------ the inbox format
def _oracle(tmp_path: Path, **options: Any) -> JsonlOracle:
    files = {"outbox": str(tmp_path / "out.jsonl"), "inbox": str(tmp_path / "in.jsonl")}
    return JsonlOracle.from_options(synthetic_pool(4, 1), {**files, **options, "poll": 0.002}, 0)


def _requests(n: int) -> list[PullRequest]:
    return [PullRequest(i, f"w{i % 4 + 1}", i % 4, i // 4) for i in range(n)]


async def _receive(oracle: JsonlOracle, wait: float = 0.5) -> list[Answer]:
    """What receive returns within ``wait`` seconds (nothing if it is still waiting)."""
    try:
        async with asyncio.timeout(wait):
            return list(await oracle.receive())
    except TimeoutError:
        return []


def _write(path: Path, text: str) -> None:
    with path.open("a", encoding="utf-8") as file:
        file.write(text)


def test_a_partial_last_line_waits_for_its_end(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _oracle(tmp_path) as oracle:
            await oracle.submit(_requests(2))
            _write(oracle.inbox, '{"pull_id": 0, "answer": "cat"}\n{"pull_id": 1, "rew')
            assert await _receive(oracle) == [Answer(0, response="cat")]
            assert await _receive(oracle, 0.05) == []  # half a line is not an answer
            _write(oracle.inbox, 'ard": 1}\n')
            assert await _receive(oracle) == [Answer(1, reward=1.0)]

    asyncio.run(scenario())


def test_malformed_lines_fail_their_pull_or_are_skipped(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _oracle(tmp_path) as oracle:
            await oracle.submit(_requests(4))
            _write(
                oracle.inbox,
                "garbage without a pull id\n"
                '{"pull_id": 0, "answer": oops}\n'
                '{"pull_id": 1, "reward": 1, "answer": "x"}\n'
                '{"pull_id": 2, "unavailable": "left the platform"}\n'
                '{"pull_id": 99, "reward": 1}\n',  # never asked: another run's answer
            )
            answers = {a.pull_id: a for a in await _receive(oracle)}
            assert sorted(answers) == [0, 1, 2]
            assert answers[0].error == "malformed inbox line: not valid JSON"
            assert answers[1].error is not None and "exactly one of" in answers[1].error
            assert answers[2].unavailable == "left the platform"

    asyncio.run(scenario())


def test_the_outbox_has_one_line_per_question_and_per_cancel(tmp_path: Path) -> None:
    bank = GoldBank((GoldQuestion("q1", {"text": "2+2?"}, "4"),))
    question = bank.get("q1")

    async def scenario() -> None:
        async with _oracle(tmp_path) as oracle:
            await oracle.submit([PullRequest(7, "w2", 1, 0, question), *_requests(1)])
            await oracle.cancel([7, 12345])  # an unknown id is ignored
            _write(oracle.inbox, inbox_line(7, answer="4") + inbox_line(0, reward=0.0))
            assert await _receive(oracle) == [Answer(0, reward=0.0)]  # 7 was withdrawn

    asyncio.run(scenario())
    lines = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines()]
    assert lines == [
        {"pull_id": 7, "worker": "w2", "question": {"id": "q1", "payload": {"text": "2+2?"}},
         "seq": 0},
        {"pull_id": 0, "worker": "w1", "question": None, "seq": 0},
        {"pull_id": 7, "cancel": True},
    ]  # fmt: skip


def test_answers_left_by_an_earlier_run_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "in.jsonl").write_text(inbox_line(0, reward=1.0))

    async def scenario() -> None:
        async with _oracle(tmp_path) as oracle:
            await oracle.submit(_requests(1))
            assert await _receive(oracle, 0.05) == []
            _write(oracle.inbox, inbox_line(0, reward=0.0))
            assert await _receive(oracle) == [Answer(0, reward=0.0)]

    asyncio.run(scenario())


def test_two_runs_sharing_the_files_take_only_their_own_answers(tmp_path: Path) -> None:
    async def scenario() -> None:
        first, second = _oracle(tmp_path), _oracle(tmp_path)
        first.bind_run("run-a")
        second.bind_run("run-b")
        async with first, second:
            await first.submit(_requests(1))
            await second.submit(_requests(1))  # the same pull id 0, another run
            sent = [json.loads(line) for line in first.outbox.read_text().splitlines()]
            assert [line["run"] for line in sent] == ["run-a", "run-b"]
            _write(first.inbox, inbox_line(0, reward=0.0, run="run-b"))
            _write(first.inbox, inbox_line(0, reward=1.0, run="run-a"))
            assert await _receive(first) == [Answer(0, reward=1.0)]
            assert await _receive(second) == [Answer(0, reward=0.0)]
            _write(first.inbox, inbox_line(0, reward=0.5))  # no run named: both may take it
            assert await _receive(first) == [Answer(0, reward=0.5)]

    asyncio.run(scenario())


def test_a_truncated_inbox_is_read_again_from_its_start(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with _oracle(tmp_path) as oracle:
            await oracle.submit(_requests(2))
            _write(oracle.inbox, inbox_line(0, reward=1.0))
            assert await _receive(oracle) == [Answer(0, reward=1.0)]
            oracle.inbox.write_text("")  # truncated (e.g. rotated by copytruncate)
            await _receive(oracle, 0.02)
            _write(oracle.inbox, inbox_line(1, reward=0.0))
            assert await _receive(oracle) == [Answer(1, reward=0.0)]

    asyncio.run(scenario())


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"inbox": "a.jsonl"}, "the jsonl oracle needs outbox"),
        ({"outbox": "a.jsonl", "inbox": "a.jsonl"}, "the same file"),
        ({"outbox": "a", "inbox": "b", "poll": 0}, "poll must be a positive"),
        ({"outbox": "a", "inbox": "b", "token": "x"}, "unknown option(s) for the jsonl oracle"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    from screener.errors import ConfigError

    with pytest.raises(ConfigError) as caught:
        JsonlOracle.from_options(synthetic_pool(4, 1), options, 0)
    assert message in str(caught.value)


def test_parse_answer_reads_numbers_as_raw_answers() -> None:
    assert parse_answer(b'{"pull_id": 5, "answer": 3.5}') == Answer(5, response=3.5)
    assert parse_answer(b'{"pull_id": true, "reward": 1}') is None
    assert parse_answer(b"   ") is None


# ---------------------------------------------------------------------- a full run
def test_the_plugin_is_registered() -> None:
    found = {info.name: info for info in available_oracles()}
    assert found["jsonl"].package == "screener-jsonl"
    assert found["jsonl"].target == "screener_jsonl:JsonlOracle"


def test_a_full_run_through_start_run(tmp_path: Path) -> None:
    base = synthetic_pool(10, 1, seed=5)
    bank = GoldBank(tuple(GoldQuestion(f"q{i}", f"question {i}", str(i)) for i in range(30)))
    pool = WorkerPool(base.workers, base.accuracies, "test", bank)
    outbox, inbox, db = tmp_path / "out.jsonl", tmp_path / "in.jsonl", tmp_path / "runs.db"
    plan = RunPlan(
        pool, "wrr", {"k": 2.0, "delta": 0.1, "direction": "low", "budget": 200}, "jsonl",
        {"outbox": str(outbox), "inbox": str(inbox), "poll": 0.002}, seed=3,
        options=RunOptions(concurrency=16, timeout=0.2),
    )  # fmt: skip

    async def scenario() -> tuple[str, Any]:
        answerer = asyncio.create_task(Answerer(pool, 3, outbox, inbox, loss=0.05).run())
        try:
            return await start_run(plan, str(db))
        finally:
            answerer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await answerer

    run_id, result = asyncio.run(scenario())
    assert {json.loads(line)["run"] for line in outbox.read_text().splitlines()} == {run_id}
    with Journal(str(db), create=False) as journal:
        events = journal.events(run_id)
        oracle = journal.get_run(run_id).oracle
    kinds = Counter(event.kind.value for event in events)
    assert oracle == {"name": "jsonl", "options": {"outbox": str(outbox), "inbox": str(inbox),
                                                   "poll": 0.002, "retractable": True}}  # fmt: skip
    assert kinds["finished"] == 1 and kinds["timed_out"] > 0
    assert kinds["answered"] == result.total_pulls > 0
    answered = [e for e in events if e.kind.value == "answered"]
    # Raw answers were scored against the bank's keys by the orchestrator.
    assert all(e.question is not None and e.response is not None for e in answered)
    rewards = np.array([e.reward for e in answered])
    assert set(np.unique(rewards)) <= {0.0, 1.0} and 0.5 < rewards.mean() < 1.0
