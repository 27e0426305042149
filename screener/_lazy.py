"""A package's public names, imported when first read (PEP 562): ``import screener.x`` then
pays only for what ``x`` needs, so a plan or a simulation never loads the journal's database
driver nor the HTTP client.

Where each name lives is the package's ``if TYPE_CHECKING:`` block of ``from module import
name as name`` lines: type checkers read it as the re-exports, and ``attach`` reads the same
lines from the source. The package's literal ``__all__`` (what the API reference lists) must
name exactly those: ``attach`` refuses to load a package where the two differ.
"""

from __future__ import annotations

import ast
import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["attach", "exported_names"]


def attach(
    package: str, init_file: str, public: list[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package`` (its ``__name__``), whose
    ``__init__.py`` is ``init_file`` (its ``__file__``) and whose ``__all__`` is ``public``."""
    homes = exported_names(Path(init_file).read_text(encoding="utf-8"))
    if sorted(public) != sorted(homes):
        raise ImportError(
            f"{package}: __all__ and its TYPE_CHECKING imports differ by "
            f"{sorted(set(public) ^ set(homes))}"
        )

    def __getattr__(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home[0]), home[1])
        setattr(sys.modules[package], name, value)  # read once: the next read is a plain one
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *homes})

    return __getattr__, __dir__


def exported_names(source: str) -> dict[str, tuple[str, str]]:
    """Each name imported in ``source``'s ``if TYPE_CHECKING:`` blocks: (module, name there).

    >>> exported_names("if TYPE_CHECKING:\\n    from a.b import C as C, d as e\\n")
    {'C': ('a.b', 'C'), 'e': ('a.b', 'd')}
    """
    homes: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"):
            continue
        for line in node.body:
            if isinstance(line, ast.ImportFrom) and line.module and not line.level:
                for alias in line.names:
                    homes[alias.asname or alias.name] = (line.module, alias.name)
    return homes
