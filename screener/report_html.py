"""A run as one self-contained HTML page, for people: a header in words, then plots.

The plots: every worker's interval against the threshold or bar, coloured by decision, decided
and undecided workers apart, beside the gold questions each one cost; the answers over time;
for the k-sigma family, the threshold's interval as the answers came in; GOLD's ranking; and a
table of every worker.

Plots are Plotly figures (graph_objects: no pandas). plotly.js is embedded in the page once,
so the page opens offline and makes no network request; it is about 5 MB whatever the run.
Plotly is an optional extra: ``pip install 'crowd-screener[html]'``.

The threshold's history is not stored in the journal: it is rebuilt by replaying the journal
through a fresh copy of the run's algorithm and reading its result at up to
``THRESHOLD_POINTS`` checkpoints (reading a result never changes an algorithm, so the replay
stays exact). It costs one more replay of the run, for the k-sigma family only.
"""

from __future__ import annotations

import html
import math
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

from screener._version import __version__
from screener.algorithms import Decision, Result, Threshold, WorkerResult
from screener.errors import ConfigError
from screener.journal import Event, EventKind, RunRecord
from screener.pool import WorkerPool
from screener.report import decision_counts, describe_status
from screener.runs import build_algorithm, invalidations, read_run, replay, worker_pool

__all__ = [
    "ANSWER_POINTS",
    "THRESHOLD_POINTS",
    "RunHistory",
    "html_report",
    "render_html",
    "require_html_support",
    "run_history",
]

#: Most points drawn for the answers-over-time curve and for the threshold's history.
ANSWER_POINTS = 500
THRESHOLD_POINTS = 100

#: One colour per decision: flagged workers red, kept ones blue or green, undecided orange.
_COLOURS = {
    Decision.OUTLIER: "#d62728",
    Decision.BELOW: "#d62728",
    Decision.NORMAL: "#1f77b4",
    Decision.ABOVE: "#2ca02c",
    Decision.SELECTED: "#2ca02c",
    Decision.REJECTED: "#1f77b4",
    Decision.UNDECIDED: "#ff7f0e",
}
_ROW_PIXELS = 22  # height of one worker's row in the per-worker plots
_CONFIG = {"displaylogo": False, "responsive": True}


@dataclass(frozen=True)
class RunHistory:
    """What the page plots over the course of a run, read from its journal.

    ``answers`` and ``seconds``: the number of answers received by that many seconds after
    the run started (at most ``ANSWER_POINTS`` points). ``threshold``: (answers, threshold)
    at up to ``THRESHOLD_POINTS`` checkpoints, for algorithms that estimate a threshold.
    """

    seconds: tuple[float, ...]
    answers: tuple[int, ...]
    threshold: tuple[tuple[int, Threshold], ...]
    invalidated: tuple[str, ...]


def require_html_support() -> None:
    """Raise ConfigError with the fix when plotly (the ``html`` extra) is missing."""
    _plotly()


def html_report(db: str, run_id: str, result: Result) -> str:
    """The page of run ``run_id`` in database ``db`` whose result is ``result`` (as the
    report shows it: rescored when gold questions were invalidated)."""
    require_html_support()
    record, events = read_run(db, run_id)
    return render_html(result, record, run_history(record, events, result))


def run_history(record: RunRecord, events: Sequence[Event], result: Result) -> RunHistory:
    """The answers over time, and the threshold's history when ``result`` has an estimated
    threshold (the k-sigma family), from the run's journal."""
    answered = [i for i, event in enumerate(events) if event.kind is EventKind.ANSWERED]
    start = events[0].at if events else 0.0
    picks = _checkpoints(len(answered), ANSWER_POINTS)
    seconds = tuple(events[answered[n - 1]].at - start for n in picks)
    threshold: tuple[tuple[int, Threshold], ...] = ()
    t = result.threshold
    if t is not None and t.lower < t.upper:
        threshold = _threshold_history(record, events, answered)
    return RunHistory((0.0, *seconds), (0, *picks), threshold, tuple(sorted(invalidations(events))))


def render_html(result: Result, record: RunRecord, history: RunHistory) -> str:
    """The whole page as one string (plotly.js included)."""
    pool = worker_pool(record)
    decided = [w for w in result.ranking if w.decision is not Decision.UNDECIDED]
    undecided = [w for w in result.ranking if w.decision is Decision.UNDECIDED]
    sections = [
        _section("decided", f"Decided workers ({len(decided):,})",
                 _worker_figure(decided, result, pool), "No worker is decided."),
        _section("undecided", f"Undecided workers ({len(undecided):,})",
                 _worker_figure(undecided, result, pool), "Every worker is decided."),
        _section("answers-over-time", "Answers over time", _answers_figure(history),
                 "No answer arrived."),
    ]  # fmt: skip
    if history.threshold:
        sections.append(
            _section("threshold-over-time", "The threshold's interval as answers arrived",
                     _threshold_figure(history, result), "")
        )  # fmt: skip
    if result.algorithm == "gold":
        sections.append(_section("gold-ranking", "GOLD's ranking", _gold_figure(result, pool), ""))
    sections.append(_worker_table(result, pool))
    title = f"screener report: run {record.id}"
    return _PAGE.format(
        title=_text(title),
        plotly=_plotly().offline.get_plotlyjs(),
        header=_header(result, record, history, pool),
        body="\n".join(sections),
    )


# ------------------------------------------------------------------------- history
def _checkpoints(total: int, points: int) -> tuple[int, ...]:
    """Up to ``points`` counts from 1 to ``total``, evenly spread, ending at ``total``."""
    if total == 0:
        return ()
    return tuple(int(n) for n in np.unique(np.ceil(np.linspace(0, total, points + 1)[1:])))


def _threshold_history(
    record: RunRecord, events: Sequence[Event], answered: Sequence[int]
) -> tuple[tuple[int, Threshold], ...]:
    algorithm = build_algorithm(record)
    history = []
    done = 0
    for count in _checkpoints(len(answered), THRESHOLD_POINTS):
        cut = answered[count - 1] + 1  # just after the count-th answer
        replay(algorithm, events[done:cut])
        done = cut
        threshold = algorithm.result().threshold
        if threshold is not None:
            history.append((count, threshold))
    return tuple(history)


# --------------------------------------------------------------------------- header
def _header(result: Result, record: RunRecord, history: RunHistory, pool: WorkerPool) -> str:
    params = ", ".join(
        f"{key} = {value}" for key, value in result.params.items() if value is not None
    )
    counts = ", ".join(f"{n:,} {name}" for name, n in decision_counts(result).items())
    oracle = dict(record.oracle)
    options = ", ".join(f"{k} = {v}" for k, v in dict(oracle.get("options", {})).items())
    started = datetime.fromtimestamp(record.created_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
    style, verdict = _verdict(result)
    rows = [
        ("Algorithm", f"{result.algorithm} ({params})"),
        ("Promise", result.guarantee or "none: a heuristic or platform rule"),
        ("Outcome", describe_status(result)),
        ("Workers", f"{len(pool):,} from {pool.source}: {counts}"),
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
    if history.invalidated:
        rows.append(("Invalidated", f"gold question(s) {', '.join(history.invalidated)}: "
                     "the result is rebuilt from the remaining answers; the plots over time "
                     "show the run as it went"))  # fmt: skip
    items = "\n".join(f"<dt>{_text(k)}</dt><dd>{_text(v)}</dd>" for k, v in rows)
    return (
        f"<h1>Run {_text(record.id)}: {_text(result.algorithm)} on {len(pool):,} workers</h1>\n"
        f'<p class="verdict {style}" id="verdict">{_text(verdict)}</p>\n<dl>{items}</dl>'
    )


def _verdict(result: Result) -> tuple[str, str]:
    """(the verdict's style: "held", "not-held" or "neutral"; a sentence saying it)."""
    if result.guarantee is None:
        return "neutral", "No statistical promise: this method is a heuristic or a platform rule."
    if result.stop_reason is None:
        return "neutral", "The run has not stopped yet: every decision is provisional."
    if result.extra.get("fixed_budget"):
        return "neutral", f"Fixed budget spent; the method's promise: {result.guarantee}."
    if result.condition_met:
        return "held", f"The promise held: the stopping condition was met, so {result.guarantee}."
    return "not-held", (
        "The promise does NOT hold: the run ended before its stopping condition "
        f"({result.stop_reason.value}); undecided workers carry no guarantee."
    )


# -------------------------------------------------------------------------- figures
def _worker_figure(workers: Sequence[WorkerResult], result: Result, pool: WorkerPool) -> Any:
    """Each worker's estimate and interval against the threshold, and its questions."""
    if not workers:
        return None
    go, subplots = _plotly().graph_objects, _plotly().subplots
    fig = subplots.make_subplots(
        rows=1, cols=2, shared_yaxes=True, column_widths=[0.72, 0.28], horizontal_spacing=0.03
    )  # fmt: skip
    names = [pool.workers[w.arm] for w in workers]
    for decision in dict.fromkeys(w.decision for w in workers):
        group = [
            (w, name) for w, name in zip(workers, names, strict=True) if w.decision is decision
        ]
        estimates = [_finite(w.estimate) for w, _ in group]
        fig.add_trace(
            go.Scatter(
                x=estimates,
                y=[name for _, name in group],
                mode="markers",
                name=decision.value,
                legendgroup=decision.value,
                marker={"color": _COLOURS[decision], "size": 8},
                error_x={
                    "type": "data",
                    "symmetric": False,
                    "array": [_gap(w.upper, w.estimate) for w, _ in group],
                    "arrayminus": [_gap(w.estimate, w.lower) for w, _ in group],
                    "color": _COLOURS[decision],
                },
                customdata=[[w.rank, w.pulls, w.lower, w.upper, w.reason] for w, _ in group],
                hovertemplate="<b>%{y}</b> (rank %{customdata[0]})<br>estimate %{x:.3f}, "
                "interval [%{customdata[2]:.3f}, %{customdata[3]:.3f}]<br>"
                "%{customdata[1]} answers<br>%{customdata[4]}<extra>" + decision.value + "</extra>",
            ),
            row=1,
            col=1,
        )
    if pool.accuracies is not None:
        fig.add_trace(
            go.Scatter(
                x=[pool.accuracies[w.arm] for w in workers], y=names, mode="markers",
                name="true accuracy (simulated)",
                marker={"symbol": "line-ns-open", "size": 12, "color": "#444"},
                hovertemplate="<b>%{y}</b>: true accuracy %{x:.3f}<extra></extra>",
            ),
            row=1, col=1,
        )  # fmt: skip
    fig.add_trace(
        go.Bar(
            x=[w.pulls for w in workers], y=names, orientation="h", showlegend=False,
            marker={"color": [_COLOURS[w.decision] for w in workers]},
            hovertemplate="<b>%{y}</b>: %{x:,} answers<extra></extra>",
        ),
        row=1, col=2,
    )  # fmt: skip
    _draw_threshold(fig, result.threshold)
    fig.update_xaxes(
        range=_reward_range(result), title_text="estimate and confidence interval", row=1, col=1
    )
    fig.update_xaxes(title_text="gold questions asked", row=1, col=2)
    fig.update_yaxes(categoryorder="array", categoryarray=names, autorange="reversed")
    height = 170 + _ROW_PIXELS * len(workers)
    # The legend under the x axes' titles: 60 px below the plotting area (70 px tall here).
    legend_y = -60 / (height - 40 - 130)
    fig.update_layout(
        height=height, margin={"l": 10, "r": 10, "t": 40, "b": 130},
        legend={"orientation": "h", "y": legend_y, "yanchor": "top"},
    )  # fmt: skip
    return fig


def _draw_threshold(fig: Any, threshold: Threshold | None) -> None:
    if threshold is None or not math.isfinite(threshold.estimate):
        return
    label = f"threshold {threshold.estimate:.3f}"
    if threshold.lower < threshold.upper:
        fig.add_vrect(
            x0=threshold.lower, x1=threshold.upper, fillcolor="#888", opacity=0.2,
            line_width=0, layer="below", row=1, col=1,
        )  # fmt: skip
        label += f" [{threshold.lower:.3f}, {threshold.upper:.3f}]"
    else:
        label += " (given)"
    fig.add_vline(
        x=threshold.estimate, line_dash="dash", line_color="#555", row=1, col=1,
        annotation_text=label, annotation_position="top",
    )  # fmt: skip


def _answers_figure(history: RunHistory) -> Any:
    if len(history.answers) < 2:
        return None
    go = _plotly().graph_objects
    fig = go.Figure(
        go.Scatter(
            x=history.seconds, y=history.answers, mode="lines", name="answers",
            hovertemplate="%{y:,} answers after %{x:.3g} s<extra></extra>",
        )
    )  # fmt: skip
    fig.update_layout(
        height=320, xaxis_title="seconds since the run started", yaxis_title="answers received",
        margin={"l": 10, "r": 10, "t": 20, "b": 40},
    )  # fmt: skip
    return fig


def _threshold_figure(history: RunHistory, result: Result) -> Any:
    go = _plotly().graph_objects
    answers = [count for count, _ in history.threshold]
    points = [t for _, t in history.threshold]
    band = {"mode": "lines", "line": {"width": 0}, "hoverinfo": "skip", "showlegend": False}
    fig = go.Figure(
        [
            go.Scatter(x=answers, y=[_finite(t.upper) for t in points], **band),
            go.Scatter(
                x=answers, y=[_finite(t.lower) for t in points], fill="tonexty",
                fillcolor="rgba(100,100,100,0.25)", **band,
            ),
            go.Scatter(
                x=answers, y=[_finite(t.estimate) for t in points], mode="lines",
                name="threshold", line={"color": "#333"},
                customdata=[[t.lower, t.upper] for t in points],
                hovertemplate="after %{x:,} answers: %{y:.3f} "
                "[%{customdata[0]:.3f}, %{customdata[1]:.3f}]<extra></extra>",
            ),
        ]
    )  # fmt: skip
    fig.update_layout(
        height=340, xaxis_title="answers received", yaxis_title="threshold (reward scale)",
        margin={"l": 10, "r": 10, "t": 20, "b": 40}, showlegend=False,
    )  # fmt: skip
    fig.update_yaxes(range=_reward_range(result))
    return fig


def _gold_figure(result: Result, pool: WorkerPool) -> Any:
    """Workers by GOLD's rank: the round at which each left the majority's community."""
    go = _plotly().graph_objects
    ranked = result.ranking
    names = [pool.workers[w.arm] for w in ranked]
    terminal = [w.score is not None for w in ranked]
    rounds = [w.score if w.score is not None else result.total_pulls for w in ranked]
    fig = go.Figure(
        go.Bar(
            x=rounds, y=names, orientation="h",
            marker={
                "color": [_COLOURS[w.decision] for w in ranked],
                "opacity": [1.0 if t else 0.35 for t in terminal],
            },
            text=[f"rank {w.rank}" if t else f"rank {w.rank}: never terminal"
                  for w, t in zip(ranked, terminal, strict=True)],
            textposition="inside", insidetextanchor="start",
            hovertemplate="<b>%{y}</b>: %{text}, round %{x:,}<extra></extra>",
        )
    )  # fmt: skip
    for key, label in (("first_round", "first terminal round"),
                       ("outlier_cutoff_round", "outlier cutoff")):  # fmt: skip
        value = result.extra.get(key)
        if value is not None:
            fig.add_vline(x=value, line_dash="dot", annotation_text=label)
    fig.update_yaxes(categoryorder="array", categoryarray=names, autorange="reversed")
    fig.update_layout(
        height=150 + _ROW_PIXELS * len(ranked), xaxis_title="terminal round (answers so far)",
        margin={"l": 10, "r": 10, "t": 30, "b": 40},
    )  # fmt: skip
    return fig


def _reward_range(result: Result) -> list[float]:
    """The reward scale's ends, padded by 2% so that points on them stay visible."""
    low, high = float(result.params.get("lower", 0.0)), float(result.params.get("upper", 1.0))
    pad = (high - low) * 0.02
    return [low - pad, high + pad]


def _figure_html(fig: Any, div_id: str) -> str:
    # The empty template: plotly.js's own plain style, and no theme copied into each figure.
    fig.update_layout(template="none", font={"family": "system-ui, sans-serif", "size": 12})
    fig.update_xaxes(automargin=True)
    fig.update_yaxes(automargin=True)
    # A fixed div id (not plotly's random one): the same run always gives the same page.
    page = fig.to_html(full_html=False, include_plotlyjs=False, config=_CONFIG, div_id=div_id)
    return str(page)


# ---------------------------------------------------------------------------- page
def _section(anchor: str, title: str, figure: Any, empty: str) -> str:
    """A titled part of the page: the figure (a Plotly Figure), or ``empty`` without one."""
    if figure is None:
        body = f'<p class="empty">{_text(empty)}</p>'
    else:
        body = _figure_html(figure, f"{anchor}-plot")
    return f'<section id="{anchor}"><h2>{_text(title)}</h2>\n{body}\n</section>'


def _worker_table(result: Result, pool: WorkerPool) -> str:
    head = "".join(
        f"<th>{c}</th>"
        for c in ("rank", "worker", "decision", "leaning", "estimate", "interval", "answers",
                  "reason")
    )  # fmt: skip
    rows = []
    for w in result.ranking:
        leaning = w.leaning.value if w.decision is Decision.UNDECIDED else ""
        cells = (
            str(w.rank), pool.workers[w.arm], w.decision.value, leaning, _num(w.estimate),
            f"[{_num(w.lower)}, {_num(w.upper)}]", f"{w.pulls:,}", w.reason,
        )  # fmt: skip
        colour = _COLOURS[w.decision]
        rows.append(
            f'<tr style="border-left: 4px solid {colour}">'
            + "".join(f"<td>{_text(c)}</td>" for c in cells)
            + "</tr>"
        )
    return (
        f'<section id="workers"><h2>Every worker</h2>\n<table><thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(rows)}</tbody></table>\n</section>"
    )


def _plotly() -> Any:
    """The plotly package (with graph_objects, subplots and offline loaded), or the fix."""
    try:
        import plotly.graph_objects  # type: ignore[import-untyped]
        import plotly.offline  # type: ignore[import-untyped]
        import plotly.subplots  # type: ignore[import-untyped]
    except ModuleNotFoundError as error:
        raise ConfigError(
            f"the HTML report needs plotly, which is not installed ({error})",
            "install crowd-screener[html]",
        ) from None
    return plotly


def _finite(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _gap(high: float, low: float) -> float | None:
    return high - low if math.isfinite(high) and math.isfinite(low) else None


def _num(value: float) -> str:
    return f"{value:.3f}" if math.isfinite(value) else "-"


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
dl {{ display: grid; grid-template-columns: max-content 1fr; gap: 0.25rem 1rem; }}
dt {{ font-weight: 600; color: #555; }}
dd {{ margin: 0; }}
.empty {{ color: #666; font-style: italic; }}
table {{ border-collapse: collapse; font-size: 0.85rem; width: 100%; }}
th, td {{ text-align: left; padding: 0.2rem 0.5rem; border-bottom: 1px solid #eee; }}
</style>
<script>{plotly}</script>
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
