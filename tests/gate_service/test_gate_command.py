"""`screener gate` as a real process: bad options refused in one line with nothing written; a
served gate stopped (Ctrl-C) or killed (-9) and resumed where it was; one owner at a time."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from click.testing import CliRunner
from gate_helpers import QUICK, kinds, start_gate, stop_gate
from test_gate_api import drive

from screener.cli import main
from screener.gate_service import GateApiError
from screener.gate_service.client import GateClient

TOKEN = "a-token-nobody-should-see"
QUICK_FLAGS = ["--policy", "first", "--max-unscreened", "0", "--audit-rate", "0",
               "-p", "pilot=2"]  # fmt: skip


def screener(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "screener", *args],
        cwd=folder, capture_output=True, text=True, timeout=120,
    )  # fmt: skip


BAD_OPTIONS = [
    (
        ["--policy", "share", "--gold-every", "0"],
        "every must be a whole number >= 1, got 0 (one gold question in N",
    ),
    (["-a", "wrr"], "needs a fixed roster"),
    (["-a", "quiz"], "the value policy prices gold with the crowd prior"),
    (["-p", "pilot=1"], "pilot must be"),
    (["--price", "gold=-1"], "the price of a gold question must be a number > 0"),
    (["--questions", "missing.csv"], "missing.csv"),
    (["--host", "0.0.0.0"], "SCREENER_GATE_TOKEN is not set"),
    (["--resume", "abc123"], "no database at screener.db"),
    (["--resume", "abc123", "--policy", "first"], "so --policy cannot be given"),
]


@pytest.mark.parametrize(("args", "words"), BAD_OPTIONS)
def test_bad_options_are_one_line_and_write_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str], words: str
) -> None:
    """Through main() in this process (the same code as the command; one case below runs as
    a real process)."""
    monkeypatch.delenv("SCREENER_GATE_TOKEN", raising=False)
    code, out, err = in_process(tmp_path, "gate", *args)
    _refused(tmp_path, code, out, err, words)


@pytest.mark.subprocess
def test_a_bad_option_is_refused_by_the_real_command(tmp_path: Path) -> None:
    done = screener(tmp_path, "gate", "--gold-share", "1.5")
    _refused(tmp_path, done.returncode, done.stdout, done.stderr, "gold_share must be a share")


def in_process(folder: Path, *args: str) -> tuple[int, str, str]:
    """``screener ARGS`` through main() in this process, in ``folder``."""
    runner = CliRunner()
    with (
        contextlib.chdir(folder),
        warnings.catch_warnings(),  # main() routes warnings; put the filters back after
        runner.isolation() as (out, err, _),
        pytest.raises(SystemExit) as done,
    ):
        main(list(args))
    assert isinstance(done.value.code, int)
    return done.value.code, out.getvalue().decode(), err.getvalue().decode()


def _refused(folder: Path, code: int, out: str, err: str, words: str) -> None:
    assert code == 2, err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and words in lines[0], lines
    assert out == "" and list(folder.iterdir()) == []


@pytest.mark.subprocess
async def test_a_gate_is_served_stopped_killed_and_resumed(tmp_path: Path) -> None:
    process, url = start_gate(tmp_path, *QUICK_FLAGS, token=TOKEN)
    async with GateClient(url, token=TOKEN) as client:
        await drive(client, 6)
        first = await client.status()
        with pytest.raises(GateApiError) as refused:
            await GateClient(url, token="wrong").status()
        assert refused.value.status == 401
    run_id = first["run"]
    # A second server on the same run is refused by name, writing nothing.
    before = kinds(str(tmp_path / "screener.db"), run_id)
    second = screener(tmp_path, "gate", "--resume", run_id)
    assert second.returncode == 2 and f"process {process.pid}" in second.stderr
    assert kinds(str(tmp_path / "screener.db"), run_id) == before
    code, err = stop_gate(process)
    assert code == 130 and err.strip().splitlines()[-1].endswith(
        f"`screener gate --resume {run_id} --db screener.db`"
    )
    runs = json.loads(screener(tmp_path, "runs", "--json").stdout)
    assert runs[0]["status"] == "interrupted"
    # Resumed with the settings it started with, it serves on where it stopped ...
    process, url = start_gate(tmp_path, "--resume", run_id, token=TOKEN)
    async with GateClient(url, token=TOKEN) as client:
        assert await client.status() == first
        await drive(client, 30)
        decided = await client.decisions()
    process.send_signal(signal.SIGKILL)
    process.wait()
    runs = json.loads(screener(tmp_path, "runs", "--json").stdout)
    assert runs[0]["status"].startswith("crashed")
    # ... and after kill -9 it is taken over at once, nothing lost.
    process, url = start_gate(tmp_path, "--resume", run_id, token=TOKEN)
    async with GateClient(url, token=TOKEN) as client:
        assert await client.decisions() == decided
    stop_gate(process)
    _decisions_read_back_as_a_runs(tmp_path, run_id, decided[0])
    for written in tmp_path.iterdir():
        assert TOKEN.encode() not in written.read_bytes()


def _decisions_read_back_as_a_runs(
    folder: Path, run_id: str, streamed: list[dict[str, object]]
) -> None:
    """The gate run's decisions out of the command line as a `screener run`'s: the decided
    events the stream served, and the block list; its report shows the same bans."""
    listed = screener(folder, "decisions", run_id, "--json")
    assert listed.returncode == 0, listed.stderr
    read = [json.loads(line) for line in listed.stdout.splitlines()]
    fields = ("seq", "worker", "decision", "reason")
    assert [[d[f] for f in fields] for d in read] == [[d[f] for f in fields] for d in streamed]
    assert streamed, "the gate should have decided someone"
    blocks = screener(folder, "export", run_id, "--decisions", "--format", "json")
    assert blocks.returncode == 0, blocks.stderr
    last = {str(d["worker"]): d["decision"] for d in streamed}
    standing = {worker: last[worker] for worker in last if last[worker] != "reopened"}
    assert {row["worker"]: row["decision"] for row in json.loads(blocks.stdout)} == standing
    report = screener(folder, "report", run_id, "--json")
    assert report.returncode == 0, report.stderr
    banned = sorted(worker for worker, decision in standing.items() if decision == "banned")
    assert sorted(json.loads(report.stdout)["banned"]) == banned


def test_the_gate_settings_are_kept_in_the_run() -> None:
    """The flags above make QUICK, which the in-process tests use: one set of settings."""
    from screener.cli.gate import _settings

    given = {"algorithm": "crowd-prior", "extra": ("pilot=2",), "policy": "first",
             "gold_every": None, "tenure": False, "bans": None, "max_unscreened": 0,
             "audit_rate": 0.0, "price": "gold=0.05,task=0.05", "questions": None}  # fmt: skip
    settings, bank = _settings(given)
    assert settings.to_dict() == QUICK.to_dict() and bank is None  # each with its own gold key


@pytest.mark.slow
def test_sigterm_stops_a_gate_as_ctrl_c_does_and_says_so(tmp_path: Path) -> None:
    """SIGTERM (systemd, docker stop, timeout) was journaled and exited as Ctrl-C (130,
    "interrupted"); it is "interrupted: terminated" and 143, as for `screener run`."""
    process, _ = start_gate(tmp_path, *QUICK_FLAGS)
    code, err = stop_gate(process, signal.SIGTERM)
    (line,) = json.loads(screener(tmp_path, "runs", "--json").stdout)
    assert code == 143 and err.strip().splitlines()[-1].endswith(
        f"`screener gate --resume {line['id']} --db screener.db`"
    )
    assert (line["state"], line["status"]) == ("interrupted", "interrupted: terminated")
