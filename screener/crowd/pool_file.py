"""A worker pool read from a CSV file: a ``worker`` column and, for simulations, an
``accuracy`` column (``mean`` is read as its other name)."""

from __future__ import annotations

import csv
from pathlib import Path

from screener.crowd.pool import WorkerPool
from screener.errors import PoolError
from screener.files import read_text, source_name

__all__ = ["load_pool_csv"]

_ACCURACY_COLUMNS = ("accuracy", "mean")


def load_pool_csv(path: str | Path) -> WorkerPool:
    """Read ``worker[,accuracy]`` rows (a header line is required); ``-`` reads standard
    input.

    Examples
    --------
    >>> _ = (folder / "pool.csv").write_text("worker,accuracy\\nann,0.9\\nbob,0.4\\n")
    >>> pool = load_pool_csv(folder / "pool.csv")
    >>> pool.workers, pool.accuracies
    (('ann', 'bob'), (0.9, 0.4))
    """
    file = source_name(path)
    try:
        text = read_text(path, "utf-8-sig")
        reader = csv.DictReader(text.splitlines())
        header = [name.strip().lower() for name in reader.fieldnames or []]
        rows = list(reader)
    except FileNotFoundError:
        raise PoolError(f"no pool file at {file}", "check the path") from None
    except (OSError, UnicodeDecodeError, csv.Error) as error:
        raise PoolError(f"cannot read pool file {file}: {error}") from None
    if "worker" not in header:
        raise PoolError(
            f"{file}: no 'worker' column (found {', '.join(header) or 'nothing'})",
            "start the file with a header line such as 'worker,accuracy'",
        )
    _one_of_each(file, header)
    accuracy_column = next((c for c in _ACCURACY_COLUMNS if c in header), None)
    workers: list[str] = []
    accuracies: list[float] = []
    for line, row in enumerate(rows, start=2):
        if None in row:  # csv.DictReader's key for the fields beyond the header's
            raise PoolError(
                f"{file}, line {line}: more fields than the {len(header)} columns of the header",
                "quote values that contain a comma, or name every column in the header",
            )
        clean = {(k or "").strip().lower(): (v or "").strip() for k, v in row.items()}
        workers.append(clean["worker"])
        if accuracy_column is not None:
            try:
                accuracies.append(float(clean[accuracy_column]))
            except ValueError:
                raise PoolError(
                    f"{file}, line {line}: accuracy {clean[accuracy_column]!r} is not a number"
                ) from None
    return WorkerPool(tuple(workers), tuple(accuracies) if accuracy_column else None, file)


def _one_of_each(file: str, header: list[str]) -> None:
    """A column screener reads appears once: of two (or an accuracy under two names), one
    would be read and the other ignored without a word."""
    repeated = sorted({name for name in header if name and header.count(name) > 1})
    if repeated:
        raise PoolError(
            f"{file}: the header has more than one {' and more than one '.join(repeated)} column",
            "keep one of each",
        )
    accuracies = [name for name in _ACCURACY_COLUMNS if name in header]
    if len(accuracies) > 1:
        raise PoolError(
            f"{file}: the header has two accuracy columns, {' and '.join(accuracies)}",
            "keep one of them",
        )
