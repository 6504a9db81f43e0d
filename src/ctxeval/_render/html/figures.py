"""The sections made of plots: metric@K, precision-recall, per-query differences, PROC vs %PROC."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .cells import _BETTER, _NEUTRAL, _WORSE, PALETTE, _e, _f, _Ids, _row_head, _swatch
from .plots import MAX_STEPS, _envelope, _figure_html, _Plotter, _style
from .validate import _count, _fail, _list, _map, _num, _number, _Report, _str


def _legend(rep: _Report, indices: Sequence[int]) -> str:
    items = "".join(
        f"<li>{_swatch(i)}{_e(rep.names[i])}{' (baseline)' if rep.names[i] == rep.baseline else ''}</li>"
        for i in indices
    )
    return f'<ul class="legend">{items}</ul>'


def _section_curves(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    curves = _map(rep.raw.get("curves"), "curves")
    series = _list(curves.get("series"), "curves.series")
    if not curves or not series:
        return ""
    ks = [_num(k, f"curves.ks[{i}]") for i, k in enumerate(_list(curves.get("ks"), "curves.ks", optional=False))]
    if any(k is None for k in ks):
        raise _fail("curves.ks", "expected numbers", curves.get("ks"))
    x = np.array(ks, dtype=np.float64)
    by_measure: dict[str, list[tuple[int, np.ndarray]]] = {}
    for i, s in enumerate(series):
        s = _map(s, f"curves.series[{i}]", optional=False)
        idx = rep.run_index(s.get("run"), f"curves.series[{i}].run")
        m = _str(s.get("measure"), f"curves.series[{i}].measure")
        vals = _list(s.get("values"), f"curves.series[{i}].values", optional=False)
        if len(vals) != len(ks):
            raise _fail(f"curves.series[{i}].values", f"expected {len(ks)} values (one per k)", len(vals))
        y = np.array(
            [np.nan if (v := _num(val, f"curves.series[{i}].values[{j}]")) is None else v for j, val in enumerate(vals)]
        )
        by_measure.setdefault(m, []).append((idx, y))
    figs = []
    used: set[int] = set()
    tokens = curves.get("axis") == "tokens"
    for m, lines in by_measure.items():
        fig = plot.figure(3.6, 2.5)
        ax = fig.add_subplot()
        for idx, y in lines:
            used.add(idx)
            ax.plot(x, y, marker="o" if len(x) <= 20 else None, markersize=2.5, linewidth=1.4, **_style(idx))
        ax.set_xlabel("budget (tokens)" if tokens else "K")
        ax.set_ylabel("mean")
        fid = ids.next()
        figs.append(_figure_html(plot.svg(fig, fid), fid, f"{_e(m)}@{'Btok' if tokens else 'K'}"))
    what = "budget of B tokens" if tokens else "cut-off K"
    return (
        f'<section id="curves"><h2>Metric@{"budget" if tokens else "K"} curves</h2>'
        f'<p class="note">The mean of each measure at every {what} (gaps: no query defines it).</p>'
        f'{_legend(rep, sorted(used))}<div class="grid">{"".join(figs)}</div></section>'
    )


def _section_pr(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    pr = _map(rep.raw.get("pr_curves"), "pr_curves")
    series = _list(pr.get("series"), "pr_curves.series")
    if not pr or not series:
        return ""
    rec = [
        _num(v, f"pr_curves.recall[{i}]")
        for i, v in enumerate(_list(pr.get("recall"), "pr_curves.recall", optional=False))
    ]
    if any(v is None for v in rec):
        raise _fail("pr_curves.recall", "expected numbers", pr.get("recall"))
    fig = plot.figure(4.6, 3.2)
    ax = fig.add_subplot()
    used = []
    for i, s in enumerate(series):
        s = _map(s, f"pr_curves.series[{i}]", optional=False)
        idx = rep.run_index(s.get("run"), f"pr_curves.series[{i}].run")
        vals = _list(s.get("precision"), f"pr_curves.series[{i}].precision", optional=False)
        if len(vals) != len(rec):
            raise _fail(
                f"pr_curves.series[{i}].precision", f"expected {len(rec)} values (one per recall level)", len(vals)
            )
        y = [
            np.nan if (v := _num(val, f"pr_curves.series[{i}].precision[{j}]")) is None else v
            for j, val in enumerate(vals)
        ]
        ax.plot(rec, y, marker="o", markersize=2.5, linewidth=1.4, **_style(idx))
        used.append(idx)
    ax.set_xlabel("recall")
    ax.set_ylabel("interpolated precision")
    ax.set_xlim(-0.02, 1.02)
    ax.set_ylim(-0.02, 1.02)
    fid = ids.next()
    rel_text = rep.raw.get("settings", {}).get("pr_relevance")
    cap = "Interpolated precision at each recall level, averaged over queries (11-point curve)" + (
        f"; relevant: {_e(str(rel_text))}" if rel_text else ""
    )
    return (
        '<section id="pr"><h2>Precision&ndash;recall curves</h2>'
        f'{_legend(rep, sorted(set(used)))}<div class="grid wide">{_figure_html(plot.svg(fig, fid), fid, cap)}</div></section>'
    )


def _per_query(rep: _Report, i: int) -> Mapping[str, Any]:
    return _map(rep.runs[i].get("per_query"), f"runs[{i}].per_query")


def _paired_diffs(rep: _Report, i: int, m: str) -> tuple[np.ndarray, int, int]:
    """Sorted ``run - baseline`` over shared queries where both are defined; NA-dropped and unpaired counts."""
    b = rep.index[rep.baseline]
    base_pq, run_pq = _per_query(rep, b), _per_query(rep, i)
    shared = [q for q in run_pq if q in base_pq]
    unpaired = len(run_pq) + len(base_pq) - 2 * len(shared)
    diffs = []
    dropped = 0
    for q in shared:
        rv = _num(_map(run_pq[q], f"runs[{i}].per_query[{q!r}]").get(m), f"runs[{i}].per_query[{q!r}][{m!r}]")
        bv = _num(_map(base_pq[q], f"runs[{b}].per_query[{q!r}]").get(m), f"runs[{b}].per_query[{q!r}][{m!r}]")
        if rv is None or bv is None:
            dropped += 1
        else:
            diffs.append(rv - bv)
    return np.sort(np.array(diffs, dtype=np.float64)), dropped, unpaired


def _section_per_query(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    b = rep.index[rep.baseline]
    others = [i for i in range(len(rep.runs)) if i != b]
    if not others or not rep.measures:
        return ""
    have = [i for i in range(len(rep.runs)) if rep.runs[i].get("per_query")]
    if b not in have or not any(i in have for i in others):
        return ""
    blocks = []
    for m in rep.measures:
        hb = rep.direction[m]
        data = [(i, *_paired_diffs(rep, i, m)) for i in others if i in have]
        lim = max((float(np.max(np.abs(d))) for _, d, _, _ in data if d.size), default=0.0)
        lim = lim * 1.08 if lim > 0 else 1.0
        figs = []
        for i, d, dropped, unpaired in data:
            fig = plot.figure(3.3, 1.9)
            ax = fig.add_subplot()
            n = d.size
            if n:
                edges, pos, neg = _envelope(d)
                up, down = (_BETTER, _WORSE) if hb is not False else (_WORSE, _BETTER)
                if hb is None:
                    up = down = _NEUTRAL
                # one filled step path per sign
                ax.stairs(pos, edges, baseline=0.0, fill=True, color=up, linewidth=0)
                ax.stairs(neg, edges, baseline=0.0, fill=True, color=down, linewidth=0)
                ax.set_xlim(0.5, n + 0.5)
                ax.xaxis.set_major_locator(plot.mpl.ticker.MaxNLocator(integer=True))
            ax.axhline(0, color="#333333", linewidth=0.7)
            ax.set_ylim(-lim, lim)
            ax.set_xlabel("queries, sorted by difference")
            ax.set_ylabel("run - baseline")
            # ties as compare counts them: |difference| <= its tie tolerance
            higher, lower = int(np.sum(d > rep.tie_tol)), int(np.sum(d < -rep.tie_tol))
            ties = n - higher - lower
            if hb is None:
                counts = f"{higher} higher, {ties} tied, {lower} lower"
            else:
                better, worse = (higher, lower) if hb else (lower, higher)
                counts = f"{better} better, {ties} tied, {worse} worse"
            notes = f"{n} paired queries"
            if n > MAX_STEPS:
                notes += f", drawn as the envelope of {MAX_STEPS} bins of consecutive queries"
            if dropped:
                notes += f"; {dropped} dropped (NA)"
            if unpaired:
                notes += f"; {unpaired} not in both runs"
            fid = ids.next()
            cap = f'{_swatch(i)}{_e(rep.names[i])} &minus; {_e(rep.baseline)}: <span class="counts">{counts}</span> ({notes})'
            figs.append(_figure_html(plot.svg(fig, fid), fid, cap))
        blocks.append(f'<h3>{_e(m)}</h3><div class="grid">{"".join(figs)}</div>')
    return (
        '<section id="per-query"><h2>Per-query differences to the baseline</h2>'
        '<p class="note">For every run and measure, the difference run &minus; baseline on each query where '
        'both values are defined, sorted; <span class="better-text">blue</span>: the run is better, '
        '<span class="worse-text">red</span>: worse (in the measure\'s direction; grey when the direction '
        "is unknown). The y axis is shared within a measure.</p>"
        f"{''.join(blocks)}</section>"
    )


def _section_proc(rep: _Report, plot: _Plotter, ids: _Ids) -> str:
    proc = rep.raw.get("proc")
    if proc is None:
        return ""
    proc = _map(proc, "proc")
    series = _list(proc.get("series"), "proc.series")
    if not series:
        return ""
    k = _num(proc.get("k"), "proc.k")
    ktxt = "K" if k is None else _f(k, 0)
    thr = _map(proc.get("thresholds"), "proc.thresholds", optional=False)
    t_proc = _number(thr.get("PROC"), "proc.thresholds.PROC")
    t_pct = _number(thr.get("%PROC"), "proc.thresholds['%PROC']")
    figs, rows = [], []
    for si, s in enumerate(series):
        s = _map(s, f"proc.series[{si}]", optional=False)
        idx = rep.run_index(s.get("run"), f"proc.series[{si}].run")
        pq = _map(s.get("per_query"), f"proc.series[{si}].per_query")
        # the verdict counts come from the model (the rule of ctxeval.diagnose), never recomputed here
        verdicts = _map(s.get("verdicts"), f"proc.series[{si}].verdicts", optional=False)
        counts = {
            c: _count(verdicts.get(c), f"proc.series[{si}].verdicts.{c}")
            for c in ("retrieval", "selection", "both", "healthy", "undefined")
        }
        xs, ys = [], []
        for q, pair in pq.items():
            w = f"proc.series[{si}].per_query[{q!r}]"
            pair = _list(pair, w, optional=False)
            if len(pair) != 2:
                raise _fail(w, "expected [PROC, %PROC]", pair)
            p, pct = _num(pair[0], f"{w}[0]"), _num(pair[1], f"{w}[1]")
            if p is not None and pct is not None:
                xs.append(p)
                ys.append(pct)
        fig = plot.figure(3.0, 2.7)
        ax = fig.add_subplot()
        ax.axvline(t_proc, color="#999999", linewidth=0.8, linestyle="--")
        ax.axhline(t_pct, color="#999999", linewidth=0.8, linestyle="--", xmin=0, xmax=1)
        if xs:
            ax.scatter(
                xs,
                ys,
                s=14 if len(xs) <= 500 else 3,
                alpha=0.55,
                color=PALETTE[idx % len(PALETTE)],
                linewidths=0,
                rasterized=len(xs) > 3000,
            )
        top = max(1.05, max(ys, default=0.0) + 0.05)
        ax.set_xlim(-0.03, max(1.05, max(xs, default=0.0) + 0.05))
        ax.set_ylim(-0.03, top)
        ax.set_xlabel(f"PROC@{ktxt}")
        ax.set_ylabel(f"%PROC@{ktxt}")
        label = {
            "transform": ax.transAxes,
            "fontsize": 7,
            "color": "#444444",
            "bbox": {"facecolor": "white", "alpha": 0.75, "linewidth": 0, "pad": 1},
        }
        ax.text(0.01, 0.99, "retrieval\nfailures", va="top", ha="left", **label)
        ax.text(0.99, 0.01, "selection failures", va="bottom", ha="right", **label)
        fid = ids.next()
        not_plotted = len(pq) - len(xs)
        cap = f"{_swatch(idx)}{_e(rep.names[idx])}: {len(xs)} queries plotted"
        if not_plotted:
            cap += f", {not_plotted} not plotted (PROC or %PROC NA)"
        figs.append(_figure_html(plot.svg(fig, fid), fid, cap))
        cells = "".join(f"<td>{counts[c]}</td>" for c in ("retrieval", "selection", "both", "healthy", "undefined"))
        rows.append(f"<tr>{_row_head(idx, rep.names[idx])}<td>{len(pq)}</td>{cells}</tr>")
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            "run",
            "queries",
            "retrieval failures",
            "selection failures",
            "both",
            "healthy",
            "undefined (PROC NA)",
        )
    )
    return (
        f'<section id="proc"><h2>PROC@{ktxt} vs %PROC@{ktxt}: fix the retriever or the reranker?</h2>'
        f'<p class="note">Each point is a query. PROC: share of the ideal top-{ktxt} value that the retrieval pool '
        f"holds at all; %PROC: share of that the final top {ktxt} realised. Retrieval failure: PROC &lt; {_f(t_proc, 2)} "
        f"and %PROC &ge; {_f(t_pct, 2)}; selection failure: PROC &ge; {_f(t_proc, 2)} and %PROC &lt; {_f(t_pct, 2)}; "
        "both: the two low; healthy otherwise.</p>"
        f'<div class="grid">{"".join(figs)}</div>'
        f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></section>'
    )
