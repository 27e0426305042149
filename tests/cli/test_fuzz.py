"""Property-based fuzzing of the command line (issue 17): generated argument lists and
generated, mostly malformed, pool, question bank, dataset and run (TOML) files.

Every outcome must be either exit 0 with a valid report, or exit 2 with exactly one line on
stderr (``error: ...``, never "internal error") and the folder it ran in, run database
included, byte for byte as it was. Any other exit code, a raw warning or a command that does not
end within WATCHDOG seconds fails.

The volume runs in this process: ``main()`` under click's ``CliRunner.isolation()`` (stdin,
stdout and stderr swapped). A case takes about 0.06 s of CPU that way, where a fresh
interpreter spends seconds importing numpy, SQLAlchemy and aiohttp before it starts; a subset
of the same generated cases runs as real subprocesses (``test_a_subset_as_real_subprocesses``).

Seeded (``derandomize``): every run draws the same corpus, CORPUS cases in all.
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import math
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

import pytest
from cli_helpers import NOT_COMPLETED, assert_ran
from click.testing import CliRunner
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

from screener.algorithms import ALGORITHMS
from screener.cli.main import main

DB = "runs.db"
WATCHDOG = 60.0
#: How many generated cases each property runs.
EXAMPLES = {"run": 360, "other": 160, "pool": 120, "bank": 120, "dataset": 120, "toml": 120}
SUBPROCESS_EXAMPLES = 8
CORPUS = sum(EXAMPLES.values()) + 2 * SUBPROCESS_EXAMPLES
RAW_WARNING = r"\.py:\d+: \w*Warning: "
DECISIONS = {"outlier", "normal", "above", "below", "selected", "rejected", "undecided"}
FUZZ = settings(
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=False,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# ----------------------------------------------------------------------------- running


@dataclass(frozen=True)
class Outcome:
    code: int
    stdout: str
    stderr: str


class Hung(Exception):
    """The command did not end in time: main() reports it as an internal error (exit 1), so
    the case fails like any other, with its arguments shown."""


@contextlib.contextmanager
def watchdog(seconds: float) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hung(f"no exit within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def in_process(args: Sequence[str], folder: Path) -> Outcome:
    """``screener ARGS`` through main() in this process, in ``folder``."""
    code: int | str | None = None
    runner = CliRunner()
    with (
        contextlib.chdir(folder),
        warnings.catch_warnings(),  # main() routes warnings; put the filters back after
        runner.isolation() as (out, err, _),
        watchdog(WATCHDOG),
    ):
        try:
            main(list(args))
        except SystemExit as done:
            code = done.code
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    assert isinstance(code, int), f"exit code {code!r}"
    return Outcome(code, out.getvalue().decode(), err.getvalue().decode())


def as_subprocess(args: Sequence[str], folder: Path) -> Outcome:
    done = subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=WATCHDOG * 5, cwd=folder,
    )  # fmt: skip
    return Outcome(done.returncode, done.stdout, done.stderr)


Runner = Callable[[Sequence[str], Path], Outcome]


# ----------------------------------------------------------------------------- checking


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def check(args: Sequence[str], outcome: Outcome, before: Mapping[str, bytes], folder: Path) -> None:
    """The property: a valid report (exit 0, or 3 for a run that ended without its stopping
    condition), or one line and nothing written (exit 2)."""
    note(f"screener {' '.join(args)}\nexit {outcome.code}\nstderr: {outcome.stderr!r}")
    event(f"exit {outcome.code}")  # pytest --hypothesis-show-statistics: how many succeed
    assert not re.search(RAW_WARNING, outcome.stderr), outcome.stderr
    if args[0] == "run" and outcome.code in (0, NOT_COMPLETED):
        assert_ran(outcome.code, outcome.stdout, outcome.stderr)
        check_output(args, outcome.stdout)
        return
    if outcome.code == 0:
        check_output(args, outcome.stdout)
        return
    assert outcome.code == 2, outcome
    lines = outcome.stderr.splitlines()
    assert len(lines) == 1, outcome.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert snapshot(folder) == before, "a refused command changed the folder"


def check_output(args: Sequence[str], stdout: str) -> None:
    if "--json" not in args:
        return
    data = json.loads(stdout)
    if args[0] in ("run", "report"):
        check_report(data)
    elif args[0] == "replay":
        check_report(data["original"])
        check_report(data["replay"])


def check_report(report: dict[str, Any]) -> None:
    workers = report["workers"]
    assert len(workers) >= 2 and isinstance(report["run_id"], str)
    assert {line["decision"] for line in workers} <= DECISIONS
    assert sum(line["pulls"] for line in workers) == report["total_pulls"]


# ----------------------------------------------------------------------------- fixtures

#: A pool (worker, accuracy), a bank of numeric questions and a dataset, all valid.
POOL_CSV = "worker,accuracy\n" + "".join(f"w{i},{0.5 + i / 20}\n" for i in range(1, 7))
BANK_CSV = "id,payload,key,scoring\n" + "".join(f"q{i},{i}+{i},{2 * i},numeric\n" for i in range(9))
DATA_CSV = "worker,item,answer,gold\n" + "".join(
    f"w{w},i{i},{'ab'[(w * i) % 3 == 0]},a\n" for w in range(1, 5) for i in range(6)
)


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A folder with valid files and a database holding one finished run (and its id)."""
    folder = tmp_path_factory.mktemp("fuzz")
    for name, text in (("pool.csv", POOL_CSV), ("bank.csv", BANK_CSV), ("data.csv", DATA_CSV)):
        (folder / name).write_text(text, encoding="utf-8")
    done = in_process(
        ["run", "pool.csv", "--questions", "bank.csv", "--budget", "40", "--db", DB, "--json"],
        folder,
    )
    assert_ran(done.code, done.stdout, done.stderr)
    return folder, str(json.loads(done.stdout)["run_id"])


@contextlib.contextmanager
def copy_of(template: Path, files: Mapping[str, bytes]) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(dir=template.parent) as name:
        folder = Path(name) / "case"
        shutil.copytree(template, folder)
        for file, content in files.items():
            (folder / file).write_bytes(content)
        yield folder


def fuzz_once(
    template: Path,
    args: Sequence[str],
    files: Mapping[str, bytes] | None = None,
    run: Runner = in_process,
) -> None:
    with copy_of(template, files or {}) as folder:
        before = snapshot(folder)
        check(args, run(args, folder), before, folder)


# ----------------------------------------------------------------------------- strategies

# Real command lines and UTF-8 files hold no NUL and no lone surrogate; the rest of unicode
# is fair game.
JUNK = st.text(st.characters(exclude_characters="\0", exclude_categories=["Cs"]), max_size=10)
NAMES = sorted(ALGORITHMS)
PARAM_KEYS = [
    "k", "delta", "rho", "threshold", "direction", "interval", "quantile", "eps", "q",
    "min_answers", "max_answers", "window", "accept_after", "quiz_size", "hidden", "lower",
    "upper", "share_samples", "inclusive", "false_ban", "missed_bad", "seed", "budget",
]  # fmt: skip


def one_in(n: int) -> st.SearchStrategy[bool]:
    """True once in ``n`` draws. sampled_from is even where integers() favours its bounds,
    and its simplest choice (the first, which Hypothesis tries often) gives False."""
    return st.sampled_from(range(n)).map(lambda i: i == n - 1)


def mostly(
    valid: st.SearchStrategy[Any], *invalid: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    """``valid`` three times in four, else one of ``invalid`` (junk when none is given): a case
    needs every part right to get past the first check, and the deep checks matter too."""
    wrong = st.one_of(*invalid) if invalid else JUNK
    return one_in(4).flatmap(lambda pick_wrong: wrong if pick_wrong else valid)


def typed(*strategies: st.SearchStrategy[Any]) -> st.SearchStrategy[str]:
    """Values as typed on a command line."""
    return st.one_of(*(s.map(str) for s in strategies))


K = st.one_of(st.floats(0, 1e3), st.floats(), st.sampled_from([1e200, math.inf, math.nan]))
SEEDS = st.one_of(st.integers(0, 2**63 - 1), st.integers(), st.sampled_from([-1, 2**63]))
ANY_FLOAT = typed(st.floats())
# Valid values stay small, so that every accepted run ends quickly; limits get edge values.
BUDGET = mostly(typed(st.integers(1, 120)), typed(st.integers(-2, 0)), st.just("1e3"),
                typed(st.sampled_from([10**12 + 1, 10**30])))  # fmt: skip
LATENCY = mostly(
    st.sampled_from(["none", "constant:0", "exponential:0.0001"]),
    st.sampled_from(["constant:-1", "exponential:nan", "soon", "constant:", "constant:x", ":"]),
)
RUN_FLAGS: dict[str, st.SearchStrategy[str]] = {
    "--algorithm": mostly(st.sampled_from(NAMES)),
    "--k": mostly(typed(st.floats(0, 6)), typed(K), JUNK),
    "--delta": mostly(typed(st.floats(0.01, 0.5)), ANY_FLOAT, JUNK),
    "--error": mostly(st.sampled_from(["fwer", "fdr", "bayes"])),
    "--q": mostly(typed(st.floats(0.01, 0.5)), ANY_FLOAT, JUNK),
    "--direction": mostly(st.sampled_from(["low", "high"])),
    "--interval": mostly(st.sampled_from(["agresti-coull", "hoeffding", "betting", "kl"])),
    "--quantile": mostly(st.sampled_from(["normal", "paper"])),
    "--rho": mostly(typed(st.floats(0.05, 0.95)), ANY_FLOAT, JUNK),
    "--threshold": mostly(typed(st.floats(0.3, 0.9)), ANY_FLOAT, JUNK),
    "--top": mostly(typed(st.integers(1, 5)), typed(st.integers()), JUNK),
    "--seed": mostly(typed(SEEDS)),
    "--workers": mostly(
        typed(st.integers(2, 12)),
        typed(st.integers(-2, 1)),
        typed(st.sampled_from([100_001, 999_999_999_999])),
        JUNK,
    ),
    "--outliers": mostly(typed(st.integers(0, 2)), typed(st.integers(-2, 13)), JUNK),
    "--rewards": mostly(st.sampled_from(["bernoulli", "beta"])),
    "--latency": LATENCY,
    "--batch-release": mostly(typed(st.integers(1, 3)), typed(st.integers(-1, 0)), JUNK),
    "--concurrency": mostly(
        typed(st.integers(1, 64)), typed(st.sampled_from([0, 100_000, 100_001, 10**9])), JUNK
    ),
    "--timeout": mostly(
        typed(st.floats(1e-6, 1e9)), typed(st.sampled_from([0.0, -1.0, math.nan])), JUNK
    ),
    "--questions": mostly(st.just("bank.csv"), st.sampled_from(["missing.csv", "pool.csv", "."])),
    "--config": st.sampled_from(["missing.toml", "bank.csv"]),
}
PARAM_VALUE = mostly(
    typed(st.integers(0, 40), st.floats(0, 1), st.booleans()),
    typed(st.integers(), st.floats(max_value=1e6)),
    st.sampled_from(["nan", "inf", ""]),
    JUNK,
)


@st.composite
def key_value(draw: st.DrawFn, keys: Sequence[str], values: st.SearchStrategy[str]) -> str:
    return f"{draw(mostly(st.sampled_from(keys)))}={draw(values)}"


@st.composite
def run_args(draw: st.DrawFn, run_id: str) -> list[str]:
    args = ["run", "--db", DB, "--json", "--quiet", "--budget", draw(BUDGET)]
    source = mostly(st.sampled_from(["", "pool.csv"]), st.sampled_from(["missing.csv", "."]))
    args += [name] if (name := draw(source)) else []
    for flag in draw(st.lists(st.sampled_from(sorted(RUN_FLAGS)), max_size=3, unique=True)):
        args += [flag, draw(RUN_FLAGS[flag])]
    for _ in range(draw(st.sampled_from([0, 0, 1, 2]))):
        args += ["-p", draw(key_value(PARAM_KEYS, PARAM_VALUE))]
    if draw(st.booleans()):
        args += draw(oracle_args(run_id))
    if draw(one_in(10)):
        args += ["--resume", draw(mostly(st.just(run_id)))]
    if draw(one_in(10)):  # not --debug: wherever it is typed, it asks for tracebacks
        args += [draw(st.sampled_from(["--nope", "-x", "extra"]))]
    return args


@st.composite
def oracle_args(draw: st.DrawFn, run_id: str) -> list[str]:
    """An oracle and its options; the http oracle only ever at a closed port of 127.0.0.1."""
    oracle = draw(mostly(st.sampled_from(["simulated", "dataset", "log", "http"])))
    args = ["--oracle", oracle]
    if oracle == "http":
        return [*args, "--questions", "bank.csv", "-O", "url=http://127.0.0.1:1",
                "-O", "max_attempts=1"]  # fmt: skip
    options: dict[str, st.SearchStrategy[str]] = {
        "simulated": {
            "latency": LATENCY,
            "batch_release": RUN_FLAGS["--batch-release"],
            "loss": mostly(st.just("0"), st.sampled_from(["-1", "1.5", "x", "nan"])),
            "duplicates": mostly(typed(st.floats(0, 0.5)), ANY_FLOAT, JUNK),
            "retractable": mostly(st.sampled_from(["true", "false"])),
        },
        "dataset": {
            "path": mostly(st.just("data.csv"), st.sampled_from(["pool.csv", "missing.csv"])),
            "replacement": mostly(st.sampled_from(["true", "false"])),
            "min_answers": mostly(typed(st.integers(1, 3)), typed(st.integers(-1, 9)), JUNK),
        },
        "log": {"db": mostly(st.just(DB)), "run": mostly(st.just(run_id))},
    }.get(oracle, {"x": JUNK})
    required = {"dataset": ["path"], "log": ["db", "run"]}.get(oracle, [])
    chosen = draw(st.lists(st.sampled_from(sorted(options)), max_size=3, unique=True))
    for key in dict.fromkeys([*required, *chosen]):
        args += ["-o", f"{key}={draw(options[key])}"]
    return args


@st.composite
def other_args(draw: st.DrawFn, run_id: str) -> list[str]:
    """Every command but run and serve, with their options."""
    run = draw(mostly(st.just(run_id)))
    db = ["--db", draw(mostly(st.sampled_from([DB, f"sqlite:///{DB}"]),
                              st.sampled_from(["missing.db", "pool.csv", "."])))]  # fmt: skip
    json_flag = ["--json"] if draw(st.booleans()) else []
    command = draw(st.sampled_from(["report", "runs", "replay", "export", "invalidate", "other"]))
    if command == "report":
        return ["report", *([run] if draw(st.booleans()) else []), *db, *json_flag]
    if command == "runs":
        return ["runs", *db, *json_flag]
    if command == "replay":
        args = ["replay", run, *db, "--json"]
        if draw(st.booleans()):
            args += ["--algorithm", draw(mostly(st.sampled_from(NAMES)))]
        if draw(st.booleans()):
            args += ["-p", draw(key_value(PARAM_KEYS, PARAM_VALUE))]
        if draw(st.booleans()):
            args += ["--budget", draw(BUDGET)]
        if draw(st.booleans()):
            args += ["--seed", draw(typed(SEEDS))]
        return args
    if command == "export":
        output = draw(mostly(st.just("out.csv"), st.sampled_from(["missing/out.csv", "."])))
        layout = draw(mostly(st.sampled_from(["long", "crowd-kit"])))
        return ["export", run, "-o", output, "--format", layout, *db]
    if command == "invalidate":
        question = draw(mostly(st.sampled_from(["q1", "q2"])))
        key = ["--key", draw(mostly(typed(st.integers(0, 20))))] if draw(st.booleans()) else []
        return ["invalidate", run, question, *key, "--reason", draw(JUNK), *db]
    return draw(st.sampled_from([["upgrade", *db], ["oracles"], ["--version"], ["run", "-h"]]))


# Files: rows of plausible cells, else rows of any cells and widths, else no CSV at all.
NUMBER = typed(st.floats(), st.integers(-(2**53), 2**53))
#: A CSV column's values: (good, bad).
Cell = tuple[st.SearchStrategy[str], st.SearchStrategy[str]]


def cell(good: st.SearchStrategy[str], *bad: st.SearchStrategy[str]) -> Cell:
    return good, st.one_of(*bad) if bad else JUNK


def csv_file(
    header: st.SearchStrategy[list[str]], *cells: Cell, max_rows: int = 16, keyed: bool = True
) -> st.SearchStrategy[bytes]:
    """Mostly good rows of the header's width (distinct first cells when ``keyed``), else
    rows of any cells and widths, else bytes that are no CSV at all."""
    good = st.tuples(*(g for g, _ in cells)).map(list)
    row = st.tuples(*(mostly(g, b) for g, b in cells)).map(list)
    ragged = st.one_of(row, row.map(lambda r: r[:-1]), row.map(lambda r: [*r, "x"]))
    unique = (lambda r: r[0]) if keyed else None
    rows = mostly(
        st.lists(good, min_size=2, max_size=max_rows, unique_by=unique),
        st.lists(ragged, max_size=max_rows),
    )
    written = st.tuples(st.sampled_from(["", "\ufeff"]), header, rows).map(_csv)
    raw = st.one_of(st.binary(max_size=120), JUNK.map(str.encode))
    return mostly(written, raw)


def _csv(parts: tuple[str, list[str], list[list[str]]]) -> bytes:
    bom, header, rows = parts
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return (bom + out.getvalue()).encode()


def columns(*names: str) -> st.SearchStrategy[list[str]]:
    """The right header most of the time, else a partial, mangled or junk one."""
    mangled = st.lists(
        mostly(st.sampled_from([*names, names[0].upper(), f" {names[0]} "])), max_size=len(names)
    )
    return mostly(st.just(list(names)), mangled)


WORKER = cell(st.sampled_from([f"w{i}" for i in range(1, 9)]), st.just(""), JUNK)
POOL_FILES = csv_file(
    columns("worker", "accuracy"), WORKER, cell(typed(st.floats(0, 1)), NUMBER, JUNK)
)
QUESTION_ID = st.sampled_from([f"q{i}" for i in range(12)])
SCORING = st.sampled_from(["exact", "case-insensitive", "numeric", "graded", "NUMERIC"])
TOLERANCE = st.sampled_from(["", "1", "2.5"])  # graded scoring needs a positive one
BANK_COLUMNS = (
    cell(QUESTION_ID, st.just("")),
    cell(JUNK),
    cell(typed(st.integers(0, 9)), NUMBER, JUNK),
    cell(SCORING),
    cell(TOLERANCE, NUMBER, JUNK),
)
# JSON integers stay within 2**53: a longer integer tolerance overflows float() in
# screener.bank.scoring.parse_number, outside this change.
JSON_SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(2**53), 2**53), st.floats(), JUNK)
JSON_VALUE = st.recursive(
    JSON_SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(JUNK, inner),
    max_leaves=6,
)  # fmt: skip
GOOD_QUESTION = st.fixed_dictionaries(
    {"id": QUESTION_ID, "key": st.integers(0, 9)},
    optional={"payload": JSON_VALUE, "scoring": SCORING, "tolerance": st.sampled_from([1, 2.5])},
)
ANY_QUESTION = st.fixed_dictionaries(
    {},
    optional={
        key: mostly(good, JSON_VALUE)
        for key, good in (
            ("id", QUESTION_ID), ("key", st.integers(0, 9)), ("answer", JUNK),
            ("payload", JSON_VALUE), ("scoring", SCORING), ("tolerance", TOLERANCE),
        )
    },
)  # fmt: skip


@st.composite
def bank_file(draw: st.DrawFn) -> tuple[str, bytes]:
    if draw(st.booleans()):
        header = columns("id", "payload", "key", "scoring", "tolerance")
        return "bank.csv", draw(csv_file(header, *BANK_COLUMNS))
    questions = draw(
        mostly(
            st.lists(GOOD_QUESTION, min_size=1, max_size=8, unique_by=lambda q: q["id"]),
            st.lists(st.one_of(ANY_QUESTION, JSON_VALUE), max_size=8),
        )
    )
    layout = draw(mostly(st.sampled_from(["list", "object"]), st.just("junk")))
    data: Any = {"list": questions, "object": {"questions": questions}}.get(layout)
    text = json.dumps(draw(JSON_VALUE) if data is None else data)
    return "bank.json", draw(mostly(st.just(text), JUNK)).encode()


ITEM = cell(st.sampled_from([f"i{i}" for i in range(1, 7)]), st.just(""), JUNK)
LABEL = cell(st.sampled_from(["a", "b", "A "]))
# One gold answer ("a") for every item: gold that differs for one item is an error the reader
# reports, and runs need files it accepts too.
GOLD = cell(st.just("a"), st.sampled_from(["", "b"]), JUNK)
SCORE = cell(st.sampled_from(["0", "1", "0.5"]), NUMBER, JUNK)
DATASETS = [
    (columns("worker", "item", "answer", "gold"), (WORKER, ITEM, LABEL, GOLD)),
    (columns("worker", "item", "correct"), (WORKER, ITEM, SCORE)),
    (columns("task", "worker", "label", "true_label"), (ITEM, WORKER, LABEL, GOLD)),
    (columns("task", "worker", "label"), (ITEM, WORKER, LABEL)),
]


@st.composite
def dataset_files(draw: st.DrawFn) -> tuple[dict[str, bytes], list[str]]:
    header, cells = draw(st.sampled_from(DATASETS))
    files = {"data.csv": draw(csv_file(header, *cells, max_rows=30, keyed=False))}
    options = ["-O", "path=data.csv"]
    if draw(st.booleans()):
        files["gold.csv"] = draw(csv_file(columns("task", "true_label"), ITEM, GOLD))
        options += ["-O", "gold=gold.csv"]
    if draw(st.booleans()):
        options += ["-O", f"replacement={draw(mostly(st.sampled_from(['true', 'false'])))}"]
    if draw(st.booleans()):
        min_answers = draw(mostly(typed(st.integers(1, 3)), typed(st.integers(-1, 9))))
        options += ["-O", f"min_answers={min_answers}"]
    return files, options


# TOML: a run file built from the keys screener knows, values of any type, and junk keys.
TOML_SCALAR = st.one_of(
    st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(), JUNK, st.just("")
)
TOML_VALUE = st.one_of(TOML_SCALAR, st.lists(TOML_SCALAR, max_size=2))
#: Wrong values for keys where a number of the wrong size is no error but a run that never
#: ends: screener.oracles.latency takes any finite number of seconds (1e12 included).
TOML_WRONG = {"latency": st.one_of(JUNK, st.booleans(), st.integers(-5, -1))}
TOP = {
    "workers": st.sampled_from(["pool.csv", "missing.csv", "bank.csv", ""]),
    "questions": st.sampled_from(["bank.csv", "missing.csv", "pool.csv"]),
    "algorithm": mostly(st.sampled_from(NAMES)),
    "seed": SEEDS,
    "budget": st.integers(-2, 80),
    "db": st.sampled_from(["other.db", DB, "", "sub/x.db"]),
}
TABLES: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "params": {
        "k": K, "delta": st.floats(0.01, 0.5), "direction": st.sampled_from(["low", "high"]),
        "threshold": st.floats(0.3, 0.9), "min_answers": st.integers(1, 3),
        "interval": st.sampled_from(["hoeffding", "agresti-coull", "betting"]),
        **dict.fromkeys(("eps", "q", "rho", "budget", "seed"), st.floats(0, 1)),
    },
    "run": {
        "concurrency": st.one_of(st.integers(1, 64), st.just(10**9)),
        "timeout": st.floats(min_value=1e-3),
        "drain": st.sampled_from([0, 0.001, -1]),
        "max_failures": st.integers(-1, 20),
    },
    "oracle": {
        "name": st.sampled_from(["simulated", "dataset", "log", "nope"]),
        "latency": LATENCY,
        "batch_release": st.integers(-1, 3),
        "path": st.sampled_from(["data.csv", "missing.csv"]),
        "loss": st.sampled_from([0, -1, 2]),
    },
}  # fmt: skip


@st.composite
def toml_file(draw: st.DrawFn) -> bytes:
    if draw(one_in(10)):
        return draw(JUNK).encode()
    document: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(sorted(TOP)), max_size=4, unique=True)):
        document[key] = draw(mostly(TOP[key], TOML_VALUE))
    for table in draw(st.lists(st.sampled_from(sorted(TABLES)), max_size=3, unique=True)):
        choices = TABLES[table]
        keys = draw(st.lists(mostly(st.sampled_from(sorted(choices))), max_size=3, unique=True))
        document[table] = {
            key: draw(
                mostly(choices[key], TOML_WRONG.get(key, TOML_VALUE))
                if key in choices
                else TOML_VALUE
            )
            for key in keys
        }
    if draw(one_in(10)):
        document[draw(JUNK)] = draw(TOML_VALUE)
    return toml_text(document).encode()


def toml_text(document: Mapping[str, Any]) -> str:
    scalars = [f"{toml_key(k)} = {toml_value(v)}\n" for k, v in document.items()
               if not isinstance(v, dict)]  # fmt: skip
    tables = [
        f"[{toml_key(k)}]\n" + "".join(f"{toml_key(i)} = {toml_value(j)}\n" for i, j in v.items())
        for k, v in document.items()
        if isinstance(v, dict)
    ]
    return "".join(scalars) + "".join(tables)


def toml_key(key: str) -> str:
    return json.dumps(key, ensure_ascii=False)


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)  # repr: inf, -inf, 1e+300
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


RUN_TAIL = ["--budget", "40", "--db", DB, "--json", "--quiet"]


# ----------------------------------------------------------------------------- properties


@settings(FUZZ, max_examples=EXAMPLES["run"])
@given(data=st.data())
def test_run_with_generated_arguments(template: tuple[Path, str], data: st.DataObject) -> None:
    folder, run_id = template
    fuzz_once(folder, data.draw(run_args(run_id), label="args"))


@settings(FUZZ, max_examples=EXAMPLES["other"])
@given(data=st.data())
def test_other_commands_with_generated_arguments(
    template: tuple[Path, str], data: st.DataObject
) -> None:
    folder, run_id = template
    fuzz_once(folder, data.draw(other_args(run_id), label="args"))


@settings(FUZZ, max_examples=EXAMPLES["pool"])
@given(content=POOL_FILES)
def test_generated_pool_files(template: tuple[Path, str], content: bytes) -> None:
    fuzz_once(template[0], ["run", "fuzzed.csv", *RUN_TAIL], {"fuzzed.csv": content})


@settings(FUZZ, max_examples=EXAMPLES["bank"])
@given(file=bank_file())
def test_generated_question_banks(template: tuple[Path, str], file: tuple[str, bytes]) -> None:
    name, content = file
    args = ["run", "pool.csv", "--questions", name, *RUN_TAIL]
    fuzz_once(template[0], args, {name: content})


@settings(FUZZ, max_examples=EXAMPLES["dataset"])
@given(dataset=dataset_files())
def test_generated_datasets(
    template: tuple[Path, str], dataset: tuple[dict[str, bytes], list[str]]
) -> None:
    files, options = dataset
    fuzz_once(template[0], ["run", "--oracle", "dataset", *options, *RUN_TAIL], files)


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


def test_the_readme_states_this_corpus() -> None:
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    readme = " ".join(text.split())
    in_process = sum(EXAMPLES.values())
    assert f"checks this on {CORPUS:,} cases" in readme
    assert f"{in_process:,} cases run in-process" in readme
    assert f"{2 * SUBPROCESS_EXAMPLES} as real subprocesses" in readme
