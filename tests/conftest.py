"""Shared pytest configuration.

Its presence puts ``tests/`` on ``sys.path`` (rootdir-relative discovery without
``__init__.py`` files), so test modules can import ``stats_helpers``.

``database_url``: a fresh, empty run database on each backend screener supports: a SQLite
file, and a PostgreSQL database created for the test on the server that
``SCREENER_TEST_POSTGRES`` names (a SQLAlchemy URL; ``.ci/run`` starts a throwaway server
on 127.0.0.1 and sets it). Without that variable the PostgreSQL case is skipped, saying so.

The quick suite and the full one: plain ``pytest`` leaves out the tests marked with one of
``FULL_SUITE_ONLY`` (the seeded statistical tests, ``slow``, and those that start real
processes, ``subprocess``: the screener command, a browser, mkdocs) and says so in its
header; ``pytest --full`` runs everything (what ``.ci/run`` runs), and so does an explicit
``-m`` expression or a test file or test named on the command line (``file.py``,
``file.py::test``): what is named runs whole; a folder gets the quick suite.

``run_pool``: one pool of processes for the whole session, shared by the statistical tests
that make many seeded runs (``map_seeds(..., executor=run_pool)``), so a test pays for
sending its runs, not for starting processes. Their run functions live at module level in
the test files, which the workers import by name (pytest puts each test folder on sys.path).
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from collections.abc import Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

POSTGRES_ENV = "SCREENER_TEST_POSTGRES"
#: Markers of the tests that only the full suite runs (``pytest --full``).
FULL_SUITE_ONLY = ("slow", "subprocess")


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--full", action="store_true",
        help=f"Run every test, also those marked {' or '.join(FULL_SUITE_ONLY)} (as CI does).",
    )  # fmt: skip


def _quick(config: pytest.Config) -> bool:
    """Whether this run is the quick suite: no --full, no -m, no test file or test named."""
    named = any("::" in str(arg) or str(arg).endswith(".py") for arg in config.args)
    return not (config.getoption("--full") or config.getoption("markexpr") or named)


def pytest_report_header(config: pytest.Config) -> str:
    if not _quick(config):
        return "full suite"
    return (
        f"quick suite: tests marked {' or '.join(FULL_SUITE_ONLY)} are left out "
        "(pytest --full runs everything, as .ci/run does)"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not _quick(config):
        return
    left_out = [item for item in items if any(item.get_closest_marker(m) for m in FULL_SUITE_ONLY)]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        leaving = set(left_out)
        items[:] = [item for item in items if item not in leaving]


@pytest.fixture(params=["sqlite", "postgresql"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield str(tmp_path / "runs.db")
        return
    server = os.environ.get(POSTGRES_ENV)
    if not server:
        pytest.skip(f"{POSTGRES_ENV} is not set: no PostgreSQL server to test against")
    name = f"screener_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(server, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        url = make_url(server).set(database=name)
        yield url.render_as_string(hide_password=False)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


@pytest.fixture(scope="session")
def run_pool() -> Iterator[Executor]:
    with ProcessPoolExecutor(mp_context=multiprocessing.get_context("spawn")) as pool:
        yield pool
