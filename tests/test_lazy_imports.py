"""Packages that import their public names when first read (screener._lazy): every name
resolves to the object of its home module, a package whose __all__ and TYPE_CHECKING block
differ refuses to load, and the commands that simulate start without the journal's driver
or the HTTP client."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from screener import _lazy

LAZY_PACKAGES = (
    "screener",
    "screener.journal",
    "screener.orchestrator",
    "screener.runs",
    "screener.testing.doubles",
)


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_is_its_home_modules_object(package: str) -> None:
    module = importlib.import_module(package)
    homes = _lazy.exported_names(Path(str(module.__file__)).read_text(encoding="utf-8"))
    assert sorted(homes) == sorted(module.__all__)
    for name, (home, original) in homes.items():
        assert getattr(module, name) is getattr(importlib.import_module(home), original), name
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        _ = module.not_a_name


def test_a_package_whose_all_and_imports_differ_is_refused(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text("if TYPE_CHECKING:\n    from math import pi as pi\n", encoding="utf-8")
    with pytest.raises(ImportError, match=r"differ by \['pi', 'tau'\]"):
        _lazy.attach("example", str(init), ["tau"])
    getattr_, _ = _lazy.attach("math", str(init), ["pi"])
    assert getattr_("pi") == pytest.approx(3.14159, abs=1e-5)


def loaded_modules_after(statement: str) -> set[str]:
    """Every module (dotted names) a fresh interpreter holds after ``statement``."""
    probe = f"import sys; {statement}; print(' '.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return set(out.split())


def loaded_after(statement: str) -> set[str]:
    """The top-level modules a fresh interpreter holds after ``statement``."""
    return {name.split(".")[0] for name in loaded_modules_after(statement)}


@pytest.mark.subprocess
@pytest.mark.parametrize(
    "statement",
    [
        "import screener; screener.simulate",
        "import screener.runs.planning",
        "from screener.cli.main import cli; cli.get_command(None, 'plan')",
    ],
)
def test_simulating_loads_neither_the_database_driver_nor_the_http_client(statement: str) -> None:
    loaded = loaded_after(statement)
    assert "numpy" in loaded  # the probe ran
    assert not loaded & {"sqlalchemy", "sqlmodel", "aiohttp"}, statement


@pytest.mark.subprocess
def test_a_run_still_loads_the_journal() -> None:
    loaded = loaded_after("from screener.cli.main import cli; cli.get_command(None, 'run')")
    assert "sqlalchemy" in loaded  # the journal


@pytest.mark.subprocess
def test_help_lists_every_command_importing_none() -> None:
    from screener.cli.commands import COMMANDS

    shown = (
        "from screener.cli.main import main\ntry:\n    main(['--help'])\nexcept SystemExit: pass"
    )
    loaded = loaded_modules_after(f"exec({shown!r})")
    assert "click" in loaded  # the probe ran
    homes = {entry.target.partition(":")[0] for entry in COMMANDS.values()}
    assert not loaded & homes
    assert not {name.split(".")[0] for name in loaded} & {"numpy", "sqlalchemy", "aiohttp"}
    listing = subprocess.run(
        [sys.executable, "-m", "screener", "--help"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "COLUMNS": "200"},
    ).stdout
    for name, entry in COMMANDS.items():
        assert f"  {name} " in listing and entry.summary in listing, name


def test_each_command_carries_the_summary_help_lists() -> None:
    from screener.cli.commands import COMMANDS, every_command
    from screener.cli.main import cli

    commands = every_command(cli)
    assert set(commands) == set(COMMANDS)
    for name, command in commands.items():
        assert command.short_help == COMMANDS[name].summary, name
