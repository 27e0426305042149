"""A run as one self-contained HTML page, for people: a header in words, then plots.

The page: the header (the promise and whether it held, the answer source by file name, never
a local path); for a crowd larger than a page, the crowd at a glance (a histogram of the
estimates and the decided workers' names); every worker's interval against the threshold or
bar with the gold questions it cost, and a table, a page of ``PAGE_SIZE`` workers at a time,
filtered by decision or name, sorted by decision then estimate; the answers over time; for
the k-sigma family, the threshold's interval as the answers came in; GOLD's ranking.

The workers' data is in the page once, as compact column arrays, and drawn there by
``workers.js``; the other figures are Plotly figures built here (graph_objects: no pandas) and
carried as JSON. plotly.js is embedded once, its basic bundle compressed (``_plotlyjs``:
about 0.53 MB, whatever the run), so the page opens offline and makes no network request.
Plotly is an optional extra: ``pip install 'crowd-screener[html]'``.

What the page plots over the course of a run is read from its journal (``_history``).
"""

from __future__ import annotations

import html
import os
from datetime import UTC, datetime
from pathlib import PurePath
from typing import Any

from screener._version import __version__
from screener.algorithms import Result
from screener.crowd import WorkerPool
from screener.journal import RunRecord
from screener.reports.html._figures import (
    answers_figure,
    figure_html,
    gold_figure,
    plotly,
    threshold_figure,
)
from screener.reports.html._history import (
    ANSWER_POINTS,
    THRESHOLD_POINTS,
    RunHistory,
    run_history,
)
from screener.reports.html._plotlyjs import page_scripts
from screener.reports.html._workers import (
    PAGE_SIZE,
    summary_section,
    truth_label,
    workers_section,
)
from screener.reports.mistakes import Tally, expected_mistakes, truth_tally
from screener.reports.summary import (
    banned_workers,
    cost_line,
    shown_counts,
)
from screener.runs import oracle_name, read_run, run_prices, run_state, worker_pool

__all__ = [
    "ANSWER_POINTS",
    "PAGE_SIZE",
    "THRESHOLD_POINTS",
    "RunHistory",
    "html_report",
    "render_html",
    "require_html_support",
    "run_history",
]


def require_html_support() -> None:
    """Raise ConfigError with the fix when plotly (the ``html`` extra) is missing."""
    plotly()


def html_report(db: str, run_id: str, result: Result) -> str:
    """The page of run ``run_id`` in database ``db`` whose result is ``result`` (as the
    report shows it: rescored when gold questions were invalidated)."""
    require_html_support()
    record, events = read_run(db, run_id)
    history = run_history(record, events, result)
    return render_html(result, record, history, state=run_state(db, run_id))


def render_html(
    result: Result, record: RunRecord, history: RunHistory, *, state: str | None = None
) -> str:
    """The whole page as one string (plotly.js included); ``state``: the run's lifecycle, as
    ``screener.reports.describe_status`` takes it."""
    pool = worker_pool(record)
    truth = truth_label(str(oracle_name(record)), pool)
    sections = [summary_section(result, pool)] if len(pool) > PAGE_SIZE else []
    sections.append(workers_section(result, pool, truth))
    sections.append(_section("answers-over-time", "Answers over time", answers_figure(history),
                             "No answer arrived."))  # fmt: skip
    if history.threshold:
        sections.append(
            _section("threshold-over-time", "The threshold's interval as answers arrived",
                     threshold_figure(history, result), "")
        )  # fmt: skip
    if result.algorithm == "gold":
        title = "GOLD's ranking" + (f" (the first {PAGE_SIZE})" if len(pool) > PAGE_SIZE else "")
        figure = gold_figure(result, pool.workers, PAGE_SIZE)
        sections.append(_section("gold-ranking", title, figure, ""))
    return _PAGE.format(
        title=_text(f"screener report: run {record.id}"),
        scripts=page_scripts(),
        header=_header(result, record, history, pool, state),
        body="\n".join(sections),
    )


# --------------------------------------------------------------------------- header
def _header(
    result: Result, record: RunRecord, history: RunHistory, pool: WorkerPool, state: str | None
) -> str:
    params = ", ".join(
        f"{key} = {value}" for key, value in result.params.items() if value is not None
    )
    counts = ", ".join(f"{n:,} {name}" for name, n in shown_counts(result).items())
    oracle = dict(record.oracle)
    options = ", ".join(
        f"{k} = {_file_name(v)}" for k, v in dict(oracle.get("options", {})).items()
    )
    started = datetime.fromtimestamp(record.created_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    tally = truth_tally(result, pool, oracle_name(record))
    style, verdict = _verdict(result, state, tally)
    rows = [
        ("Algorithm", f"{result.algorithm} ({params})"),
        ("Promise", result.guarantee or "none: a heuristic or platform rule"),
        ("Mistakes expected", expected_mistakes(result)),
        ("Workers", f"{len(pool):,} from {_file_name(pool.source)}: {counts}"),
        ("Answers", f"{result.total_pulls:,} answered, {result.pending_pulls:,} pending, "
                    f"{result.released_pulls:,} released"),
        ("Answer source", f"{oracle.get('name', '?')}" + (f" ({options})" if options else "")),
        ("Started", started),
        ("Versions", f"run by screener {record.screener_version}; "
                     f"page made by screener {__version__}"),
    ]  # fmt: skip
    if result.threshold is not None:
        t = result.threshold
        given = t.lower == t.upper
        rows.insert(3, ("Threshold", f"{t.estimate:.3f} (given)" if given else
                        f"{t.estimate:.3f}, interval [{t.lower:.3f}, {t.upper:.3f}]"))  # fmt: skip
    if tally is not None:
        rows.insert(3, ("Mistakes made", tally.sentence()))
    prices = run_prices(record)
    if prices is not None:
        rows.insert(5, ("Cost", cost_line(result, prices).removeprefix("cost: ")))
    banned = banned_workers(result)
    if banned is not None:
        names = sorted(pool.workers[arm] for arm in banned)
        more = f" and {len(names) - PAGE_SIZE:,} more" if len(names) > PAGE_SIZE else ""
        listed = f"{len(names):,}: {', '.join(names[:PAGE_SIZE])}{more}" if names else "none"
        rows.insert(4, ("Banned", listed))
    if history.invalidated:
        rows.append(("Invalidated", f"gold question(s) {', '.join(history.invalidated)}: "
                     "the result is rebuilt from the remaining answers; the plots over time "
                     "show the run as it went"))  # fmt: skip
    items = "\n".join(f"<dt>{_text(k)}</dt><dd>{_text(v)}</dd>" for k, v in rows)
    return (
        f"<h1>Run {_text(record.id)}: {_text(result.algorithm)} on {len(pool):,} workers</h1>\n"
        f'<p class="verdict {style}" id="verdict">{_text(verdict)}</p>\n<dl>{items}</dl>'
    )


def _file_name(value: object) -> object:
    """A local path as its file name alone (the page may travel; the folder is private)."""
    if isinstance(value, str) and "://" not in value and ("/" in value or os.sep in value):
        return PurePath(value).name
    return value


def _verdict(result: Result, state: str | None, tally: Tally | None) -> tuple[str, str]:
    """(the verdict's style: "held", "not-held" or "neutral"; a sentence saying it). The
    promise itself is stated once, in the header's Promise row; no verdict says it held
    where the truth shown beside it (``tally``) counts mistakes."""
    if result.guarantee is None:
        return "neutral", "No statistical promise: this method is a heuristic or a platform rule."
    if result.stop_reason is None:
        return "neutral", f"The run has {_stopped(state)}: every decision is provisional."
    if result.extra.get("fixed_budget"):
        return "neutral", "Fixed budget spent: the decisions carry the promise below."
    if result.condition_met and tally is not None and tally.wrong:
        return "neutral", (
            f"The stopping condition was met, but by {tally.source} this run banned "
            f"{tally.good_banned:,} good worker(s) and accepted {tally.bad_accepted:,} bad "
            "one(s): the promise below bounds such mistakes in expectation, not in every run."
        )
    if result.condition_met:
        return "held", "The stopping condition was met: the promise below holds for every decision."
    return "not-held", (
        "The promise does NOT hold: the run ended before its stopping condition "
        f"({result.ending}); undecided workers carry no guarantee."
    )


# ---------------------------------------------------------------------------- page
def _section(anchor: str, title: str, figure: Any, empty: str) -> str:
    """A titled part of the page: the figure (a Plotly Figure), or ``empty`` without one."""
    if figure is None:
        body = f'<p class="empty">{_text(empty)}</p>'
    else:
        body = figure_html(figure, f"{anchor}-plot")
    return f'<section id="{anchor}"><h2>{_text(title)}</h2>\n{body}\n</section>'


def _stopped(state: str | None) -> str:
    """How an unfinished run stands, for the verdict's sentence."""
    if state is None or state == "running":
        return "not stopped yet"
    return "stopped before its end" if state == "finished" else f"stopped ({state})"


def _text(value: object) -> str:
    return html.escape(str(value))


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{title}</title>
<style>
body {{ font-family: system-ui, -apple-system, "Segoe UI", sans-serif; margin: 2rem auto;
  max-width: 1200px; padding: 0 1rem; color: #222; }}
h1 {{ font-size: 1.5rem; margin-bottom: 0.5rem; }}
h2 {{ font-size: 1.15rem; margin: 2rem 0 0.5rem; border-bottom: 1px solid #ddd; }}
.verdict {{ padding: 0.6rem 0.9rem; border-radius: 4px; font-weight: 600; }}
.held {{ background: #e6f4ea; border-left: 5px solid #2ca02c; }}
.not-held {{ background: #fdecea; border-left: 5px solid #d62728; }}
.neutral {{ background: #f1f1f1; border-left: 5px solid #888; }}
.note {{ color: #555; font-size: 0.9rem; }}
.filter {{ margin: 0.5rem 0; display: flex; gap: 0.75rem; align-items: center; }}
details {{ margin: 0.3rem 0; }}
dl {{ display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }}
dt {{ font-weight: 600; color: #555; }}
dd {{ margin: 0; }}
.empty {{ color: #666; font-style: italic; }}
table {{ border-collapse: collapse; font-size: 0.85rem; width: 100%; }}
th, td {{ text-align: left; padding: 0.2rem 0.5rem; border-bottom: 1px solid #eee; }}
</style>
{scripts}
</head>
<body>
<header>
{header}
</header>
<main>
{body}
</main>
</body>
</html>
"""
