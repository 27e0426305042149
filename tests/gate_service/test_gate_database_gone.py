"""Issue 50: the gate's SQLite file deleted while `screener gate` serves. It used to go on
replying 200 (158 more replies), then exit 130 saying the run "is saved", with nothing on
disk. It must stop at the next commit or lease renewal, 503 and one line, and never say the
run is saved. A real process on a real file."""

from __future__ import annotations

import asyncio
import signal
import subprocess
from pathlib import Path

import pytest
from gate_helpers import start_gate, stop_gate

from screener.gate_service import GateApiError
from screener.gate_service.client import GateClient
from screener.journal import HEARTBEAT_SECONDS

pytestmark = pytest.mark.subprocess

DB = "gate.db"
GONE = "its file was deleted, moved or replaced while open, and nothing written to it since is kept"
LOST = "(its run database is gone: nothing of the run is kept)"


async def _served_run(url: str) -> str:
    """One request served; the run's id."""
    async with GateClient(url) as client:
        await client.next("ann")
        return str((await client.status())["run"])


def _ended(process: subprocess.Popen[str], timeout: float) -> tuple[int, str]:
    try:
        _, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError("the gate went on serving without its database") from None
    return process.returncode, err


def _assert_lost(code: int, stderr: str, run_id: str, doing: str) -> None:
    assert code == 2, stderr
    assert stderr.splitlines()[-1] == (
        f"error: gate run {run_id} stopped: its journal failed: {doing}: {GONE} {LOST}"
    )
    assert "saved" not in stderr and "--resume" not in stderr


def test_the_next_call_after_the_deletion_is_refused_and_the_gate_stops(tmp_path: Path) -> None:
    process, url = start_gate(tmp_path, "--db", DB)
    try:
        run_id = asyncio.run(_served_run(url))
        (tmp_path / DB).unlink()

        async def refused() -> GateApiError:
            async with GateClient(url, retry_for=0.0) as client:
                with pytest.raises(GateApiError) as error:
                    await client.next("bob")
                return error.value

        error = asyncio.run(refused())
        assert error.status == 503 and GONE in str(error)
        code, stderr = _ended(process, 30)
    finally:
        if process.poll() is None:
            process.kill()
    _assert_lost(code, stderr, run_id, f"cannot append to run {run_id} in {DB}")
    assert not (tmp_path / DB).exists()


def test_an_idle_gate_stops_at_its_next_lease_renewal(tmp_path: Path) -> None:
    process, url = start_gate(tmp_path, "--db", DB)
    try:
        run_id = asyncio.run(_served_run(url))
        (tmp_path / DB).unlink()
        code, stderr = _ended(process, HEARTBEAT_SECONDS + 20)
    finally:
        if process.poll() is None:
            process.kill()
    _assert_lost(code, stderr, run_id, f"cannot renew the lease of run {run_id}")


def test_ctrl_c_after_the_deletion_never_says_the_run_is_saved(tmp_path: Path) -> None:
    process, url = start_gate(tmp_path, "--db", DB)
    run_id = asyncio.run(_served_run(url))
    (tmp_path / DB).unlink()
    code, stderr = stop_gate(process, signal.SIGINT)
    assert code == 2, stderr
    assert stderr.splitlines()[-1].startswith(f"error: gate run {run_id} stopped: its journal")
    assert stderr.splitlines()[-1].endswith(f"{GONE} {LOST}")
    assert "saved" not in stderr
