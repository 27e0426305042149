"""The HTML report, built by real subprocess runs on real SQLite files and loaded in a real
headless browser (Debian's Chromium): the plots are drawn, the header says what the run
promised and whether it held, and the page asks nothing of the network.

Without chromium on PATH the browser tests skip, except under CI=true, where they fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from cli_helpers import assert_ran

from screener import __version__
from screener.algorithms import create_algorithm
from screener.crowd import WorkerPool
from screener.journal import EventKind, Journal
from screener.reports.html import PAGE_SIZE, run_history
from screener.reports.html._plotlyjs import packed_plotly_js
from screener.runs import replay
from screener.runs.results import load_result

#: Real processes (the screener command, a browser, ...): the full suite only.
pytestmark = pytest.mark.subprocess

#: Headless, offline and quiet: every host name resolves to nothing and every request that
#: would leave the machine goes to a closed local port, so neither the page nor Chromium's own
#: background services can reach the network.
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND", "--proxy-server=127.0.0.1:9",
    "--virtual-time-budget=10000",
)  # fmt: skip
#: The initiator the net log gives Chromium's own requests (update checks and the like); a
#: page's requests carry the page's origin ("null" for a file).
BROWSER_ITSELF = "not an origin"


def screener(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "screener", *args],
        capture_output=True, text=True, timeout=600, cwd=cwd,
    )  # fmt: skip
    if args[0] == "run":
        assert_ran(done.returncode, done.stdout, done.stderr)
    else:
        assert done.returncode == 0, done.stderr
    return done


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is not None:
        return found
    if os.environ.get("CI") == "true":
        pytest.fail("no chromium on PATH under CI=true: .ci/run installs Debian's chromium")
    pytest.skip("no chromium on PATH (apt-get install chromium); under CI=true this fails")


@dataclass
class Page:
    """A page as Chromium rendered it: per section, the plots drawn and the text inside them."""

    plots: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    plot_text: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    text: list[str] = field(default_factory=list)
    rows: list[list[str]] = field(default_factory=list)  # each table row's cells' text
    links: list[str] = field(default_factory=list)  # every src and href in the DOM
    requests: list[str] = field(default_factory=list)  # what the page asked of the network


class _DomReader(HTMLParser):
    def __init__(self, page: Page) -> None:
        super().__init__()
        self.page = page
        self.section: str | None = None
        self.svg_depth = 0
        self.skip = 0  # inside <script> or <style>
        self.in_cell = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        self.page.links += [value for key, value in attrs if key in ("src", "href") and value]
        if tag == "section":
            self.section = values.get("id")
        elif tag in ("script", "style"):
            self.skip += 1
        elif tag == "tr":
            self.page.rows.append([])
        elif tag == "td":
            self.in_cell = True
        elif tag == "svg":
            self.svg_depth += 1
            if "main-svg" in (values.get("class") or "").split() and self.section:
                self.page.plots[self.section] += 1

    def handle_endtag(self, tag: str) -> None:
        if tag == "section":
            self.section = None
        elif tag in ("script", "style"):
            self.skip -= 1
        elif tag == "td":
            self.in_cell = False
        elif tag == "svg":
            self.svg_depth -= 1

    def handle_data(self, data: str) -> None:
        if self.skip or not data.strip():
            return
        self.page.text.append(data.strip())
        if self.in_cell:
            self.page.rows[-1].append(data.strip())
        if self.svg_depth and self.section:
            self.page.plot_text[self.section].add(data.strip())


def render(path: Path, scratch: Path, browser: str) -> Page:
    """Load ``path`` in headless Chromium; the DOM after its scripts ran, and its requests."""
    net_log = scratch / f"{path.stem}.netlog.json"
    done = subprocess.run(
        [browser, *CHROMIUM_FLAGS, f"--user-data-dir={scratch / 'profile'}",
         f"--log-net-log={net_log}", "--dump-dom", path.resolve().as_uri()],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    page = Page()
    _DomReader(page).feed(done.stdout)
    page.requests = _page_requests(net_log)
    return page


def _page_requests(net_log: Path) -> list[str]:
    """URLs other than file: ones that the page (not Chromium itself) requested."""
    log = json.loads(net_log.read_text(encoding="utf-8"))
    start = log["constants"]["logEventTypes"]["URL_REQUEST_START_JOB"]
    jobs = [e["params"] for e in log["events"] if e["type"] == start and "url" in e["params"]]
    assert jobs, "the net log recorded no request at all: it cannot show what the page asked"
    return [
        job["url"]
        for job in jobs
        if job.get("initiator") != BROWSER_ITSELF and not job["url"].startswith("file:")
    ]


@pytest.fixture(scope="module")
def browser() -> str:
    """Chromium's path; asked for before the runs, so that a skip costs nothing."""
    return chromium()


@dataclass(frozen=True)
class Runs:
    folder: Path
    db: Path
    ksigma_id: str
    gold_id: str


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Runs]:
    """Ten good workers and a spammer, screened by wrr to the end (its page written by
    `run --html`, then again by `report --html`), and by GOLD, cut short by its budget after
    the spammer split off (its page by `report --html`)."""
    folder = tmp_path_factory.mktemp("html")
    db = folder / "runs.db"
    pool = folder / "pool.csv"
    good = "".join(f"w{i:02d},{0.8 + 0.015 * i:.3f}\n" for i in range(1, 11))
    pool.write_text(f"worker,accuracy\n{good}spammer,0.1\n", encoding="utf-8")
    first = screener(
        "run", str(pool), "-a", "wrr", "--db", str(db), "--json", "--html", str(folder / "run.html")
    )
    ksigma_id = json.loads(first.stdout)["run_id"]
    screener("report", ksigma_id, "--db", str(db), "--html", str(folder / "report.html"))
    gold = screener("run", str(pool), "-a", "gold", "--budget", "2000", "--db", str(db), "--json")
    gold_id = json.loads(gold.stdout)["run_id"]
    screener("report", gold_id, "--db", str(db), "--html", str(folder / "gold.html"))
    yield Runs(folder, db, ksigma_id, gold_id)


def test_run_and_report_write_the_same_self_contained_page(runs: Runs) -> None:
    written = (runs.folder / "run.html").read_text(encoding="utf-8")
    assert written == (runs.folder / "report.html").read_text(encoding="utf-8")
    assert written.startswith("<!DOCTYPE html>") and len(written) < 1_000_000
    assert "Plotly.newPlot" in written and written.count(packed_plotly_js()) == 1
    assert str(runs.folder) not in written and "pool.csv" in written  # the file name only


def test_a_finished_ksigma_run_draws_every_plot_in_a_browser(
    browser: str, runs: Runs, tmp_path: Path
) -> None:
    page = render(runs.folder / "run.html", tmp_path, browser)
    record, result = load_result(str(runs.db), runs.ksigma_id)
    assert result.condition_met
    # Plotly draws each figure into svg.main-svg elements: one figure per plotted section.
    assert set(page.plots) == {"workers", "answers-over-time", "threshold-over-time"}
    assert all(count >= 1 for count in page.plots.values())
    names = WorkerPool.from_dict(dict(record.pool)).workers
    assert {names[w.arm] for w in result.workers} <= page.plot_text["workers"]
    text = " ".join(page.text)
    for words in ("The stopping condition was met: the promise below holds", "wrr",
                  result.guarantee or "?", "delta = 0.1",
                  "1 banned, 10 accepted, 0 undecided", "true accuracy (simulated)",
                  f"page made by screener {__version__}", "UTC", "workers 1-11 of 11"):  # fmt: skip
        assert words in text, words
    assert "The crowd at a glance" not in text  # one page of workers needs no summary
    assert page.requests == []
    assert not [link for link in page.links if link.startswith(("http:", "https:", "//"))]


def test_a_budget_cut_gold_run_shows_its_ranking_and_says_the_promise_does_not_hold(
    browser: str, runs: Runs, tmp_path: Path
) -> None:
    page = render(runs.folder / "gold.html", tmp_path, browser)
    _, result = load_result(str(runs.db), runs.gold_id)
    assert not result.condition_met
    assert {"workers", "answers-over-time", "gold-ranking"} <= set(page.plots)
    assert "threshold-over-time" not in page.plots  # GOLD estimates no threshold
    text = " ".join(page.text)
    assert "The promise does NOT hold" in text and "budget spent" in text
    terminal = [w for w in result.ranking if w.score is not None]
    assert len(terminal) == 1 and terminal[0].rank == 1  # the spammer split off first
    labels = page.plot_text["gold-ranking"]
    assert "rank 1" in labels and "spammer" in labels
    assert {f"rank {w.rank}: never terminal" for w in result.ranking[1:]} <= labels
    assert page.requests == []


def test_the_request_check_sees_a_page_that_reaches_out(browser: str, tmp_path: Path) -> None:
    leaky = tmp_path / "leaky.html"
    leaky.write_text(
        '<html><body><img src="http://example.invalid/x.png">'
        '<script>fetch("https://example.invalid/data.json")</script></body></html>',
        encoding="utf-8",
    )
    page = render(leaky, tmp_path, browser)
    assert sorted(page.requests) == [
        "http://example.invalid/x.png",
        "https://example.invalid/data.json",
    ]


def test_the_threshold_history_is_the_one_shot_replay_at_every_checkpoint(runs: Runs) -> None:
    """Folding the journal through the algorithm checkpoint by checkpoint gives, at each
    checkpoint, what replaying the journal up to that answer in one go gives."""
    record, result = load_result(str(runs.db), runs.ksigma_id)
    with Journal(str(runs.db), create=False) as journal:
        events = journal.events(runs.ksigma_id)
    history = run_history(record, events, result)
    answered = [i for i, e in enumerate(events) if e.kind is EventKind.ANSWERED]
    counts = [count for count, _ in history.threshold]
    assert counts == sorted(set(counts)) and counts[-1] == len(answered) == result.total_pulls
    assert history.threshold[-1][1] == result.threshold
    assert history.answers[-1] == len(answered) and history.answers[0] == 0
    for count, threshold in history.threshold[:: max(1, len(counts) // 4)]:
        fresh = create_algorithm(record.algorithm, len(record.pool["workers"]), dict(record.params))
        replay(fresh, events[: answered[count - 1] + 1])
        assert fresh.result().threshold == threshold, count


def test_without_plotly_html_is_one_line_naming_the_extra(tmp_path: Path) -> None:
    hide_plotly = "import sys; sys.modules['plotly'] = None; from screener.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", hide_plotly, "run", "--html", "page.html"],
        capture_output=True, text=True, timeout=300, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "install crowd-screener[html]" in done.stderr
    assert not (tmp_path / "screener.db").exists()  # refused before the run started


def _dataset(name: str) -> Path:
    folder = os.environ.get("SCREENER_DATA")
    if not folder:
        pytest.skip("SCREENER_DATA is not set (the real datasets' folder, e.g. ../shared/data)")
    return Path(folder) / "gold_answers" / name


def test_a_real_dataset_run_names_every_worker_and_labels_the_truth_by_its_source(
    browser: str, tmp_path: Path
) -> None:
    """Zheng_d_Duck's workers have numeric ids: each is a category of the plot's axis, not a
    number on it, and the truth shown is the dataset's own share, said so."""
    path = _dataset("Zheng_d_Duck.csv")
    db, page_file = tmp_path / "runs.db", tmp_path / "duck.html"
    screener("run", "--oracle", "dataset", "-O", f"path={path}", "-O", "replacement=false",
             "-a", "crowd-prior", "-p", "threshold=0.6", "--db", str(db), "-q",
             "--html", str(page_file))  # fmt: skip
    written = page_file.read_text(encoding="utf-8")
    assert str(path.parent) not in written and path.name in written
    page = render(page_file, tmp_path, browser)
    _, result = load_result(str(db), None)
    names = worker_pool_names(db)
    assert all(name.isdigit() for name in names) and len(names) <= PAGE_SIZE
    assert set(names) <= page.plot_text["workers"]  # every name is a tick label
    text = " ".join(page.text)
    assert "share correct over all its answers in the dataset" in text
    assert "(simulated)" not in text and "still running" not in text
    assert sorted(row[1] for row in page.rows if row) == sorted(names)  # a table row each
    assert result.total_pulls > 0 and page.requests == []


def worker_pool_names(db: Path) -> tuple[str, ...]:
    record, _ = load_result(str(db), None)
    return WorkerPool.from_dict(dict(record.pool)).workers


def test_a_thousand_workers_get_a_summary_a_paged_plot_and_a_compact_page(
    browser: str, tmp_path: Path
) -> None:
    pool = tmp_path / "pool.csv"
    rows = "".join(f"w{i:04d},{0.5 if i % 10 == 0 else 0.85}\n" for i in range(1000))
    pool.write_text(f"worker,accuracy\n{rows}", encoding="utf-8")
    page_file = tmp_path / "big.html"
    screener("run", str(pool), "-a", "crowd-prior", "-p", "threshold=0.6", "-q",
             "--db", str(tmp_path / "runs.db"), "--html", str(page_file))  # fmt: skip
    written = page_file.read_text(encoding="utf-8")
    data = len(written.encode()) - len(packed_plotly_js())
    print(f"1,000 workers: page {len(written.encode()):,} bytes, {data:,} without plotly.js")
    assert len(written.encode()) < 1_000_000
    page = render(page_file, tmp_path, browser)
    assert page.plots["summary"] >= 1 and page.plots["workers"] >= 1
    text = " ".join(page.text)
    assert f"workers 1-{PAGE_SIZE} of 1000" in text and "Decided workers" in text
    shown = {name for name in page.plot_text["workers"] if name.startswith("w")}
    assert len(shown) == PAGE_SIZE  # one page of workers drawn, not a thousand rows
