"""Hypothesis strategies for the fuzz suite's command lines (tests/cli/test_fuzz.py): every
command with mixes of valid and invalid options, non-finite numbers wherever a number goes,
money and prices (budgets that overflow, price lists half given or past the float limit),
output paths (missing folders, one file named twice, standard output), and run databases of
every kind (screener's, another application's, empty, read-only, URLs with query strings or a
password)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from fuzz_running import DB, PASSWORD
from hypothesis import strategies as st
from liar_service import MODES

from screener.algorithms import ALGORITHMS

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
#: Numbers no finite setting takes, as typed: NaN, infinities, and a float past the largest.
NON_FINITE = st.sampled_from(["nan", "inf", "-inf", "1e400", "NaN", "Infinity"])
ANY_FLOAT = st.one_of(typed(st.floats()), NON_FINITE)
# Valid values stay small, so that every accepted run ends quickly; limits get edge values.
BUDGET = mostly(typed(st.integers(1, 120)), typed(st.integers(-2, 0)), st.just("1e3"),
                typed(st.sampled_from([10**12 + 1, 10**30])))  # fmt: skip
#: --price lists: valid ones name the gold price (0.05 or more, so that a budget in money
#: keeps accepted runs short); the rest half given, past the cap or the float limit, malformed.
PRICE = mostly(
    st.builds(
        lambda gold, task: f"gold={gold}" + (f",task={task}" if task else ""),
        typed(st.floats(0.05, 1)),
        st.one_of(st.just(""), typed(st.floats(0.001, 1))),
    ),
    st.sampled_from(["task=0.03", "gold=1e308", "gold=0.05,task=1e300", "gold=1e9,task=1e10",
                     "gold=0", "gold=-1", "gold=inf", "gold=nan", "gold", "", "silver=1",
                     "gold=0.1,gold=0.2", "gold=1e-300"]),
    JUNK,
)  # fmt: skip
#: --budget-money amounts: small ones, non-finite ones, and ones that buy too many questions.
MONEY = mostly(
    typed(st.floats(0.05, 6)),
    NON_FINITE,
    typed(st.sampled_from([0.0, -1.0, 1e-9, 1e100, 1e308])),
    JUNK,
)
#: Where a report or the decisions go: a file, standard output, a folder that does not
#: exist, a folder, a read-only folder.
OUTPUT = mostly(
    st.sampled_from(["out.txt", "-"]), st.sampled_from(["missing/out.txt", ".", "ro/out.txt"])
)
DECISIONS_FILE = mostly(
    st.sampled_from(["decisions.jsonl", "-"]),
    st.sampled_from(["out.txt", "missing/decisions.jsonl", "."]),
)
LATENCY = mostly(
    st.sampled_from(["none", "constant:0", "exponential:0.0001"]),
    st.sampled_from(["constant:-1", "exponential:nan", "soon", "constant:", "constant:x", ":",
                     "constant:inf", "constant:1e400", "exponential:inf", "inf"]),
)  # fmt: skip
RUN_FLAGS: dict[str, st.SearchStrategy[str]] = {
    "--algorithm": mostly(st.sampled_from(NAMES)),
    "--k": mostly(typed(st.floats(0, 6)), typed(K), NON_FINITE, JUNK),
    "--delta": mostly(typed(st.floats(0.01, 0.5)), ANY_FLOAT, JUNK),
    "--error": mostly(st.sampled_from(["fwer", "fdr", "bayes"])),
    "--q": mostly(typed(st.floats(0.01, 0.5)), ANY_FLOAT, JUNK),
    "--direction": mostly(st.sampled_from(["low", "high"])),
    "--interval": mostly(st.sampled_from(["agresti-coull", "hoeffding", "betting", "kl"])),
    "--quantile": mostly(st.sampled_from(["normal", "paper"])),
    "--rho": mostly(typed(st.floats(0.05, 0.95), st.floats(1, 5)), ANY_FLOAT, JUNK),
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
        typed(st.floats(1e-6, 1e9)), typed(st.sampled_from([0.0, -1.0])), NON_FINITE, JUNK
    ),
    "--questions": mostly(st.just("bank.csv"), st.sampled_from(["missing.csv", "pool.csv", "."])),
    "--config": st.sampled_from(["missing.toml", "bank.csv"]),
}
PARAM_VALUE = mostly(
    typed(st.integers(0, 40), st.floats(0, 1), st.booleans()),
    typed(st.integers(), st.floats(max_value=1e6)),
    NON_FINITE,
    st.just(""),
    JUNK,
)


#: Run databases that are not a plain screener journal (the template folder holds the files).
DATABASES = st.sampled_from([
    "foreign.db", "empty.db", "ro/runs.db", f"sqlite:///{DB}?mode=ro", f"sqlite:///{DB}?timeout=5",
    "sqlite:///missing.db?uri=true", f"postgresql+psycopg://u:{PASSWORD}@127.0.0.1:abc/x",
    f"postgresql+psycopg://u:{PASSWORD}@127.0.0.1:1/x", "missing.db", "pool.csv", ".",
])  # fmt: skip
DB_OPTION = mostly(st.sampled_from([DB, f"sqlite:///{DB}"]), DATABASES)


@st.composite
def key_value(draw: st.DrawFn, keys: Sequence[str], values: st.SearchStrategy[str]) -> str:
    return f"{draw(mostly(st.sampled_from(keys)))}={draw(values)}"


@st.composite
def budget_args(draw: st.DrawFn) -> list[str]:
    """A budget in questions, or (one in four) in money at a price; sometimes a price alone."""
    if draw(one_in(4)):
        return ["--budget-money", draw(MONEY), "--price", draw(PRICE)]
    price = ["--price", draw(PRICE)] if draw(one_in(4)) else []
    return ["--budget", draw(BUDGET), *price]


@st.composite
def output_args(draw: st.DrawFn) -> list[str]:
    """Where `run` writes its report (-o) and its decisions (--decisions), each sometimes."""
    args = ["-o", draw(OUTPUT)] if draw(one_in(3)) else []
    return args + (["--decisions", draw(DECISIONS_FILE)] if draw(one_in(4)) else [])


@st.composite
def run_args(draw: st.DrawFn, run_id: str) -> list[str]:
    args = ["run", "--db", draw(DB_OPTION), "--json", "--quiet", *draw(budget_args())]
    args += draw(output_args())
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
            "loss": mostly(st.just("0"), st.sampled_from(["-1", "1.5", "x"]), NON_FINITE),
            "rewards": mostly(st.sampled_from(["bernoulli", "beta"])),
            "concentration": mostly(typed(st.floats(0.5, 50)), ANY_FLOAT, JUNK),
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
        args += ["-O", f"{key}={draw(options[key])}"]
    return args


@st.composite
def other_args(draw: st.DrawFn, run_id: str) -> list[str]:
    """Every command but run, plan and serve, with their options."""
    run = draw(mostly(st.just(run_id)))
    db = ["--db", draw(DB_OPTION)]
    json_flag = ["--json"] if draw(st.booleans()) else []
    command = draw(st.sampled_from(
        ["report", "runs", "replay", "export", "invalidate", "decisions", "other"]
    ))  # fmt: skip
    if command == "report":
        output = ["-o", draw(OUTPUT)] if draw(st.booleans()) else []
        return ["report", *([run] if draw(st.booleans()) else []), *db, *json_flag, *output]
    if command == "decisions":
        return ["decisions", *([run] if draw(st.booleans()) else []), *db, *json_flag]
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


@st.composite
def plan_args(draw: st.DrawFn, run_id: str) -> list[str]:
    """`plan` on a pool, a synthetic crowd or a pilot run: few runs, one process."""
    args = ["plan", "--json", *draw(budget_args()), "--processes",
            draw(mostly(st.just("1"), st.sampled_from(["0", "-1", "x"])))]  # fmt: skip
    source = draw(st.sampled_from(["pool", "workers", "like"]))
    if source == "pool":
        args.append(draw(mostly(st.just("pool.csv"), st.sampled_from(["missing.csv", "bank.csv"]))))
    elif source == "workers":
        args += ["--workers", draw(RUN_FLAGS["--workers"])]
    else:
        args += ["--like", draw(mostly(st.just(run_id))), "--db", draw(DB_OPTION)]
    runs = mostly(typed(st.integers(1, 4)), typed(st.sampled_from([0, -1, 10_001])), JUNK)
    args += ["--runs", draw(runs)]
    seeds = mostly(typed(st.integers(0, 2**63 - 1)), typed(st.integers(2**63 - 5, 2**63 + 1)))
    args += ["--seed", draw(seeds)]
    flags = sorted(set(RUN_FLAGS) & {"--algorithm", "--k", "--delta", "--error", "--q",
                                     "--direction", "--interval", "--quantile", "--rho",
                                     "--threshold", "--top"})  # fmt: skip
    for flag in draw(st.lists(st.sampled_from(flags), max_size=3, unique=True)):
        args += [flag, draw(RUN_FLAGS[flag])]
    for _ in range(draw(st.sampled_from([0, 0, 1]))):
        args += ["-p", draw(key_value(PARAM_KEYS, PARAM_VALUE))]
    return args


RATE = mostly(typed(st.floats(0, 0.9)), typed(st.sampled_from([1.0, -0.1, 2.0])), NON_FINITE)
SERVE_FLAGS: dict[str, st.SearchStrategy[str]] = {
    "--questions": mostly(st.just("bank.csv"), st.sampled_from(["missing.csv", "pool.csv"])),
    # Loopback only: a name would be looked up, and no test leaves this machine.
    "--host": mostly(st.just("127.0.0.1"), st.just("::1")),
    "--port": mostly(st.just("0"), typed(st.sampled_from([-1, 65536, 10**9])), JUNK),
    "--latency": LATENCY,
    "--error-rate": RATE,
    "--timeout-rate": RATE,
    "--timeout-delay": mostly(typed(st.floats(0, 5)), typed(st.floats(max_value=-0.1)), NON_FINITE),
    "--duplicate-rate": RATE,
    "--silence-rate": RATE,
    "--slow": mostly(typed(st.floats(0, 0.01)), typed(st.floats(max_value=-0.1)), NON_FINITE),
    "--rate-limit": mostly(typed(st.floats(0, 100)), typed(st.floats(max_value=-0.1)), NON_FINITE),
    "--seed": mostly(typed(SEEDS)),
}


@st.composite
def serve_args(draw: st.DrawFn) -> list[str]:
    """`serve` for a moment (the hidden --stop-after), with a pool, faults and a port."""
    args = ["serve"]
    args += (
        [name]
        if (
            name := draw(
                mostly(
                    st.sampled_from(["", "pool.csv"]), st.sampled_from(["missing.csv", "bank.csv"])
                )
            )
        )
        else []
    )
    for flag in draw(st.lists(st.sampled_from(sorted(SERVE_FLAGS)), max_size=4, unique=True)):
        args += [flag, draw(SERVE_FLAGS[flag])]
    if draw(st.booleans()):
        args.append("--reorder")
    stop = mostly(st.sampled_from(["0.05", "0"]), st.sampled_from(["-1"]), NON_FINITE)
    return [*args, "--stop-after", draw(stop)]


@st.composite
def http_args(draw: st.DrawFn, url: str) -> list[str]:
    """A run against a service that rejects, stalls or lies (liar_service, in the mode the
    URL names), with short timeouts; `http.toml` gives up on a worker after 2 failures."""
    mode = draw(st.sampled_from(sorted(MODES)))
    args = ["run", "pool.csv", "--questions", "bank.csv", "--config", "http.toml",
            "--oracle", "http", "-O", f"url={url}/{mode}", "-O", "request_timeout=0.3",
            "-O", "poll_wait=0.1", "-O", f"max_attempts={draw(st.sampled_from([1, 2]))}",
            "-O", "backoff=0.01", "--budget", draw(typed(st.integers(1, 40))),
            "--db", DB, "--json", "--quiet"]  # fmt: skip
    if draw(one_in(4)):
        args += ["-O", f"delivery={draw(mostly(st.just('webhook')))}"]
    if draw(one_in(3)):
        args += ["--algorithm", draw(st.sampled_from(["wrr", "crowd-prior", "toloka-rule"]))]
        args += ["--threshold", "0.6"] if args[-1] != "wrr" else []
    return args
