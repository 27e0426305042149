"""One name, one home: a name is imported from the module that defines it (assigns it, or
defines it with ``def`` or ``class``) or from a package's ``__init__`` (which re-exports its
package's public names), never from another module that happens to import it; a module's
``__all__`` lists only what it defines; and a private module or name (``_x``) is imported only
from inside its package. Read from the source (no module is imported), over screener and every
folder that imports it; tests may import a private module (they test it)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import screener

ROOT = Path(screener.__file__).parent
REPOSITORY = ROOT.parent
#: Every folder of the repository whose modules import screener.
FOLDERS = ("screener", "tests", "benchmarks", "plugins", "examples")
SOURCES = sorted(path for folder in FOLDERS for path in (REPOSITORY / folder).rglob("*.py"))
PACKAGE_SOURCES = sorted(ROOT.rglob("*.py"))


def _source(dotted: str, root: Path = REPOSITORY) -> Path | None:
    """The file of module ``dotted`` (a package: its ``__init__``), None if it has none."""
    path = root.joinpath(*dotted.split("."))
    for candidate in (path / "__init__.py", path.with_suffix(".py")):
        if candidate.is_file():
            return candidate
    return None


def _assigned(target: ast.expr) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _assigned(element)
    elif isinstance(target, ast.Starred):
        yield from _assigned(target.value)


def defined_names(tree: ast.Module) -> set[str]:
    """The names a module defines at its top level (inside ``if`` and ``try`` too): assigned,
    ``def``'d or ``class``'d. An import defines nothing."""
    names: set[str] = set()
    blocks = [tree.body]
    while blocks:
        for node in blocks.pop():
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(name for target in node.targets for name in _assigned(target))
            elif isinstance(node, ast.AnnAssign | ast.AugAssign):
                names.update(_assigned(node.target))
            elif isinstance(node, ast.If | ast.Try | ast.With | ast.For | ast.While):
                blocks += [node.body, getattr(node, "orelse", []), getattr(node, "finalbody", [])]
                blocks += [handler.body for handler in getattr(node, "handlers", [])]
    return names


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def _in_screener(module: str | None) -> bool:
    return module is not None and module.split(".")[0] == "screener"


def _imports(tree: ast.Module) -> Iterator[tuple[int, str, list[str]]]:
    """(line, module, names) of every ``from screener... import names``, nested ones too."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and _in_screener(node.module):
            yield node.lineno, str(node.module), [alias.name for alias in node.names]


def borrowed(path: Path, root: Path = REPOSITORY) -> list[str]:
    """``module.name`` for every name ``path`` imports from a module (not a package) that
    does not define it."""
    found = []
    for line, module, names in _imports(_tree(path)):
        source = _source(module, root)
        if source is None or source.name == "__init__.py":
            continue
        defined = defined_names(_tree(source))
        found += [f"line {line}: {module}.{name}" for name in names if name not in defined]
    return found


def foreign_exports(path: Path) -> list[str]:
    """The names of a module's ``__all__`` that it does not define (a package's ``__init__``
    re-exports by design, and is not asked)."""
    if path.name == "__init__.py":
        return []
    tree = _tree(path)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__all__" for target in node.targets
        ):
            listed = [ast.literal_eval(element) for element in ast.walk(node.value)
                      if isinstance(element, ast.Constant)]  # fmt: skip
            return sorted(set(listed) - defined_names(tree))
    return []


def _private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def private_imports(path: Path, root: Path = REPOSITORY) -> list[str]:
    """The private modules and names (a part of the dotted name starting with one ``_``)
    that ``path`` imports from outside their package (a private name's package: its
    module's)."""
    package = ".".join(path.relative_to(root).with_suffix("").parts[:-1])
    found = []
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            home = _source(node.module, root)
            owner = node.module if home is None or home.name == "__init__.py" else (
                node.module.rpartition(".")[0]
            )  # fmt: skip
            modules = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            modules = [m for m in modules if m == node.module or _source(m, root) is not None]
            names = [alias.name for alias in node.names if _private(alias.name)]
            found += [
                f"line {node.lineno}: {node.module}.{name}"
                for name in names
                if f"{node.module}.{name}" not in modules and not _inside(package, owner)
            ]
        elif isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        else:
            continue
        for module in modules:
            parts = module.split(".")
            private = [i for i, part in enumerate(parts) if _private(part)]
            if parts[0] != "screener" or not private:
                continue
            owner = ".".join(parts[: private[0]])
            if not _inside(package, owner):
                found.append(f"line {node.lineno}: {module}")
    return found


def _inside(package: str, owner: str) -> bool:
    return package == owner or package.startswith(owner + ".")


def _id(path: Path) -> str:
    return str(path.relative_to(REPOSITORY))


@pytest.mark.parametrize("path", SOURCES, ids=_id)
def test_names_are_imported_from_their_home(path: Path) -> None:
    wrong = borrowed(path)
    assert not wrong, f"{_id(path)} imports names from a module that only imports them: {wrong}"


@pytest.mark.parametrize("path", PACKAGE_SOURCES, ids=_id)
def test_a_module_exports_only_what_it_defines(path: Path) -> None:
    foreign = foreign_exports(path)
    assert not foreign, f"{_id(path)} lists in __all__ names defined elsewhere: {foreign}"


@pytest.mark.parametrize(
    "path", [path for path in SOURCES if not _id(path).startswith("tests")], ids=_id
)
def test_private_modules_and_names_stay_inside_their_package(path: Path) -> None:
    outside = private_imports(path)
    assert not outside, f"{_id(path)} imports a private name of another package: {outside}"


def _package(tmp_path: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return tmp_path


def test_the_rules_can_fail(tmp_path: Path) -> None:
    """A borrowed name, a foreign ``__all__`` entry and an outside import of a private module
    or name are each caught (guards the AST walk itself); their lawful forms are not."""
    root = _package(
        tmp_path,
        {
            "screener/__init__.py": "",
            "screener/a/__init__.py": "from screener.a.home import Thing\n",
            "screener/a/home.py": (
                "class Thing: ...\n_hidden = 0\nif True:\n    LOW, (HIGH, TOP) = 0, (1, 2)\n"
            ),
            "screener/a/_private.py": "def helper(): ...\n",
            "screener/a/sibling.py": (
                "from screener.a._private import helper\nfrom screener.a.home import Thing\n"
                '__all__ = ["Thing", "helper", "uses"]\ndef uses(): return Thing, helper\n'
            ),
            "screener/b.py": (
                "from screener.a import Thing\nfrom screener.a.home import HIGH, Thing\n"
                "def f():\n    from screener.a.sibling import Thing, uses\n"
                "    from screener.a._private import helper\n"
                "    from screener.a.home import _hidden\n"
            ),
        },
    )
    b, sibling = root / "screener/b.py", root / "screener/a/sibling.py"
    assert borrowed(b, root) == ["line 4: screener.a.sibling.Thing"]
    assert borrowed(sibling, root) == []
    assert foreign_exports(sibling) == ["Thing", "helper"]
    assert private_imports(b, root) == [
        "line 5: screener.a._private",
        "line 6: screener.a.home._hidden",
    ]
    assert private_imports(sibling, root) == []
