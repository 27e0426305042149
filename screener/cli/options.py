"""The options several commands take, each declared once (the shape of sqlite-utils'
``output_options``): a decorator adds a group of options to a command and hands the command
their values as one object (AlgorithmSettings, OracleSettings, Output), holding only what was
typed on the command line where a run file or a logged run may say otherwise.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

import click
from click.core import ParameterSource

from screener.algorithms import ALGORITHMS, parameter_choices
from screener.algorithms.ksigma import HEURISTIC_INTERVALS
from screener.cli.output import Output, output_settings
from screener.errors import ConfigError
from screener.files import STDIO
from screener.money import Prices
from screener.oracles.simulated import SimulatedOracle
from screener.orchestrator import RunOptions
from screener.reports import FORMATS, ONLY
from screener.runs.run_file import parse_value
from screener.runs.settings import (
    BAR_ALGORITHMS,
    DEFAULT_ALGORITHM,
    DEFAULT_JOB,
    DEFAULT_ORACLE,
    DEFAULT_OUTLIERS,
    DEFAULT_SEED,
    PARAMETER_DEFAULTS,
    AlgorithmSettings,
    MoneySettings,
    OracleSettings,
)

__all__ = [
    "DB_ENV",
    "DEFAULT_DB",
    "FILE",
    "SyntheticPool",
    "algorithm_options",
    "algorithm_spec",
    "cannot_listen",
    "db_option",
    "given_beside",
    "given_on_command_line",
    "json_option",
    "key_values",
    "listen_options",
    "money_options",
    "option_group",
    "oracle_options",
    "output_file_option",
    "output_options",
    "param_spec",
    "price_spec",
    "refuse_beside_resume",
    "run_options",
    "seed_spec",
    "synthetic_pool_options",
]

#: A file argument or option (not a directory), read as a Path.
FILE = click.Path(dir_okay=False, path_type=Path)

#: What a click.option call returns: it adds options to a command.
Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]
#: One option as click.option's arguments: its declarations and its settings.
Spec = tuple[tuple[str, ...], dict[str, Any]]

DEFAULT_DB = "screener.db"
#: The environment variable that sets --db (below a run file's `db`, above the default).
DB_ENV = "SCREENER_DB"


def given_on_command_line(name: str) -> bool:
    """Whether option ``name`` of the running command was typed (not its default, nor its
    environment variable: a run file's value wins over those)."""
    source = click.get_current_context().get_parameter_source(name)
    return source not in (None, ParameterSource.DEFAULT, ParameterSource.ENVIRONMENT)


def refuse_beside_resume(run_id: str, allowed: frozenset[str], alternative: str) -> None:
    """``--resume`` continues a run with the settings it started with: an option typed beside
    it that is not ``allowed`` (where the run is, how to show it) is refused by name rather
    than silently ignored."""
    given = given_beside(allowed)
    if given:
        names = ", ".join(given)
        raise ConfigError(
            f"--resume continues run {run_id} with the settings it started with, so {names} "
            "cannot be given",
            f"drop {names}, {alternative}",
        )


def given_beside(allowed: frozenset[str]) -> list[str]:
    """The options typed on the command line that are not ``allowed``, by their flags: the
    rule of every option that continues what was started with settings of its own
    (``--resume``, and ``gate --pool`` joining a pool)."""
    context = click.get_current_context()
    return [
        param.opts[0] if isinstance(param, click.Option) else param.human_readable_name
        for param in context.command.params
        if param.name not in allowed
        and context.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE
    ]


def key_values(items: Sequence[str], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` options (-p, -O) as a dict, values read by run_file.parse_value."""
    values: dict[str, Any] = {}
    given: dict[str, str] = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key.strip():
            raise click.UsageError(f"{flag} takes KEY=VALUE, got {item!r}")
        name = key.strip().replace("-", "_")
        if name in given:
            raise click.UsageError(f"{flag} {given[name]} and {flag} {item} both set {name}")
        given[name] = item
        values[name] = parse_value(text.strip())
    return values


def _stack(specs: Sequence[Spec]) -> Decorator:
    """The options of ``specs``, in that order on the command's --help."""

    def decorator(command: Callable[..., Any]) -> Callable[..., Any]:
        for decls, attrs in reversed(specs):
            command = click.option(*decls, **attrs)(command)
        return command

    return decorator


def option_group(
    into: str, build: Callable[[dict[str, Any]], Any], specs: Sequence[Spec]
) -> Decorator:
    """The options of ``specs``, handed to the command as one argument ``into``: what
    ``build`` makes of their values (run inside the command's context, so that it can ask
    which were typed)."""
    names = [click.Option(list(decls)).name for decls, _ in specs]

    def decorator(command: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names if name is not None}
            return command(*args, **kwargs, **{into: build(values)})

        return _stack(specs)(wrapper)

    return decorator


def _given(values: dict[str, Any]) -> dict[str, Any]:
    return {name: value for name, value in values.items() if given_on_command_line(name)}


def _json(help_text: str) -> Spec:
    return ("--json", "as_json"), {"is_flag": True, "help": help_text}


def _output_file(help_text: str) -> Spec:
    return ("--output", "-o"), {
        "type": click.Path(dir_okay=False, allow_dash=True, path_type=Path), "default": STDIO,
        "show_default": True, "metavar": "FILE", "help": help_text,
    }  # fmt: skip


def json_option(help_text: str) -> Decorator:
    """``--json``: the command's output as JSON."""
    return _stack([_json(help_text)])


def output_file_option(help_text: str) -> Decorator:
    """``-o/--output FILE``: the one meaning of -o in every command (- is standard output)."""
    return _stack([_output_file(help_text)])


#: Where a server listens (`serve`, `gate`): ``host`` and ``port``.
listen_options = _stack([
    (("--host",), dict(default="127.0.0.1", show_default=True, help="Address to listen on.")),
    (("--port",), dict(type=click.IntRange(0, 65535), default=0, show_default=True,
                       help="Port (0: any free one; the URL is printed).")),
])  # fmt: skip


def cannot_listen(host: str, port: int, error: OSError) -> ConfigError:
    """The one line for a server that cannot listen (the port is taken, the host is not
    this machine's...)."""
    return ConfigError(
        f"cannot listen on {host}:{port}: {error.strerror or error}",
        "choose another --host or --port; --port 0 takes any free one",
    )


db_option = click.option(
    "--db", default=DEFAULT_DB, show_default=True, envvar=DB_ENV, show_envvar=True,
    help="Run database: a path or SQLAlchemy URL.",
)  # fmt: skip


def _output(values: dict[str, Any]) -> Output:
    return output_settings(**values)


#: The report's options (`run`, `report`): handed to the command as ``out``, an Output.
output_options = option_group("out", _output, [
    (("--format", "output_format"), dict(
        type=click.Choice(FORMATS), default="table", show_default=True,
        help="table (fitted to the terminal; COLUMNS overrides its width), json, or csv "
        "(one row per worker).")),
    _json("The same as --format json."),
    (("--only",), dict(type=click.Choice(ONLY), default=None,
                       help="List only the decided or the undecided workers, or those the "
                       "run bans or accepts (what a platform blocks or qualifies).")),
    (("--limit",), dict(type=click.IntRange(min=1), default=None, metavar="N",
                        help="List only the first N workers by rank.")),
    (("--html",), dict(
        type=FILE, default=None, metavar="FILE",
        help="Also write the report as one self-contained HTML page with plots (opens "
        "offline; needs crowd-screener[html]; - for standard output, with -o FILE).")),
    _output_file("Write the report to FILE instead of standard output."),
])  # fmt: skip


#: Flags that set one algorithm parameter each (any other: -p KEY=VALUE).
_PARAMETER_FLAGS: list[Spec] = [
    (("--k",), dict(type=float, default=None, help="k of the k-sigma rule (default: the "
                    "algorithm's; `screener algorithms NAME`).")),
    (("--delta",), dict(
        type=float, default=None,
        help="Allowed error probability (default: the algorithm's, e.g. 0.1 for the "
        "k-sigma family, 0.05 for confident-thresholding; `screener algorithms NAME`).")),
    (("--q",), dict(type=float, default=None, help="Allowed share of wrong decisions for "
                    "--error fdr and bayes (default 0.1).")),
    (("--direction",), dict(
        type=click.Choice(["low", "high"]), default=PARAMETER_DEFAULTS["direction"],
        show_default=True, help="low: abnormally low accuracy (spammers); high: abnormally "
        "high (for the algorithms that take a direction).")),
    (("--interval",), dict(
        type=click.Choice(parameter_choices("interval")), default=None,
        help="Confidence intervals (default: the algorithm's own, a valid bound; each "
        "algorithm's docstring lists the ones it takes). Heuristic, delta not "
        f"guaranteed: {', '.join(HEURISTIC_INTERVALS)} (and --quantile paper).")),
    (("--quantile",), dict(type=click.Choice(parameter_choices("quantile")), default=None,
                           help="Normal quantile rule (paper: as printed in Zhuang 2017).")),
    (("--rho",), dict(type=float, default=None, help="WRR: how many times as often an "
                      "active worker is asked, >= 1 (default rho*); GOLD: the share of normal "
                      "workers, in (0.5, 1) (default 0.9).")),
    (("--threshold",), dict(type=float, default=None, help="Accuracy bar of the "
                            "thresholding algorithms (lsa, confident-thresholding...).")),
]  # fmt: skip
_PARAMETER_NAMES = [click.Option(list(decls)).name for decls, _ in _PARAMETER_FLAGS]


def _algorithm(values: dict[str, Any]) -> AlgorithmSettings:
    given = _given(values)
    return AlgorithmSettings(
        name=given.get("algorithm"),
        params=key_values(values["extra"], "--param"),
        error=given.get("error"),
        top=given.get("top"),
        budget=given.get("budget"),
        seed=given.get("seed"),
        flags={name: given[name] for name in _PARAMETER_NAMES if name in given},
    )


def algorithm_spec(default: str | None, help_text: str) -> Spec:
    """``-a/--algorithm NAME``, a registered algorithm (`run`, `plan`, `replay`, `gate`)."""
    shown = default is not None
    return ("--algorithm", "-a"), dict(type=click.Choice(sorted(ALGORITHMS)), default=default,
                                       show_default=shown, help=help_text)  # fmt: skip


def param_spec(help_text: str) -> Spec:
    """``-p/--param KEY=VALUE``, repeatable, read by ``key_values`` (the same commands)."""
    return ("--param", "-p", "extra"), dict(multiple=True, metavar="KEY=VALUE", help=help_text)


def seed_spec(default: int | None, help_text: str) -> Spec:
    """``--seed N`` (the same commands; ``default``: the command's)."""
    return ("--seed",), dict(type=int, default=default, show_default=default is not None,
                             help=help_text)  # fmt: skip


def algorithm_options(defaults_from: str | None = None) -> Decorator:
    """The algorithm, its parameters, the budget and the seed (`run`, `plan`, `replay`),
    handed to the command as ``algorithm``, an AlgorithmSettings. With ``defaults_from``
    (replay: "the logged run"), the algorithm and seed default to that one's."""
    default_algorithm = None if defaults_from else DEFAULT_ALGORITHM
    default_seed = None if defaults_from else DEFAULT_SEED
    logged = f" (default: {defaults_from}'s)" if defaults_from else ""
    job = " ".join(f"{key}={value}" for key, value in DEFAULT_JOB.items())
    algorithm_help = (
        f"Screening algorithm{logged}." if defaults_from else
        f"Screening algorithm. Without one (nor --error): {DEFAULT_ALGORITHM} with {job}; an "
        "algorithm named runs with its own defaults (`screener algorithms NAME`)."
    )  # fmt: skip
    return option_group("algorithm", _algorithm, [
        algorithm_spec(default_algorithm, algorithm_help),
        (("--error",), dict(
            type=click.Choice(sorted(BAR_ALGORITHMS)), default=None,
            help="Who is below the bar, with which promise: fwer (every decision right at "
            "once, confident-thresholding), fdr (at most a share q of the bans wrong in "
            "expectation, fdr-thresholding) or bayes (the same share, if the crowd prior "
            "fits: crowd-prior).")),
        *_PARAMETER_FLAGS,
        (("--top",), dict(type=int, default=None,
                          help="How many workers to select (adaptive-topk).")),
        param_spec("Any other algorithm parameter, e.g. -p eps=2.5 (repeatable)."),
        (("--budget",), dict(type=int, default=None,
                             help="Stop after this many answered pulls.")),
        seed_spec(default_seed, f"Seed{logged}."),
    ])  # fmt: skip


def _simulated_default(name: str) -> Any:
    """The simulated oracle's default for its option ``name``."""
    return next(option.default for option in SimulatedOracle.OPTIONS if option.name == name)


def _oracle(values: dict[str, Any]) -> OracleSettings:
    given = _given(values)
    simulated = ("rewards", "latency", "batch_release")
    return OracleSettings(
        name=given.get("oracle"),
        options=key_values(values["oracle_extra"], "--oracle-option"),
        simulated={name: given[name] for name in simulated if name in given},
    )


#: The answer source and its options (`run`): handed to the command as ``oracle``, an
#: OracleSettings.
oracle_options = option_group("oracle", _oracle, [
    (("--oracle",), dict(default=DEFAULT_ORACLE, show_default=True, help="Answer source.")),
    (("--oracle-option", "-O", "oracle_extra"), dict(
        multiple=True, metavar="KEY=VALUE",
        help="An oracle option, e.g. -O path=answers.csv (repeatable; see `screener "
        "oracles`).")),
    (("--rewards",), dict(type=click.Choice(["bernoulli", "beta"]),
                          default=_simulated_default("rewards"), show_default=True,
                          help="Simulated answers: binary or graded in [0, 1].")),
    (("--latency",), dict(default=_simulated_default("latency"), show_default=True,
                          help="Simulated latency: none, constant:S or exponential:S "
                          "(seconds).")),
    (("--batch-release",), dict(type=int, default=_simulated_default("batch_release"),
                                show_default=True,
                                help="Simulated answers are released in groups of this size.")),
])  # fmt: skip


def _money(values: dict[str, Any]) -> MoneySettings:
    given = _given(values)
    return MoneySettings(price=given.get("price"), budget=given.get("budget_money"))


def price_spec(default: str | None, help_text: str) -> Spec:
    """``--price gold=P,task=P``, read by ``screener.money.Prices.parse`` (`run`, `plan`,
    `gate`; ``default``: the command's)."""
    return ("--price",), dict(default=default, show_default=default is not None,
                              metavar="gold=P,task=P", help=help_text)  # fmt: skip


#: What questions cost and a budget in money (`run`, `plan`): handed to the command as
#: ``money``, a MoneySettings holding the flags typed.
money_options = option_group("money", _money, [
    price_spec(None, "What a gold question (and a real task) costs, in any currency: "
               "progress, plan and report show the money beside the questions (a run file: "
               f"[price]). gold= is required; task= defaults to {Prices().task:g}."),
    (("--budget-money",), dict(
        type=float, default=None, metavar="AMOUNT",
        help="The budget in money: at most AMOUNT / the gold price gold questions "
        "(instead of --budget; needs --price).")),
])  # fmt: skip

_RUN_DEFAULTS = RunOptions()
#: How a run talks to its oracle (`run`): handed to the command as ``options``, the
#: RunOptions fields typed.
run_options = option_group("options", _given, [
    (("--concurrency",), dict(type=int, default=_RUN_DEFAULTS.concurrency, show_default=True,
                              help="Questions in flight at once.")),
    (("--timeout",), dict(
        type=float, default=_RUN_DEFAULTS.timeout, show_default=True,
        help="Seconds before an unanswered question is given up and asked again.")),
])  # fmt: skip


class SyntheticPool(NamedTuple):
    """``--workers N --outliers M``: a synthetic pool of N workers (None: not asked for), M
    of them of low accuracy."""

    workers: int | None
    outliers: int


def synthetic_pool_options(workers_help: str) -> Decorator:
    """``--workers N --outliers M``: a synthetic pool (`run`, `plan`), handed to the command
    as ``synthetic``, a SyntheticPool."""
    return option_group("synthetic", lambda v: SyntheticPool(v["n_workers"], v["n_outliers"]), [
        (("--workers", "n_workers"), dict(type=int, default=None, help=workers_help)),
        (("--outliers", "n_outliers"), dict(type=int, default=DEFAULT_OUTLIERS,
                                            show_default=True,
                                            help="Low-accuracy workers in the synthetic pool.")),
    ])  # fmt: skip
