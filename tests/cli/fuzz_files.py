"""Hypothesis strategies for the fuzz suite's files (tests/cli/test_fuzz.py): pool, question
bank (CSV, JSON), dataset (both layouts, gold files) and run (TOML) files, mostly malformed,
with non-finite numbers where a number goes."""

from __future__ import annotations

import csv
import io
import json
import math
from collections.abc import Mapping
from typing import Any

from fuzz_running import DB
from fuzz_strategies import JUNK, LATENCY, NAMES, SEEDS, K, mostly, one_in, typed
from hypothesis import strategies as st

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
TOML_WRONG = {
    "latency": st.one_of(JUNK, st.booleans(), st.integers(-5, -1), st.just("constant:inf"))
}
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
