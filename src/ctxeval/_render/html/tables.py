"""The sections made of tables: summary, differences, distraction, strata, settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .cells import _VERDICT_CLASS, _e, _f, _json_text, _p, _row_head, _swatch, _value_cell
from .validate import _ci, _direction, _list, _map, _num, _Report, _str


def _marker(comp: Mapping[str, Any] | None, higher_better: bool | None) -> str:
    """▲/▼ for a significant improvement/deterioration against the baseline in the measure's direction
    (as in the text reports); for a measure of unknown direction, ▲/▼ = higher/lower, uncoloured."""
    if comp is None or not comp["significant"]:
        return ""
    diff = comp["diff"]
    if diff is None or diff == 0:
        return ""
    up = diff > 0
    if higher_better is None:
        return f'<span class="sig neutral">{"▲" if up else "▼"}</span>'
    better = up == higher_better
    return f'<span class="sig {"better" if better else "worse"}">{"▲" if better else "▼"}</span>'


def _summary_table(
    rep: _Report,
    runs: Sequence[Mapping[str, Any]],
    comparisons: Mapping[tuple[str, str, str], Mapping[str, Any]],
    where: str,
) -> str:
    means: dict[str, list[float | None]] = {}
    for m in rep.measures:
        means[m] = [
            _num(_map(r.get("aggregate"), f"{where}[{i}].aggregate").get(m), f"{where}[{i}].aggregate[{m!r}]")
            for i, r in enumerate(runs)
        ]
    best: dict[str, float | None] = {}
    for m, vals in means.items():
        present = [v for v in vals if v is not None]
        hb = rep.direction[m]
        # a count (sum over queries) is not ranked: its total depends on how many queries a run has
        ranked = hb is not None and rep.aggregate[m] != "sum"
        best[m] = None if not ranked or len(present) < 2 else (max(present) if hb else min(present))
    head = "".join(
        f'<th scope="col">{_e(m)}'
        + ('<span class="dir">lower is better</span>' if rep.direction[m] is False else "")
        + ('<span class="dir">direction unknown</span>' if rep.direction[m] is None else "")
        + "</th>"
        for m in rep.measures
    )
    rows = []
    for i, r in enumerate(runs):
        name = _str(r.get("name"), f"{where}[{i}].name")
        idx = rep.run_index(name, f"{where}[{i}].name")
        cis = _map(r.get("ci"), f"{where}[{i}].ci")
        cells = []
        for m in rep.measures:
            v = means[m][i]
            ci = _ci(cis.get(m), f"{where}[{i}].ci[{m!r}]")
            cls = ' class="best"' if v is not None and best[m] is not None and v == best[m] else ""
            mark = "" if name == rep.baseline else _marker(comparisons.get((name, m, rep.baseline)), rep.direction[m])
            ci_html = f'<span class="ci">[{_f(ci[0])}, {_f(ci[1])}]</span>' if ci is not None else ""
            cells.append(f"<td{cls}>{_f(v)}{mark}{ci_html}</td>")
        bases = rep.settings.get("baselines") or [rep.baseline]
        tag = ' <span class="tag">baseline</span>' if name in bases else ""
        rows.append(f"<tr>{_row_head(idx, name, tag)}{''.join(cells)}</tr>")
    return f'<table class="summary"><thead><tr><th scope="col">run</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _not_means(rep: _Report) -> str:
    """Which columns are not arithmetic means (as compare's text reports say it)."""
    sums = [m for m in rep.measures if rep.aggregate[m] == "sum"]
    gms = [m for m in rep.measures if rep.aggregate[m] == "gmean"]
    parts = []
    if sums:
        parts.append(f"{_e(', '.join(sums))}: {'sum' if len(sums) == 1 else 'sums'} over queries, not ranked")
    if gms:
        parts.append(
            f"{_e(', '.join(gms))}: geometric {'mean' if len(gms) == 1 else 'means'} (of max(x, 1e-5); tested on the log scale)"
        )
    return f" Not means: {'; '.join(parts)}." if parts else ""


def _sig_legend(rep: _Report) -> str:
    if not rep.comparisons:
        return (
            f'<p class="note">Each cell: the mean over the queries where the measure is defined, and its {rep.level} '
            "confidence interval when given. <b>Bold</b>: best value of the measure. No comparisons to the "
            f"baseline in this report.{_not_means(rep)}</p>"
        )
    s = rep.settings
    test = _e(s.get("test", "paired"))
    corr = _e(s.get("correction", "the configured"))
    alpha = _e(s.get("alpha", "alpha"))
    return (
        f'<p class="note">Each cell: the mean over the queries where the measure is defined, and its {rep.level} '
        "confidence interval. <b>Bold</b>: best value of the measure. "
        '<span class="sig better">▲</span>/<span class="sig worse">▼</span>: significantly better/worse '
        f"than the baseline in the measure's direction (two-sided {test} test, {corr}-adjusted p &lt; {alpha}; "
        f"lower is better for harm-like measures).{_not_means(rep)}</p>"
    )


def _section_summary(rep: _Report) -> str:
    table = _summary_table(rep, rep.runs, rep.comparisons, "runs")
    valid_head = "".join(f'<th scope="col">{_e(m)}</th>' for m in rep.measures)
    valid_rows = []
    for i, r in enumerate(rep.runs):
        vq = _map(r.get("valid_queries"), f"runs[{i}].valid_queries")
        cells = "".join(
            f"<td>{_e(_f(_num(vq.get(m), f'runs[{i}].valid_queries[{m!r}]'), 0))}</td>" for m in rep.measures
        )
        valid_rows.append(f"<tr>{_row_head(i, rep.names[i])}{cells}</tr>")
    valid = (
        "<details><summary>Queries each mean is over (valid queries per measure)</summary>"
        f'<table class="plain"><thead><tr><th scope="col">run</th>{valid_head}</tr></thead><tbody>{"".join(valid_rows)}</tbody></table></details>'
    )
    return f'<section id="summary"><h2>Summary</h2>{table}{_sig_legend(rep)}{valid}</section>'


def _section_comparisons(rep: _Report) -> str:
    if not rep.comparisons:
        return ""
    rows = []
    named = any(c["against"] is not None for c in rep.comparisons.values())
    for (run, m, vs), c in rep.comparisons.items():
        ci = c["ci"]
        idx = rep.index[run]
        hb = rep.direction[m] if m in rep.direction else _direction(m)
        wtl = "/".join(_f(c[k], 0) for k in ("wins", "ties", "losses"))
        cells = [
            f"<td>{_f(c['mean'])}</td>",
            f"<td>{_f(c['baseline_mean'])}</td>",
            f"<td>{_f(c['diff'])}{_marker(c, hb)}</td>",
            f"<td>{'NA' if ci is None else f'[{_f(ci[0])}, {_f(ci[1])}]'}</td>",
            f"<td>{_p(c['p_value'])}</td>",
            f"<td>{_p(c['p_adjusted'])}</td>",
            f"<td>{'yes' if c['significant'] else 'no'}</td>",
            f"<td>{wtl}</td>",
            f"<td>{_f(c['n_queries'], 0)}</td>",
            f"<td>{_f(c['n_dropped'], 0)}</td>",
        ]
        tail = f' <span class="tag">vs {_e(vs)}</span>' if named else ""
        rows.append(
            f'<tr>{_row_head(idx, run, tail)}<td class="{"m long" if len(m) > 28 else "m"}">{_e(m)}</td>{"".join(cells)}</tr>'
        )
    head = "".join(
        f'<th scope="col">{h}</th>'
        for h in (
            "run",
            "measure",
            "mean",
            "baseline",
            "diff",
            f"{rep.level} CI of diff",
            "p",
            "p adj.",
            "sig.",
            "wins/ties/losses",
            "queries",
            "dropped (NA)",
        )
    )
    return (
        f'<section id="comparisons"><h2>{_differences_title(rep, named)}</h2>'
        f'<table class="plain"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
        '<p class="note">Paired by query over the queries both runs are evaluated on; queries where either '
        "value is NA are dropped (counted). Wins/ties/losses count queries where the run is better, equal or "
        "worse than the baseline.</p></section>"
    )


def _differences_title(rep: _Report, named: bool) -> str:
    if not named:
        return f"Differences to the baseline ({_e(rep.baseline)})"
    if rep.settings.get("pairs") == "all":
        return "Differences between every pair of runs (the row's run minus the run after vs)"
    bases = rep.settings.get("baselines") or [rep.baseline]
    names = ", ".join(_e(b) for b in bases if isinstance(b, str))
    return f"Differences to the baselines ({names}; one family of tests)"


def _section_distraction(rep: _Report) -> str:
    dist = rep.raw.get("distraction")
    if dist is None:
        return ""
    dist = _map(dist, "distraction")
    rows = [
        _map(r, f"distraction.rows[{i}]", optional=False)
        for i, r in enumerate(_list(dist.get("rows"), "distraction.rows"))
    ]
    k = _num(dist.get("k"), "distraction.k")
    ktxt = "K" if k is None else _f(k, 0)
    measures: list[str] = []
    for i, r in enumerate(rows):
        for m in _map(r.get("measures"), f"distraction.rows[{i}].measures"):
            m = _str(m, f"distraction.rows[{i}].measures key")
            if m not in measures:
                measures.append(m)
    cols: list[tuple[str, bool | None, list[float | None]]] = []
    for m in measures:
        cols.append(
            (
                m,
                _direction(m),
                [
                    _num(
                        _map(r.get("measures"), f"distraction.rows[{i}].measures").get(m),
                        f"distraction.rows[{i}].measures[{m!r}]",
                    )
                    for i, r in enumerate(rows)
                ],
            )
        )
    shown = [m for m, _, _ in cols]
    # the rate and the harm once: as the table's measures when it has them, else from the rows
    for label, key, family in (
        ("distractor rate", "distractor_rate", "DistractorRate"),
        ("distractor harm", "distractor_harm", "DistractorHarm"),
    ):
        if not any(m.startswith(family) for m in shown):
            cols.append((label, False, [_num(r.get(key), f"distraction.rows[{i}].{key}") for i, r in enumerate(rows)]))
    best = []
    for _, hb, vals in cols:
        present = [v for v in vals if v is not None]
        best.append(None if hb is None or len(present) < 2 else (max(present) if hb else min(present)))
    opts = [_map(r.get("optimal_k"), f"distraction.rows[{i}].optimal_k") for i, r in enumerate(rows)]
    fixed = [_num(o.get("best_fixed_k"), f"distraction.rows[{i}].optimal_k.best_fixed_k") for i, o in enumerate(opts)]
    show_fixed = any(v is not None for v in fixed)
    body, details = [], []
    for i, r in enumerate(rows):
        idx = rep.run_index(r.get("run"), f"distraction.rows[{i}].run")
        name = rep.names[idx]
        cells = []
        for (_m, _, vals), b in zip(cols, best):
            v = vals[i]
            cls = ' class="best"' if v is not None and b is not None and v == b else ""
            cells.append(f"<td{cls}>{_f(v)}</td>")
        verdict = r.get("verdict")
        vtext = "NA" if verdict is None else _str(verdict, f"distraction.rows[{i}].verdict")
        vcls = _VERDICT_CLASS.get(vtext.upper(), "v-other")
        opt = opts[i]
        cells.append(f'<td><span class="verdict {vcls}">{_e(vtext)}</span></td>')
        cells.append(
            f"<td>{_f(_num(opt.get('mean'), f'distraction.rows[{i}].optimal_k.mean'), 2)} / "
            f"{_f(_num(opt.get('median'), f'distraction.rows[{i}].optimal_k.median'), 1)}</td>"
        )
        if show_fixed:
            cells.append(f"<td>{_f(fixed[i], 0)}</td>")
        cells.append(f"<td>{_f(_num(r.get('hidden_harm'), f'distraction.rows[{i}].hidden_harm'))}</td>")
        body.append(f"<tr>{_row_head(idx, name)}{''.join(cells)}</tr>")
        worst = _list(r.get("worst_distractors"), f"distraction.rows[{i}].worst_distractors")
        wrows = []
        for j, wd in enumerate(worst):
            w = f"distraction.rows[{i}].worst_distractors[{j}]"
            wd = _map(wd, w, optional=False)
            rank = _num(wd.get("rank"), f"{w}.rank")
            wrows.append(
                f'<tr><td class="t">{_e(_str(wd.get("query"), f"{w}.query", ids=True))}</td><td class="t">{_e(_str(wd.get("doc"), f"{w}.doc", ids=True))}</td>'
                f'<td>{_f(rank, 0)}</td><td>{_f(_num(wd.get("utility"), f"{w}.utility"), 3)}</td><td class="t">{_e(wd.get("why", ""))}</td></tr>'
            )
        if wrows:
            details.append(
                f"<details><summary>Worst distractors of {_swatch(idx)}{_e(name)} ({len(wrows)})</summary>"
                '<table class="plain"><thead><tr><th scope="col">query</th><th scope="col">doc</th><th scope="col">rank</th>'
                f'<th scope="col">utility</th><th scope="col">why flagged</th></tr></thead><tbody>{"".join(wrows)}</tbody></table></details>'
            )
    head = "".join(f'<th scope="col">{_e(m)}</th>' for m, _, _ in cols)
    head += "".join(
        f'<th scope="col">{h}</th>'
        for h in ("verdict", "optimal k (mean / median)") + (("best fixed k",) if show_fixed else ()) + ("hidden harm",)
    )
    rules = _map(dist.get("rules"), "distraction.rules")
    umap = dist.get("utility_map")
    source = dist.get("utility_source")
    settings = (
        '<table class="kv"><tbody>'
        f'<tr><th scope="row">k</th><td>{_e(ktxt)}</td></tr>'
        f'<tr><th scope="row">utility source</th><td>{_value_cell(source)}</td></tr>'
        f'<tr><th scope="row">utility map (grade &rarr; utility)</th><td>{_value_cell(umap)}</td></tr>'
        f'<tr><th scope="row">distractor rules</th><td>{_value_cell(dict(rules)) if rules else _value_cell(None)}</td></tr>'
        + "".join(
            f'<tr><th scope="row">{_e(key)}</th><td>{_value_cell(value)}</td></tr>'
            for key, value in dist.items()
            if key not in ("k", "rules", "utility_map", "utility_source", "rows")
        )
        + "</tbody></table>"
    )
    return (
        f'<section id="distraction"><h2>Distraction at k = {_e(ktxt)}</h2>'
        '<p class="note">Distractor rate: share of the top-k passages with negative utility; distractor harm: '
        "the sum of their negative utilities; the verdict follows the mean distractor rate "
        "(SAFE / RISKY / DANGEROUS). Hidden harm: what the distractors in the top k cost as a share of the "
        "ideal (ndDCG without them minus ndDCG; &ge; 0), the harm the rank measures do not see. "
        "<b>Bold</b>: best value of the column.</p>"
        f'<table class="plain distraction"><thead><tr><th scope="col">run</th>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
        f"{''.join(details)}<h3>Distraction settings</h3>{settings}</section>"
    )


def _section_strata(rep: _Report) -> str:
    strata = rep.raw.get("strata")
    if not strata:
        return ""
    strata = _map(strata, "strata")
    blocks = []
    for si, (name, st) in enumerate(strata.items()):
        w = f"strata[{name!r}]"
        st = _map(st, w, optional=False)
        runs = [_map(r, f"{w}.runs[{i}]", optional=False) for i, r in enumerate(_list(st.get("runs"), f"{w}.runs"))]
        comps = rep._comparisons(st.get("comparisons"), f"{w}.comparisons")
        n = _num(st.get("n_queries"), f"{w}.n_queries")
        small = bool(st.get("small"))
        flag = '<span class="warn">few queries: read with care</span>' if small else ""
        source = st.get("source")
        meta = f'<p class="meta">source: {_e(source if source is not None else "NA")}; {_f(n, 0)} queries {flag}</p>'
        table = _summary_table(rep, runs, comps, f"{w}.runs") if runs else '<p class="muted">no runs</p>'
        blocks.append(f'<div class="stratum" id="stratum-{si + 1}"><h3>{_e(name)}</h3>{meta}{table}</div>')
    return (
        '<section id="strata"><h2>Strata</h2>'
        '<p class="note">The summary per stratum of queries (markers as in the summary, tested within the '
        "stratum).</p>"
        f"{''.join(blocks)}</section>"
    )


def _section_settings(rep: _Report) -> str:
    srows = "".join(f'<tr><th scope="row">{_e(k)}</th><td>{_value_cell(v)}</td></tr>' for k, v in rep.settings.items())
    rrows = []
    for i, r in enumerate(rep.runs):
        queries = _map(r.get("queries"), f"runs[{i}].queries")
        acc = (
            "; ".join(f"{_e(k)}: {_e(_json_text(v))}" for k, v in queries.items())
            or '<span class="muted">not given</span>'
        )
        extra = {
            k: v
            for k, v in r.items()
            if k not in ("name", "path", "aggregate", "valid_queries", "queries", "ci", "per_query")
        }
        more = f"<pre>{_e(_json_text(extra))}</pre>" if extra else ""
        path = r.get("path")
        rrows.append(
            f'<tr>{_row_head(i, rep.names[i])}<td class="t">{_e(path) if path is not None else "NA"}</td><td class="t">{acc}{more}</td></tr>'
        )
    return (
        '<section id="settings"><h2>Runs and settings</h2>'
        '<table class="plain"><thead><tr><th scope="col">run</th><th scope="col">source</th>'
        f'<th scope="col">query accounting</th></tr></thead><tbody>{"".join(rrows)}</tbody></table>'
        f'<h3>Settings that produced every number</h3><table class="kv"><tbody>{srows or "<tr><td>none given</td></tr>"}</tbody></table></section>'
    )
