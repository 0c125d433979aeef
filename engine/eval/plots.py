"""Charts of an evaluation run: recall@k curves, precision vs recall, accuracy by question type, latency.

The figures are drawn with matplotlib's object API on an Agg canvas rather than through ``pyplot``: nothing
is registered in pyplot's global figure list and the process-wide backend is left alone, so the charts can
be made from a worker thread of the GUI, or next to a Qt backend, without side effects. matplotlib is an
optional dependency (``filinglens[eval]``) and is imported only when a chart is drawn.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engine.errors import MissingDependencyError
from engine.eval.metrics import page_recall_at_k

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from engine.eval.questions import EvalQuestion

log = logging.getLogger(__name__)

Page = tuple[str, int]
GoldPages = Mapping[str, Collection[Page]]

RECALL_KS = tuple(range(1, 11))
LOG_SCALE_SPREAD = 100.0  # latency axis goes logarithmic when the slowest row is this many times the fastest
_DPI = 120


def gold_pages(questions: Iterable[EvalQuestion]) -> dict[str, set[Page]]:
    """The ``gold`` argument of :func:`write_plots` from evaluation questions (those with gold pages)."""
    return {q.qid: set(q.gold_pages) for q in questions if q.gold_pages}


def recall_curve(rows: Sequence[dict], pipeline: str, gold: GoldPages,
                 ks: Sequence[int] = RECALL_KS) -> list[float]:
    """Mean page recall@k of one pipeline for each ``k``, over its rows whose question has gold pages.

    Pages come from each row's ranked ``page_indexes`` list (``pages`` in rows written before; JSON turns the
    ``(doc, page index)`` tuples into lists). Returns an empty list when no row of the pipeline has gold
    pages.
    """
    ranked = [([(str(d), int(p)) for d, p in r.get("page_indexes", r.get("pages")) or []], gold[r["qid"]])
              for r in rows if r["pipeline"] == pipeline and gold.get(r["qid"])]
    if not ranked:
        return []
    return [sum(page_recall_at_k(pages, g, k) for pages, g in ranked) / len(ranked) for k in ks]


def _mean(values: Iterable[float | bool | None]) -> float | None:
    xs = [float(v) for v in values if v is not None]
    return sum(xs) / len(xs) if xs else None


def _rows_of(rows: Sequence[dict], pipeline: str) -> list[dict]:
    return [r for r in rows if r["pipeline"] == pipeline]


def _qtype(row: dict) -> str:
    return row.get("qtype") or "?"


def _new_figure(width: float = 7.0, height: float = 4.5) -> Figure:
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError as exc:
        raise MissingDependencyError(
            "evaluation charts need matplotlib: pip install matplotlib==3.11.2 "
            "(or pip install 'filinglens[eval]')"
        ) from exc
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)  # attaches itself to the figure; savefig then renders with Agg
    return fig


def _save(fig: Figure, path: Path) -> Path:
    tmp = path.with_name(path.stem + ".tmp.png")
    try:
        fig.savefig(tmp, dpi=_DPI, format="png")
        tmp.replace(path)  # a reader never sees a half-written chart
    finally:
        fig.clear()  # frees the artists now; the figure is not in pyplot's registry, so nothing else holds it
        tmp.unlink(missing_ok=True)
    return path


def _no_data(ax: Axes, what: str) -> None:
    ax.text(0.5, 0.5, f"no {what} in these rows", ha="center", va="center", transform=ax.transAxes,
            color="grey")


def _plot_recall_at_k(ax: Axes, rows: Sequence[dict], pipelines: Sequence[str], colors: dict[str, str],
                      gold: GoldPages | None) -> None:
    drawn = False
    if gold is not None:
        for p in pipelines:
            curve = recall_curve(rows, p, gold)
            if curve:
                n = sum(1 for r in _rows_of(rows, p) if gold.get(r["qid"]))
                ax.plot(RECALL_KS, curve, marker="o", markersize=4, color=colors[p], label=f"{p} (n={n})")
                drawn = True
        ax.set_title("Page recall@k")
    else:
        # Without gold pages only the recalls the runner stored can be shown: k = 5 and k = 10.
        for p in pipelines:
            rs = _rows_of(rows, p)
            points = [(k, _mean(r.get(f"page_recall@{k}") for r in rs)) for k in (5, 10)]
            points = [(k, v) for k, v in points if v is not None]
            if points:
                n = sum(1 for r in rs if r.get("page_recall@5") is not None)
                ax.plot(*zip(*points, strict=True), marker="o", linestyle="--", color=colors[p],
                        label=f"{p} (n={n})")
                drawn = True
        ax.set_title("Page recall@k (k = 5 and 10 only: no gold pages given)")
    ax.set_xlabel("k (retrieved pages)")
    ax.set_ylabel("mean page recall@k")
    ax.set_xticks(RECALL_KS)
    ax.set_xlim(0.5, 10.5)
    ax.set_ylim(0, 1.02)
    ax.grid(alpha=0.3)
    if drawn:
        ax.legend(loc="best", fontsize="small")
    else:
        _no_data(ax, "page recall")


def _place_labels(ax: Axes, labels: Sequence[tuple[tuple[float, float], str]]) -> None:
    """Label points so that labels overlap neither each other nor the points, nor leave the axes.

    Pipelines often score close together; each label tries the four corners around its point and keeps
    the first free one (the last tried when none is free).
    """
    from matplotlib.figure import Figure as MplFigure

    fig = ax.get_figure()
    assert isinstance(fig, MplFigure)
    renderer = fig.canvas.get_renderer()  # type: ignore[attr-defined]  # Agg's canvas has one
    fig.draw_without_rendering()  # settles the constrained layout, so pixel positions are final
    frame = ax.get_window_extent(renderer)
    dots = [ax.transData.transform(xy) for xy, _ in labels]
    taken: list = []
    corners = ((7, 5, "left", "bottom"), (7, -5, "left", "top"), (-7, 5, "right", "bottom"),
               (-7, -5, "right", "top"))
    for xy, text in labels:
        for dx, dy, ha, va in corners:
            ann = ax.annotate(text, xy, xytext=(dx, dy), textcoords="offset points", ha=ha, va=va,
                              fontsize="small")
            box = ann.get_window_extent(renderer).expanded(1.05, 1.1)
            inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0 and box.y1 <= frame.y1)
            clear = not any(box.overlaps(b) for b in taken) and not any(box.contains(*d) for d in dots)
            if (inside and clear) or (dx, dy) == corners[-1][:2]:
                taken.append(box)
                break
            ann.remove()


def _plot_precision_recall(ax: Axes, rows: Sequence[dict], pipelines: Sequence[str],
                           colors: dict[str, str]) -> None:
    points = []
    for p in pipelines:
        rs = _rows_of(rows, p)
        prec, rec = _mean(r.get("page_precision") for r in rs), _mean(r.get("page_recall@5") for r in rs)
        if prec is not None and rec is not None:
            points.append((rec, prec, p))
    # Zoomed on the points (the runs seen so far sit far below 1), with room for the labels.
    x_max = min(1.0, max((r for r, _, _ in points), default=1.0) * 1.4 + 0.05)
    ax.set_xlim(0, x_max)
    ax.set_ylim(0, min(1.0, max((q for _, q, _ in points), default=1.0) * 1.4 + 0.05))
    for rec, prec, p in points:
        ax.scatter([rec], [prec], s=60, color=colors[p], label=p, zorder=3)
    _place_labels(ax, [((rec, prec), f"{p}\n({rec:.2f}, {prec:.2f})") for rec, prec, p in points])
    ax.set_title("Page precision vs page recall@5 (mean per pipeline)")
    ax.set_xlabel("page recall@5")
    ax.set_ylabel("page precision (top 5 pages)")
    ax.grid(alpha=0.3)
    if points:
        ax.legend(loc="best", fontsize="small")
    else:
        _no_data(ax, "page precision or recall")


Series = tuple[str, list[float | None], list[int]]  # (pipeline, value per group, rows behind each value)


def _grouped_bars(ax: Axes, groups: Sequence[str], series: Sequence[Series], colors: dict[str, str]) -> None:
    """Bars per group (x) and series (colour); a value of None leaves a gap, n is printed on each bar."""
    width = 0.8 / max(len(series), 1)
    for i, (name, values, counts) in enumerate(series):
        xs = [g + (i - (len(series) - 1) / 2) * width for g in range(len(groups))]
        heights = [v or 0.0 for v in values]
        bars = ax.bar(xs, heights, width=width * 0.95, color=colors[name], label=name)
        for bar, v, n in zip(bars, values, counts, strict=True):
            if v is not None:
                ax.annotate(f"{v:.2f}\nn={n}", (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                            xytext=(0, 2), textcoords="offset points", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)), groups, rotation=15 if max(map(len, groups), default=0) > 12 else 0)
    ax.set_ylim(0, 1.32)  # headroom for the value labels and the legend row above the 1.0 mark
    ax.set_yticks([i / 5 for i in range(6)])
    ax.grid(axis="y", alpha=0.3)


def _plot_by_type(ax: Axes, rows: Sequence[dict], pipelines: Sequence[str], colors: dict[str, str]) -> None:
    answering = [p for p in pipelines if any(r.get("correct") is not None for r in _rows_of(rows, p))]
    if answering:
        key, title, ylabel = "correct", "Answer accuracy by question type", "accuracy (judged answers)"
        shown = answering
    else:
        key = "page_recall@5"
        title = "Page recall@5 by question type (no answering pipeline in this run)"
        ylabel = "mean page recall@5"
        shown = [p for p in pipelines if any(r.get(key) is not None for r in _rows_of(rows, p))]
    types = sorted({_qtype(r) for r in rows if r["pipeline"] in shown})
    series = []
    for p in shown:
        values, counts = [], []
        for t in types:
            vals = [r[key] for r in _rows_of(rows, p) if _qtype(r) == t and r.get(key) is not None]
            values.append(_mean(vals))
            counts.append(len(vals))
        series.append((p, values, counts))
    ax.set_title(title)
    ax.set_xlabel("question type")
    ax.set_ylabel(ylabel)
    if series and types:
        _grouped_bars(ax, types, series, colors)
        ax.legend(loc="upper center", ncols=len(series), fontsize="small")
    else:
        _no_data(ax, "accuracy or page recall")


def _plot_latency(ax: Axes, rows: Sequence[dict], pipelines: Sequence[str], colors: dict[str, str]) -> None:
    timed = [(p, [float(r["seconds"]) for r in _rows_of(rows, p) if r.get("seconds") is not None])
             for p in pipelines]
    data = [(p, xs) for p, xs in timed if xs]
    ax.set_title("Latency per question")
    ax.set_xlabel("pipeline")
    ax.set_ylabel("seconds (whole pipeline)")
    if not data:
        _no_data(ax, "timings")
        return
    box = ax.boxplot([xs for _, xs in data], tick_labels=[f"{p}\n(n={len(xs)})" for p, xs in data],
                     patch_artist=True, showfliers=True, widths=0.5, medianprops={"color": "black"})
    for patch, (p, _) in zip(box["boxes"], data, strict=True):
        patch.set_facecolor(colors[p])
        patch.set_alpha(0.6)
    positive = [x for _, xs in data for x in xs if x > 0]
    if positive and max(positive) / min(positive) > LOG_SCALE_SPREAD:
        from matplotlib.ticker import FuncFormatter, LogLocator

        ax.set_yscale("log")
        ax.set_ylabel("seconds (whole pipeline, log scale)")
        # Ticks at 1-2-5 steps written as plain numbers: "0.02 s" reads faster than "2x10^-2".
        ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
        ax.yaxis.set_minor_formatter(FuncFormatter(lambda _v, _pos: ""))
    ax.grid(axis="y", alpha=0.3, which="both")


def write_plots(out_dir: Path, rows: Sequence[dict], pipelines: Sequence[str], *,
                gold: GoldPages | None = None) -> list[Path]:
    """Draw the run's charts as PNG files in ``out_dir`` and return their paths.

    Writes ``recall_at_k.png`` (mean page recall for k = 1..10 per pipeline, from each row's ranked
    ``pages``; with ``gold=None`` only the stored k = 5 and k = 10 points), ``precision_recall.png``,
    ``accuracy_by_type.png`` (accuracy of the answering pipelines by ``qtype``; page recall@5 by ``qtype``
    when no pipeline answered) and ``latency.png`` (box plot of ``seconds``, log scale when the spread
    exceeds 100x). A chart with nothing to show says so instead of being left out.

    Args:
        out_dir: Folder for the PNG files (created if missing).
        rows: Result rows as written to ``results.jsonl`` by :func:`engine.eval.runner.run_eval`.
        pipelines: Pipelines to draw, in legend order; those without rows are skipped.
        gold: Gold pages per question id (see :func:`gold_pages`), for the full recall@k curves.

    Raises:
        MissingDependencyError: matplotlib is not installed.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    present = [p for p in dict.fromkeys(pipelines) if any(r["pipeline"] == p for r in rows)]
    palette = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
               "#bcbd22", "#17becf")  # matplotlib's tab10, so a pipeline keeps its colour in every chart
    colors = {p: palette[i % len(palette)] for i, p in enumerate(present)}
    latency_width = max(5.0, 1.6 * len(present) + 2)  # room for each box's label
    charts = (
        ("recall_at_k.png", lambda ax: _plot_recall_at_k(ax, rows, present, colors, gold), (7.0, 4.5)),
        ("precision_recall.png", lambda ax: _plot_precision_recall(ax, rows, present, colors), (6.0, 5.0)),
        ("accuracy_by_type.png", lambda ax: _plot_by_type(ax, rows, present, colors), (8.0, 4.8)),
        ("latency.png", lambda ax: _plot_latency(ax, rows, present, colors), (latency_width, 4.5)),
    )
    written = []
    for name, draw, size in charts:
        fig = _new_figure(*size)
        draw(fig.add_subplot())
        written.append(_save(fig, out_dir / name))
    log.info("wrote %d charts to %s", len(written), out_dir)
    return written


__all__ = ["RECALL_KS", "gold_pages", "recall_curve", "write_plots"]
