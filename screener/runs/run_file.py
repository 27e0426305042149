"""Run files: ``screener run --config run.toml``.

A TOML file holds what the command line would, so a screening job can be kept with its data::

    workers = "workers.csv"        # worker[,accuracy]; omit it to use the oracle's own workers
    questions = "questions.csv"    # the gold question bank (optional)
    algorithm = "wrr"
    seed = 7
    budget = 20000
    db = "runs.db"

    [params]                       # algorithm parameters
    k = 2.0
    direction = "low"

    [oracle]
    name = "http"
    url = "http://127.0.0.1:8080"  # every other key is an oracle option

    [run]
    concurrency = 32
    timeout = 30.0

    [price]                        # what questions cost (any currency)
    gold = 0.05                    # a gold question
    task = 0.05                    # a real task (the gate's; a screening run asks gold only)
    budget = 25.0                  # the budget in money instead: 500 gold questions here

Relative paths are relative to the file. Command-line options given explicitly win.
"""

from __future__ import annotations

import contextlib
import dataclasses
import tomllib
import typing
from dataclasses import dataclass, field
from pathlib import Path
from types import NoneType
from typing import Any, TypeVar

from screener.errors import ConfigError
from screener.files import is_stdio, read_text, source_name
from screener.orchestrator import RunOptions

__all__ = ["RunConfig", "load_run_config", "parse_value"]

_TOP_LEVEL = {
    "workers",
    "questions",
    "algorithm",
    "seed",
    "budget",
    "db",
    "params",
    "oracle",
    "run",
    "price",
}
#: The [price] table's keys: the prices (screener.money.Prices) and a budget in money.
_PRICE_KEYS = {"gold", "task", "budget"}


def _field_types(options: type) -> dict[str, type]:
    """A dataclass's fields and their types, ``X | None`` read as X."""
    hints = typing.get_type_hints(options)
    return {
        f.name: next(
            t for t in typing.get_args(hints[f.name]) or (hints[f.name],) if t is not NoneType
        )
        for f in dataclasses.fields(options)
    }


#: The [run] table's keys and their types: RunOptions' fields, so that none is left out.
_RUN_KEYS = _field_types(RunOptions)
#: Run settings that belong at the top of the file, not among the algorithm's [params].
_TOP_LEVEL_ONLY = ("budget", "seed")
_KINDS = {
    str: ("a string", 'quote it: {key} = "..."'),
    int: ("a whole number", "write it without quotes or a decimal point, e.g. {key} = 8"),
    float: ("a number", "write it without quotes, e.g. {key} = 2.5"),
}
T = TypeVar("T")


@dataclass(frozen=True)
class RunConfig:
    """A parsed run file; None means "not set here"."""

    source: Path
    workers: Path | None = None
    questions: Path | None = None
    algorithm: str | None = None
    seed: int | None = None
    budget: int | None = None
    db: str | None = None
    params: dict[str, Any] = field(default_factory=dict)
    oracle: str | None = None
    oracle_options: dict[str, Any] = field(default_factory=dict)
    run: dict[str, Any] = field(default_factory=dict)
    #: The [price] table: ``gold`` and ``task`` prices, ``budget`` (money) if given.
    price: dict[str, float] = field(default_factory=dict)


def load_run_config(path: str | Path) -> RunConfig:
    """Read and check a run file; problems are one ConfigError naming the file and key.
    ``-`` reads standard input (its relative paths are then relative to the current folder)."""
    file = Path(source_name(path))
    try:
        data = tomllib.loads(read_text(path))
    except FileNotFoundError:
        raise ConfigError(f"no config file at {file}", "check the path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read config file {file}: {error}") from None
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{file} is not valid TOML: {error}") from None
    _no_unknown(data, _TOP_LEVEL, str(file))
    base = Path(".") if is_stdio(path) else file.parent
    oracle = _table(data, "oracle", file)
    run = _table(data, "run", file)
    _no_unknown(run, set(_RUN_KEYS), f"{file} [run]")
    run = {key: _typed(run, key, _RUN_KEYS[key], file) for key in run}
    price = _table(data, "price", file)
    _no_unknown(price, _PRICE_KEYS, f"{file} [price]")
    price = {key: _typed(price, key, float, file) for key in price}
    params = _table(data, "params", file)
    for key in _TOP_LEVEL_ONLY:
        if key in params:
            raise ConfigError(
                f"{file} [params]: {key} is a setting of the run, not an algorithm parameter",
                "move it to the top of the file, above the first [table]",
            )
    oracle_name = oracle.pop("name", None)
    return RunConfig(
        source=file,
        workers=_path(data, "workers", base, file),
        questions=_path(data, "questions", base, file),
        algorithm=_typed(data, "algorithm", str, file),
        seed=_typed(data, "seed", int, file),
        budget=_typed(data, "budget", int, file),
        db=_typed(data, "db", str, file),
        params=params,
        oracle=None if oracle_name is None else _typed({"name": oracle_name}, "name", str, file),
        oracle_options=oracle,
        run=run,
        price=price,
    )


def parse_value(text: str) -> Any:
    """A ``KEY=VALUE`` value as typed on a command line: true/false, int, float, else text."""
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    for kind in (int, float):
        with contextlib.suppress(ValueError):
            return kind(text)
    return text


def _no_unknown(data: dict[str, Any], known: set[str], where: str) -> None:
    unknown = sorted(set(data) - known)
    if unknown:
        raise ConfigError(
            f"{where}: unknown key(s) {', '.join(unknown)}", f"known: {', '.join(sorted(known))}"
        )


def _typed(data: dict[str, Any], key: str, kind: type[T], file: Path) -> T | None:
    value = data.get(key)
    if value is None:
        return None
    if isinstance(value, str) and "\0" in value:
        raise ConfigError(f"{file}: {key} holds a NUL character", "remove it")
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        what, fix = _KINDS[kind]
        raise ConfigError(f"{file}: {key} must be {what}, got {value!r}", fix.format(key=key))
    return value


def _table(data: dict[str, Any], key: str, file: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"{file}: {key} must be a table ([{key}])")
    return dict(value)


def _path(data: dict[str, Any], key: str, base: Path, file: Path) -> Path | None:
    value = _typed(data, key, str, file)
    return None if value is None else base / value
