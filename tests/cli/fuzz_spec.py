"""What an accepted command line must have stored: every value given, exactly (read back
from ``screener report --json``'s run_spec, or ``plan --json``'s summary), and no option the
algorithm or the answer source does not use. Derived from the arguments alone, with the rules
the docs state (docs/running.md, docs/reliability.md); a value that one of two settings
overrode, or that was dropped, shows up as a mismatch."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from screener.money import Prices
from screener.oracles.latency import Latency
from screener.runs.run_file import parse_value
from screener.runs.session import RUN_DATABASE
from screener.runs.settings import BAR_ALGORITHMS

#: Flags that set one algorithm parameter each, and how their text is read.
FLOAT_PARAMS = ("--k", "--delta", "--q", "--rho", "--threshold")
TEXT_PARAMS = ("--direction", "--interval", "--quantile")
#: The algorithms with the k-sigma base's interval options.
KSIGMA = ("rr", "wrr", "nrr", "ib")
#: The best-K algorithms (docs/algorithms.md), the only ones --top applies to.
TOP_K = ("adaptive-topk", "optmai", "clucb-pac")


def pairs(args: Sequence[str]) -> Iterator[tuple[str, str]]:
    """(option, value) for each option that takes a value, in order (flags skipped)."""
    flags = {"--json", "--quiet", "-q", "-v", "--debug", "--reorder", "-h", "--help"}
    tokens = iter(args[1:])
    for token in tokens:
        if token.startswith("-") and token not in flags:
            yield token, next(tokens, "")


def expected(args: Sequence[str]) -> dict[tuple[str, ...], Any]:
    """Where in the stored spec each value given must be found (run_spec's layout)."""
    given = dict(pairs(args))
    want: dict[tuple[str, ...], Any] = {}
    for option, value in pairs(args):
        name = option.lstrip("-").replace("-", "_")
        if option in FLOAT_PARAMS:
            want["params", name] = float(value)
        elif option in TEXT_PARAMS:
            want["params", name] = value
        elif option in ("--top", "--budget"):
            want["params", "k" if option == "--top" else "budget"] = int(value)
        elif option == "--budget-money":
            want["params", "budget"] = Prices.parse(given["--price"]).questions(float(value))
        elif option == "--seed":
            want["seed",] = want["params", "seed"] = int(value)
        elif option == "-p":
            key, _, text = value.partition("=")
            want["params", key.strip().replace("-", "_")] = parse_value(text.strip())
        elif option in ("--rewards", "--latency", "--batch-release"):
            want["oracle", "options", name] = _oracle_value(name, value, given)
        elif option == "-O":
            key, _, text = value.partition("=")
            key = key.strip().replace("-", "_")
            want["oracle", "options", key] = _oracle_value(key, text.strip(), given)
        elif option in ("--concurrency", "--timeout"):
            want["options", name] = (int if name == "concurrency" else float)(value)
        elif option in ("--algorithm", "-a"):
            want["algorithm",] = value
        elif option == "--error":
            want["algorithm",] = BAR_ALGORITHMS[value]
        elif option == "--oracle":
            want["oracle", "name"] = value
    return want


def _oracle_value(name: str, text: str, given: Mapping[str, str]) -> Any:
    if name == "latency":
        return str(Latency.parse(text))
    if name == "db" and text == given.get("--db"):
        return RUN_DATABASE  # a log replay of the run's own database
    return text if name == "rewards" else parse_value(text)


def check_spec(
    args: Sequence[str],
    spec: Mapping[str, Any],
    kept: Callable[[tuple[str, ...]], bool] = lambda path: True,
) -> None:
    """Every value given (whose place in the spec is ``kept``) is stored as given, and none
    is infinite or NaN."""
    for path, value in expected(args).items():
        if not kept(path):
            continue
        stored: Any = spec
        for key in path:
            assert isinstance(stored, Mapping) and key in stored, (path, spec)
            stored = stored[key]
        assert _same(stored, value), (path, stored, value)
    unused = unused_option(args, str(spec["algorithm"]), spec)
    assert unused is None, f"accepted an option it does not use: {unused}"


def _same(stored: Any, value: Any) -> bool:
    """Equal, and not a non-finite number (no setting documents one as a value it takes)."""
    if isinstance(value, float) and not math.isfinite(value):
        return False
    return bool(stored == value)


def unused_option(args: Sequence[str], algorithm: str, spec: Mapping[str, Any]) -> str | None:
    """An option the docs say this algorithm or answer source does not use, if given."""
    given = expected(args)
    params = spec.get("params", {})
    paper = ("params", "quantile") in given and params.get("quantile") == "paper"
    if paper and algorithm in KSIGMA and params.get("interval") != "agresti-coull":
        return f"quantile=paper with {algorithm}'s {params.get('interval')} intervals"
    if algorithm == "ade" and {("params", "interval"), ("params", "quantile")} & set(given):
        return "--interval or --quantile with ade"
    if "--top" in dict(pairs(args)) and algorithm not in TOP_K:
        return f"--top with {algorithm}"
    options = spec.get("oracle", {}).get("options", {})
    if ("oracle", "options", "concentration") in given and options.get("rewards") != "beta":
        return "concentration without beta rewards"
    return None


def check_money(
    args: Sequence[str], money: Mapping[str, Any] | None, *, shows_budget: bool = True
) -> None:
    """Money in a run's report or a plan: the gold price as given (exactly), the budget in
    money as what the whole questions it pays for cost, every amount a finite number; none
    without a price. A plan (``shows_budget`` False) shows its budget in questions only."""
    given = dict(pairs(args))
    if "--price" not in given:
        assert money is None, money
        return
    gold = Prices.parse(given["--price"]).gold
    assert money is not None and money["gold_price"] == gold
    if "--budget-money" in given and shows_budget:  # as what the questions it buys cost
        amount = float(given["--budget-money"])
        assert money["budget"] <= amount * (1 + 1e-9) < money["budget"] + gold, money
    assert all(math.isfinite(value) for value in _amounts(money)), money


def _amounts(tree: Any) -> Iterator[float]:
    """Every number in a nest of mappings."""
    if isinstance(tree, Mapping):
        for value in tree.values():
            yield from _amounts(value)
    elif isinstance(tree, int | float) and not isinstance(tree, bool):
        yield float(tree)
