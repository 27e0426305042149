"""The conformance suite against the log oracle, on a run logged to a real SQLite file."""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

import pytest
from plan_helpers import make_plan

from screener.crowd import WorkerPool
from screener.runs.log_oracle import LogOracle
from screener.runs.session import start_run
from screener.testing import OracleConformance, default_pool


@pytest.fixture(scope="module")
def logged_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A round-robin run over the suite's default pool: 40 answers per worker."""
    db = str(tmp_path_factory.mktemp("log-conformance") / "runs.db")
    pool = default_pool()
    plan = make_plan(pool, "rr", {"budget": 40 * len(pool)}, seed=3)
    run_id, _ = asyncio.run(start_run(plan, db))
    return db, run_id


class TestLogOracleConformance(OracleConformance):
    source: ClassVar[tuple[str, str]]

    @pytest.fixture(autouse=True)
    def _source(self, logged_run: tuple[str, str]) -> None:
        type(self).source = logged_run

    def make_oracle(self, pool: WorkerPool, options: Any, seed: int) -> LogOracle:
        db, run_id = self.source
        return LogOracle.from_options(pool, {"db": db, "run": run_id, **options}, seed)

    options: ClassVar[dict[str, Any]] = {}
    silent_options: ClassVar[dict[str, Any]] = {"loss": 0.4}
