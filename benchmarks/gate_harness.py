"""A gate served by its own process, and a crowd that loads it over HTTP (benchmarks.gate_load).

``start_server`` runs ``screener gate`` as a subprocess on 127.0.0.1 (this screener, no
token), ``stop_server`` stops it as Ctrl-C does; ``rss_mb`` and ``cpu_seconds`` read its
/proc entries. ``Crowd`` is a seeded crowd (a fifth of it spammers) and what each worker
sends after a reply; ``register`` makes each worker's first request, ``steady`` makes
requests of random known workers for a while, both with a bounded number of connections.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import select
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import numpy as np

import screener
from benchmarks.harness import seed_of
from screener.gate_service.protocol import ANSWERS_PATH, LABELS_PATH, NEXT_PATH, TOKEN_ENV
from screener.gate_service.sharding import shard_of

GOOD, SPAMMER, SPAMMER_SHARE = 0.9, 0.5, 0.2  # workers' accuracies
LABEL_SHARE = 1 / 3  # of task replies that get a label
ACTIVITY = 3.0  # worker index = size * U ** ACTIVITY: P(index < 1% of size) = 0.01 ** (1/3)
ITEMS = 1_000  # real task items the labels are of
PROGRESS_SECONDS = 30.0
Body = dict[str, Any]
#: Where the load goes: one gate's URL, or a pool's shards' owners' URLs (``route``).
Target = str | Sequence[str]


# ------------------------------------------------------------------------------- the crowd
class Crowd:
    """``size`` workers ``w0``, ``w1``...; a seeded fifth of them spammers."""

    def __init__(self, size: int, seed: int) -> None:
        rng = np.random.default_rng(seed_of(seed, size))
        self.size = size
        self.accuracy = np.where(rng.random(size) < SPAMMER_SHARE, SPAMMER, GOOD)
        self.labelled: dict[int, int] = {}  # labels each worker sent: its next item

    @staticmethod
    def name(worker: int) -> str:
        return f"w{worker}"

    def pick(self, rng: np.random.Generator) -> int:
        """A worker asking for work: heavy-tailed, as real crowds are (a few workers make
        most requests: the first 1% of workers make about a fifth of them), so that the
        steady state reaches the gold questions and decisions, not only first requests."""
        return min(int(self.size * rng.random() ** ACTIVITY), self.size - 1)

    def follow_up(
        self, kind: str, gold: str | None, worker: int, rng: np.random.Generator
    ) -> tuple[str, Body] | None:
        """The call a worker makes after a reply of ``kind``: a gold answer, or now and then
        a task's label; None for none."""
        right = bool(rng.random() < self.accuracy[worker])
        if kind == "gold":
            body = {"gold": gold, "worker": self.name(worker), "reward": 1.0 if right else 0.0}
            return ANSWERS_PATH, body
        if kind in ("task", "qualified") and rng.random() < LABEL_SHARE:
            # Each worker labels items in its own order, each once: every label is new (the
            # gate journals a repeated one not at all), as a platform's worker would.
            done = self.labelled.get(worker, 0)
            self.labelled[worker] = done + 1
            item = (worker * 7_919 + done) % ITEMS
            label = "ab"[item % 2 if right else 1 - item % 2]
            return LABELS_PATH, {"worker": self.name(worker), "item": f"i{item}", "label": label}
        return None


class Progress:
    """A line on stderr at most every PROGRESS_SECONDS while workers register."""

    def __init__(self, what: str, total: int) -> None:
        self.what, self.total, self.done = what, total, 0
        self.started = self.noted = time.perf_counter()

    def step(self) -> None:
        self.done += 1
        now = time.perf_counter()
        if now - self.noted > PROGRESS_SECONDS:
            self.noted = now
            print(f"[gate_load] {self.what}: {self.done:,} of {self.total:,} workers, "
                  f"{now - self.started:.0f} s", file=sys.stderr, flush=True)  # fmt: skip

    @property
    def seconds(self) -> float:
        return time.perf_counter() - self.started


# ------------------------------------------------------------------ the gate as a process
@dataclass
class Server:
    """A ``screener gate`` process, its URL and its run."""

    process: subprocess.Popen[str]
    url: str
    run_id: str
    ready_s: float  # from its start to its printed URL


def start_server(
    db: Path | str, directory: Path, *args: str, limit: float, pool: bool = False
) -> Server | None:
    """``screener gate --db DB ARGS`` on 127.0.0.1, any free port, with this screener and no
    token; None (and the process killed) when it prints no URL within ``limit`` seconds.
    ``pool``: a process of a pool (``--pool`` in ARGS), which serves no run of its own."""
    env = {key: value for key, value in os.environ.items() if key != TOKEN_ENV}
    source = str(Path(screener.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    log = directory / f"gate-{time.monotonic_ns()}.log"  # stderr: a file never fills
    started = time.perf_counter()
    with log.open("w", encoding="utf-8") as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "screener", "gate", "--db", str(db), "--port", "0", *args],
            cwd=directory, env=env, stdout=subprocess.PIPE, stderr=stderr, text=True,
        )  # fmt: skip
    assert process.stdout is not None
    ready, _, _ = select.select([process.stdout], [], [], limit)
    url = process.stdout.readline().strip() if ready else ""
    if not url.startswith("http://127.0.0.1:"):
        process.kill()
        process.wait()
        if ready:  # it stopped without serving: a bug, not a slow resume
            raise RuntimeError(f"screener gate did not start: {log.read_text()[-2000:]}")
        return None
    run_id = "" if pool else _run_id(log)
    return Server(process, url, run_id, time.perf_counter() - started)


def _run_id(log: Path) -> str:
    """The run id the gate notes on stderr ("gate run ID in DB"), just after its URL."""
    for _ in range(300):
        found = re.search(r"gate run (\S+) in ", log.read_text(encoding="utf-8"))
        if found:
            return found.group(1)
        time.sleep(0.01)
    raise RuntimeError(f"screener gate printed no run id: {log.read_text()[-2000:]}")


def stop_server(server: Server) -> int:
    """Ctrl-C (the gate journals "stopped"), then its exit code."""
    server.process.send_signal(signal.SIGINT)
    try:
        return server.process.wait(timeout=120)
    except subprocess.TimeoutExpired:
        server.process.kill()
        return server.process.wait()


def rss_mb(pid: int) -> float:
    """VmRSS of process ``pid``, in MB."""
    status = Path(f"/proc/{pid}/status").read_text(encoding="utf-8")
    found = re.search(r"^VmRSS:\s+(\d+) kB", status, re.MULTILINE)
    return int(found.group(1)) / 1024 if found else float("nan")


def cpu_seconds(pid: int) -> float:
    """User and system CPU seconds of process ``pid`` so far."""
    fields = Path(f"/proc/{pid}/stat").read_text(encoding="utf-8").rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def journal_bytes(db: Path) -> int:
    """Bytes of SQLite database ``db`` and its write-ahead log."""
    return sum(path.stat().st_size for path in (db, Path(f"{db}-wal")) if path.exists())


def last_event_id(db: Path, run_id: str) -> int:
    """The id of run ``run_id``'s last event in ``db`` (0: none), read without writing."""
    with contextlib.closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
        found = conn.execute("SELECT max(id) FROM events WHERE run_id = ?", (run_id,)).fetchone()
    return int(found[0] or 0)


# ------------------------------------------------------------------------- the load
@dataclass
class Load:
    """What the clients saw: each call's latency, the calls per path, the refusals."""

    latencies: list[float] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    outcomes: Counter[str] = field(default_factory=Counter)  # "path outcome", per item
    errors: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0
    per_url: Counter[str] = field(default_factory=Counter)  # calls per process served

    def rates(self) -> dict[str, float]:
        """Calls a second, and the p50 and p99 latency in ms, as every load table prints."""
        latencies = np.array(self.latencies) * 1000
        return {
            "per_s": sum(self.calls.values()) / self.seconds,
            "p50_ms": float(np.percentile(latencies, 50)),
            "p99_ms": float(np.percentile(latencies, 99)),
        }


async def post(http: aiohttp.ClientSession, url: str, path: str, body: Body, load: Load) -> Body:
    """POST ``body`` to the gate; its reply ({} for a refusal, counted)."""
    started = time.perf_counter()
    async with http.post(url + path, json=body) as response:
        reply: Body = await response.json(content_type=None)
    load.latencies.append(time.perf_counter() - started)
    load.calls[path] += 1
    load.per_url[url] += 1
    if response.status != 200:
        load.errors[f"{path} {response.status}: {reply.get('error')}"] += 1
        return {}
    for result in reply.get("results", ()):
        load.outcomes[f"{path} {result['outcome']}"] += 1
    return reply


def client(connections: int) -> aiohttp.ClientSession:
    """An HTTP client of at most ``connections`` connections (no proxy: 127.0.0.1 only)."""
    return aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=connections))


def route(url: Target, worker: str) -> str:
    """The URL to send ``worker``'s calls to: the gate's, or, for a pool (its shards'
    owners' URLs, shard k's at k), its shard's owner's, as a platform routes by the pool's
    hash rule."""
    return url if isinstance(url, str) else url[shard_of(worker, len(url))]


async def register(url: Target, crowd: Crowd, connections: int, limit: float) -> Progress:
    """Every worker's first request, ``connections`` at a time, for at most ``limit``
    seconds."""
    todo, load = iter(range(crowd.size)), Load()
    progress = Progress("over HTTP", crowd.size)

    async def connection(http: aiohttp.ClientSession) -> None:
        for worker in todo:  # one iterator: each worker is taken once
            name = crowd.name(worker)
            await post(http, route(url, name), NEXT_PATH, {"worker": name}, load)
            progress.step()

    async with client(connections) as http:
        with contextlib.suppress(TimeoutError):  # the limit: the workers registered so far
            async with asyncio.timeout(limit), asyncio.TaskGroup() as group:
                for _ in range(connections):
                    group.create_task(connection(http))
    return progress


async def steady(url: Target, crowd: Crowd, connections: int, seconds: float, *, seed: int) -> Load:
    """``seconds`` of requests from ``connections`` clients, each its own seeded stream of
    known workers (``Crowd.pick``); each reply followed up (``Crowd.follow_up``)."""
    load = Load()
    deadline = time.perf_counter() + seconds

    async def connection(http: aiohttp.ClientSession, index: int) -> None:
        rng = np.random.default_rng(seed_of(seed, crowd.size, index))
        while time.perf_counter() < deadline:
            worker = crowd.pick(rng)
            to = route(url, crowd.name(worker))
            reply = await post(http, to, NEXT_PATH, {"worker": crowd.name(worker)}, load)
            if not reply:
                continue
            follow = crowd.follow_up(reply["kind"], reply["gold"], worker, rng)
            if follow is not None:
                path, body = follow
                await post(http, to, path, body, load)

    started = time.perf_counter()
    async with client(connections) as http, asyncio.TaskGroup() as group:
        for index in range(connections):
            group.create_task(connection(http, index))
    load.seconds = time.perf_counter() - started
    return load


async def first_reply(url: str) -> None:
    async with client(1) as http:
        await post(http, url, NEXT_PATH, {"worker": Crowd.name(0)}, Load())
