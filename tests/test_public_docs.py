"""Every public class and function of the user-facing namespaces (DOCUMENTED_MODULES) shows
its use in a runnable ``Examples`` section (numpy style), which pytest runs as a doctest.

"Public" comes from one place, the ``__all__`` of the modules below; constants and type
aliases in it need no example.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

#: The namespaces whose every exported class and function must have examples.
DOCUMENTED_MODULES = [
    "screener",
    "screener.algorithms",
    "screener.oracles",
    "screener.bank",
    "screener.testing",
    "screener.journal",
    "screener.runs",
]


def public_objects() -> list[tuple[str, object]]:
    found: list[tuple[str, object]] = []
    for module_name in DOCUMENTED_MODULES:
        module = importlib.import_module(module_name)
        for name in module.__all__:
            value = getattr(module, name)
            if inspect.isclass(value) or inspect.isfunction(value):
                found.append((f"{module_name}.{name}", value))
    return found


@pytest.mark.parametrize(("name", "value"), public_objects(), ids=lambda v: str(v))
def test_public_api_has_a_runnable_example(name: str, value: object) -> None:
    doc = inspect.getdoc(value) or ""
    assert "\nExamples\n--------\n" in doc, f"{name} has no numpy-style Examples section"
    examples = doc.split("\nExamples\n--------\n", 1)[1]
    assert ">>> " in examples, f"{name}'s Examples section has no >>> line"
