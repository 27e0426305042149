"""A file of task items to register (``screener gate --items FILE``): CSV with a header
``item[,cap][,priority]``, or JSON Lines, one ``{"item", "cap"?, "priority"?}`` per line.

Rules: a ``.jsonl`` or ``.ndjson`` file is JSON Lines, any other CSV (standard input, ``-``:
JSON Lines when it starts with ``{``); a cap left empty or out is no cap, a priority left out
is 0; each item is checked as ``Gate.add_items`` checks it (``check_new_item``); an item named
twice, a file with no item, or a column screener does not read is refused, naming the file
and line, before anything is registered.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from screener.errors import ConfigError
from screener.files import is_stdio, read_text, source_name
from screener.gate.items import check_new_item

__all__ = ["ItemRow", "load_items"]

#: One item as ``Gate.add_items`` takes it: (item, cap or None, priority).
ItemRow = tuple[str, int | None, float]
_COLUMNS = ("item", "cap", "priority")
_JSON_LINES = (".jsonl", ".ndjson")


def load_items(path: str | Path) -> list[ItemRow]:
    """The items of ``path`` (module docstring), in file order.

    Examples
    --------
    >>> file = folder / "items.csv"
    >>> _ = file.write_text("item,cap,priority\\nt1,5,\\nt2,,2\\n")
    >>> load_items(file)
    [('t1', 5, 0.0), ('t2', None, 2.0)]
    """
    file = source_name(path)
    try:
        text = read_text(path, "utf-8-sig")
    except FileNotFoundError:
        raise ConfigError(f"no items file at {file}", "check the path") from None
    except (OSError, UnicodeDecodeError) as error:
        raise ConfigError(f"cannot read items file {file}: {error}", "check the file") from None
    json_lines = text.lstrip()[:1] == "{" if is_stdio(path) else _is_json_lines(path)
    rows = _json_rows(text, file) if json_lines else _csv_rows(text, file)
    seen: dict[str, str] = {}
    for where, (item, _, _) in rows:
        if item in seen:
            raise ConfigError(
                f"{where}: item {item!r} is named twice (first at {seen[item]})",
                "list each item once, with its cap and priority",
            )
        seen[item] = where
    if not rows:
        raise ConfigError(f"{file}: no items", "give one item a line after the header 'item'")
    return [row for _, row in rows]


def _is_json_lines(path: str | Path) -> bool:
    return Path(path).suffix.lower() in _JSON_LINES


def _csv_rows(text: str, file: str) -> list[tuple[str, ItemRow]]:
    try:
        reader = csv.DictReader(text.splitlines())
        header = [(name or "").strip().lower() for name in reader.fieldnames or []]
        rows = list(reader)
    except csv.Error as error:
        raise ConfigError(f"cannot read items file {file}: {error}", "check the file") from None
    unknown = [name for name in header if name not in _COLUMNS]
    if "item" not in header or unknown or len(set(header)) != len(header):
        raise ConfigError(
            f"{file}: an items file's header is item[,cap][,priority], each once "
            f"(found {', '.join(header) or 'nothing'})",
            "start the file with a header line such as 'item,cap,priority'",
        )
    found = []
    for line, row in enumerate(rows, start=2):
        where = f"{file}, line {line}"
        if None in row:  # csv.DictReader's key for the fields beyond the header's
            raise ConfigError(
                f"{where}: more fields than the {len(header)} columns of the header",
                "quote values that contain a comma, or name every column in the header",
            )
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        cap = _parsed(clean.get("cap") or None, int)
        priority = _parsed(clean.get("priority") or "0", float)
        found.append((where, _checked(clean["item"], cap, priority, where)))
    return found


def _json_rows(text: str, file: str) -> list[tuple[str, ItemRow]]:
    found = []
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"{file}, line {line}"
        try:
            value = json.loads(raw)
        except (ValueError, RecursionError) as error:
            raise ConfigError(f"{where} is not JSON: {error}", "give one object a line") from None
        unknown = sorted(set(value) - set(_COLUMNS)) if isinstance(value, dict) else ["?"]
        if unknown:
            raise ConfigError(
                f'{where}: each line is an object {{"item", "cap"?, "priority"?}}, '
                f"got {raw.strip()[:40]!r}",
                'write e.g. {"item": "t1", "cap": 5}',
            )
        row = (value.get("item"), value.get("cap"), value.get("priority", 0.0))
        found.append((where, _checked(*row, where)))
    return found


def _checked(item: object, cap: object, priority: object, where: str) -> ItemRow:
    try:
        check_new_item(item, cap, priority)
    except ConfigError as error:
        raise ConfigError(f"{where}: {error.args[0]}", error.hint) from None
    assert isinstance(item, str) and (cap is None or isinstance(cap, int))
    assert isinstance(priority, int | float)
    return item, cap, float(priority)


def _parsed(text: str | None, kind: type[int] | type[float]) -> object:
    """A CSV cell as a number of ``kind``, else as it is (``check_new_item`` refuses it)."""
    if text is None:
        return None
    try:
        return kind(text)
    except ValueError:
        return text
