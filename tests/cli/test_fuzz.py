"""Property-based fuzzing of the command line (issues 17 and 36): generated argument lists
for every command (`run` with mixes of flags, algorithm parameters and oracle options; `plan`,
`serve`, `report`, `replay`, `export`, `invalidate`, `runs`, `upgrade`), run databases of
every kind, an http service that rejects, stalls or lies, and generated, mostly malformed,
pool, question bank, dataset and run (TOML) files.

The property is fuzz_running's: exit 0 with valid output and, for a run, every value given
stored exactly and no option the algorithm does not use (fuzz_spec); or exit 2 with one line
and nothing written. The volume runs in this process: ``main()`` under click's
``CliRunner.isolation()``. A case takes about 0.06 s of CPU that way, where a fresh
interpreter spends seconds importing numpy, SQLAlchemy and aiohttp before it starts; a subset
of the same generated cases runs as real subprocesses (``test_a_subset_as_real_subprocesses``).

Seeded (``derandomize``): every run draws the same corpus, CORPUS cases in all.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_helpers import assert_ran
from fuzz_files import POOL_FILES, bank_file, dataset_files, toml_file
from fuzz_running import DB, as_subprocess, fuzz_once, in_process
from fuzz_strategies import http_args, other_args, plan_args, run_args, serve_args
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from liar_service import liar_service

#: How many generated cases each property runs.
EXAMPLES = {
    "run": 360, "other": 200, "plan": 80, "serve": 40, "http": 60, "pool": 120, "bank": 120,
    "dataset": 120, "toml": 120,
}  # fmt: skip
SUBPROCESS_EXAMPLES = 8
CORPUS = sum(EXAMPLES.values()) + 2 * SUBPROCESS_EXAMPLES
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: A pool (worker, accuracy), a bank of numeric questions and a dataset, all valid.
POOL_CSV = "worker,accuracy\n" + "".join(f"w{i},{0.5 + i / 20}\n" for i in range(1, 7))
BANK_CSV = "id,payload,key,scoring\n" + "".join(f"q{i},{i}+{i},{2 * i},numeric\n" for i in range(9))
DATA_CSV = "worker,item,answer,gold\n" + "".join(
    f"w{w},i{i},{'ab'[(w * i) % 3 == 0]},a\n" for w in range(1, 5) for i in range(6)
)
#: A run file for the http cases: a worker whose questions fail twice in a row is given up.
HTTP_TOML = "[run]\nmax_failures = 2\ntimeout = 1.0\nconcurrency = 8\n"
RUN_TAIL = ["--budget", "40", "--db", DB, "--json", "--quiet"]


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder with valid files, a database holding one finished run (and its id), another
    application's database, an empty file, and a copy of the journal in a read-only folder
    (read-only for a user; root's writes are not stopped by permissions)."""
    folder = tmp_path_factory.mktemp("fuzz")
    texts = {"pool.csv": POOL_CSV, "bank.csv": BANK_CSV, "data.csv": DATA_CSV,
             "http.toml": HTTP_TOML}  # fmt: skip
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    done = in_process(
        ["run", "pool.csv", "--questions", "bank.csv", "--budget", "40", "--db", DB, "--json"],
        folder,
    )
    assert_ran(done.code, done.stdout, done.stderr)
    with sqlite3.connect(folder / "foreign.db") as other:
        other.execute("CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT)")
    other.close()
    (folder / "empty.db").touch()
    (folder / "ro").mkdir()
    (folder / "ro" / DB).write_bytes((folder / DB).read_bytes())
    (folder / "ro" / DB).chmod(0o444)
    (folder / "ro").chmod(0o555)
    return folder, str(json.loads(done.stdout)["run_id"])


@pytest.fixture(scope="module")
def liar() -> Iterator[str]:
    with liar_service() as url:
        yield url


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["run"])
@given(data=st.data())
def test_run_with_generated_arguments(template: tuple[Path, str], data: st.DataObject) -> None:
    folder, run_id = template
    fuzz_once(folder, data.draw(run_args(run_id), label="args"))


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["other"])
@given(data=st.data())
def test_other_commands_with_generated_arguments(
    template: tuple[Path, str], data: st.DataObject
) -> None:
    folder, run_id = template
    fuzz_once(folder, data.draw(other_args(run_id), label="args"))


@settings(FUZZ, max_examples=EXAMPLES["plan"])
@given(data=st.data())
def test_plan_with_generated_arguments(template: tuple[Path, str], data: st.DataObject) -> None:
    folder, run_id = template
    fuzz_once(folder, data.draw(plan_args(run_id), label="args"))


@settings(FUZZ, max_examples=EXAMPLES["serve"])
@given(args=serve_args())
def test_serve_with_generated_arguments(template: tuple[Path, str], args: list[str]) -> None:
    fuzz_once(template[0], args)


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["http"])
@given(data=st.data())
def test_run_against_a_service_that_rejects_stalls_or_lies(
    template: tuple[Path, str], liar: str, data: st.DataObject
) -> None:
    fuzz_once(template[0], data.draw(http_args(liar), label="args"))


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["pool"])
@given(content=POOL_FILES)
def test_generated_pool_files(template: tuple[Path, str], content: bytes) -> None:
    fuzz_once(template[0], ["run", "fuzzed.csv", *RUN_TAIL], {"fuzzed.csv": content})


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["bank"])
@given(file=bank_file())
def test_generated_question_banks(template: tuple[Path, str], file: tuple[str, bytes]) -> None:
    name, content = file
    args = ["run", "pool.csv", "--questions", name, *RUN_TAIL]
    fuzz_once(template[0], args, {name: content})


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["dataset"])
@given(dataset=dataset_files())
def test_generated_datasets(
    template: tuple[Path, str], dataset: tuple[dict[str, bytes], list[str]]
) -> None:
    files, options = dataset
    fuzz_once(template[0], ["run", "--oracle", "dataset", *options, *RUN_TAIL], files)


@pytest.mark.slow
@settings(FUZZ, max_examples=EXAMPLES["toml"])
@given(content=toml_file(), db_flag=st.booleans())
def test_generated_run_files(template: tuple[Path, str], content: bytes, db_flag: bool) -> None:
    # Without --db the file's db (or screener.db) is used: the folder must stay unchanged.
    tail = RUN_TAIL if db_flag else ["--budget", "40", "--json", "--quiet"]
    fuzz_once(template[0], ["run", "--config", "run.toml", *tail], {"run.toml": content})


@pytest.mark.subprocess
@settings(FUZZ, max_examples=SUBPROCESS_EXAMPLES)
@given(data=st.data())
def test_a_subset_as_real_subprocesses(template: tuple[Path, str], data: st.DataObject) -> None:
    folder, run_id = template
    fuzz_once(folder, data.draw(run_args(run_id), label="args"), run=as_subprocess)
    fuzz_once(folder, data.draw(other_args(run_id), label="args"), run=as_subprocess)


def test_the_docs_state_this_corpus() -> None:
    path = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
    page = " ".join(path.read_text(encoding="utf-8").split())
    in_process = sum(EXAMPLES.values())
    assert f"checks this on {CORPUS:,} cases" in page
    assert f"{in_process:,} cases run in-process" in page
    assert f"{2 * SUBPROCESS_EXAMPLES} as real subprocesses" in page
