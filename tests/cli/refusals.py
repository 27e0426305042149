"""The real CLI in a folder, for the bad-input tests: a refusal is exit 2, exactly one line
on stderr (``error: ...``, never an internal error) and the folder byte for byte as it was,
no file added (a database's ``-wal`` and ``-shm`` included)."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

import screener as screener_api
from screener.crowd import synthetic_pool

DB = "runs.db"


def screener(
    *args: str, cwd: Path, env: Mapping[str, str] | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=timeout, cwd=cwd,
        env=None if env is None else {**os.environ, **env},
    )  # fmt: skip


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` and its bytes."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    """The one line of a refusal (exit 2)."""
    assert done.returncode == 2, (done.returncode, done.stdout[-500:], done.stderr)
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("error: ") and "internal error" not in lines[0], lines[0]
    return lines[0]


def refused(folder: Path, *args: str, env: Mapping[str, str] | None = None) -> str:
    """Run a command that must be refused; return its line. The folder must be unchanged."""
    before = snapshot(folder)
    line = one_line(screener(*args, cwd=folder, env=env))
    assert snapshot(folder) == before, "a refused command changed the folder"
    return line


def finished_run(db: Path, *, budget: int = 30) -> str:
    """A run of 6 simulated workers in ``db``, cut short by its budget; its id."""
    pool = synthetic_pool(6, 1, seed=2)
    result = screener_api.run(
        pool, algorithm="wrr", params={"budget": budget}, db=db, progress=None
    )
    assert result.run_id is not None
    return result.run_id


@contextlib.contextmanager
def read_only_copy(source: Path, folder: Path) -> Iterator[Path]:
    """``source`` copied into a new ``folder`` that cannot be written: by permissions for
    a user, as a read-only tmpfs for root (whom permissions do not stop); skipped when
    neither is possible."""
    folder.mkdir()
    target = folder / source.name
    if os.geteuid() != 0:
        shutil.copy(source, target)
        target.chmod(0o444)
        folder.chmod(0o555)
        try:
            yield target
        finally:
            folder.chmod(0o755)
        return
    with mounted_tmpfs(folder, "16m"):
        shutil.copy(source, target)
        subprocess.run(["mount", "-o", "remount,ro", str(folder)], check=True)
        yield target


@contextlib.contextmanager
def read_only_file(path: Path) -> Iterator[Path]:
    """``path`` made read-only in its writable folder: by permissions for a user, by a
    read-only bind mount of the file on itself for root (whom permissions do not stop);
    skipped when neither is possible."""
    if os.geteuid() != 0:
        path.chmod(0o444)
        try:
            yield path
        finally:
            path.chmod(0o644)
        return
    if shutil.which("mount") is None:
        pytest.skip("a read-only bind mount needs mount(8)")
    bound = subprocess.run(["mount", "--bind", str(path), str(path)], capture_output=True,
                           text=True, check=False)  # fmt: skip
    if bound.returncode != 0:
        pytest.skip(f"cannot bind-mount a file here ({bound.stderr.strip()})")
    try:
        subprocess.run(["mount", "-o", "remount,ro,bind", str(path)], check=True)
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=False)


@contextlib.contextmanager
def mounted_tmpfs(folder: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` on ``folder`` (root only; skipped when it cannot be mounted)."""
    folder.mkdir(exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root and mount(8)")
    mount = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if mount.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({mount.stderr.strip()}): needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], check=False)
