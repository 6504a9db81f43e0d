"""A drop-in for the ``trec_eval`` program (10.0, or 9.0.x with ``version=9``): same measure names and
parameters, same query rules, same output, byte for byte. The measures come from the registry: every
family declares its trec_eval spec beside its kernel (:class:`~ctxeval._measures.TrecSpec`).

What trec_eval does, and what this reproduces:

* **Input.** Qrels ``qid iter docno rel`` and results ``qid iter docno rank sim runid`` (the rank is
  ignored; words after the runid are ignored too, and the lines that had them counted in a note).
  10.0 skips comment lines (``#``); 9.0.x has none, so a 9.x reading of a file holding one stops
  with an error naming the line. Docs are ranked by ``sim`` (a double in 10.0, a float in 9.x),
  descending, ties by docno descending; ``-M`` keeps the first N of each topic after ranking; ``-J``
  then drops the docs not judged (>= 0). A topic that ``-M`` / ``-J`` leave with nothing is still
  evaluated, with no doc retrieved. Duplicate docs in a topic are an error. The runid is the last
  line's.
* **Queries.** Topics of the results without judgments are ignored. A judged topic without results
  stops 10.0 (exit status 4, after the ``-q`` lines of the topics before it) and is left out by 9.x,
  unless ``-c``: then 10.0 evaluates it against a one-document "bogus" ranking (every measure scores
  what a ranking of one unjudged doc scores; ``num_ret``, ``utility``, ``unj``, ``rbp_resid`` and
  ``relstring`` are reset to nothing) and prints it with ``-q``; 9.x instead adds it as zeros to
  every average without printing it. With ``-c`` the summary ``num_rel`` counts every judgment with
  rel > 0 in the qrels (trec_eval's ``te_calc_avg_num_rel``), and ``gm_*`` use the floor 0.00001 for
  the missing topics.
* **0/0.** Where trec_eval divides 0 by 0 (the precision of a topic that retrieved nothing, which
  ``iprec_at_recall`` gives to its cut-offs at 0 relevant docs, and ``11pt_avg`` averages), the value
  is NaN, printed ``-nan`` as glibc prints x86-64's default NaN; a NaN read from a ``-Z`` file
  prints ``nan``; an average over topics holding NaNs is the last of them (as trec_eval's build adds).
* **Summary.** Averages are sums in topic order divided by the number of topics; ``num_*`` are sums;
  ``gm_map`` / ``gm_bpref`` are ``exp(Σ log(max(v, 0.00001)) / n)``.
* **Output.** ``%-22s\\t%s\\t%6.4f`` (``%ld`` for counts), measures in trec_eval's fixed order, the
  ``-q`` lines topic by topic, then ``all``.

Checked byte for byte against both programs built from source: ``tests/cli/test_trec_eval_suite.py``.
Accepted beyond trec_eval: blank lines and consecutive comment lines in qrels. Refused where trec_eval
reads garbage silently: a score, grade or z-score that is not a number (``atof`` would give 0).

(The program's flow, z-scores, judgment groups, preferences and the output here; ``-m`` parsing with
C's atol/atof and the measures' columns in :mod:`ctxeval._trec_eval_measures`; the measures themselves
live in the registry.)
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ._context.prefs import build_preferences
from ._core.evaldata import EvalData
from ._core.extras import JudgmentGroups
from ._core.join import join, pair_lookup, positions
from ._errors import ConfigError, FormatError, MeasureError, QueryMismatchError
from ._io.model import Qrels, Run
from ._io.read import read_file, resolve_duplicates
from ._io.rel_formats import read_prefs, read_qrels_jg
from ._io.side import read_zscores
from ._io.source import compression, local_copy
from ._io.trec import locate_in_trec, open_bytes, read_trec
from ._measures import TrecArgs, TrecSpec, trec_specs
from ._measures.trec_support import MIN_GEO_MEAN
from ._trec_eval_measures import TrecEvalMeasureError, _Column, _columns, _fmt, _select, _seq_total, nicknames

__all__ = ["TrecEvalMeasureError", "TrecEvalStop", "nicknames", "trec_eval"]

REL_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")
# what trec_eval says when a measure meets a relevance file of another format
_WRONG_FORMAT = {
    "qrels": "trec_eval.form_res_qrels: rel_info format not qrels or results format not trec_results",
    "qrels_jg": "trec_eval: rel_info format not qrels_jg or results format not trec_results",
    "prefs": "trec_eval.form_prefs_info: prefs_info format not (prefs or qrels_prefs) or results format not "
    "trec_results",
}


class TrecEvalStop(QueryMismatchError):
    """trec_eval stopped with its own message (``str(self)``, for stderr) and exit status: 4 when 10.0
    meets a judged topic without results part-way (``printed`` is what it wrote to stdout before),
    7 when no topic has both results and judgments."""

    def __init__(self, printed: str, message: str, exit_code: int = 4) -> None:
        super().__init__(message)
        self.printed = printed
        self.exit_code = exit_code


# --------------------------------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------------------------------


def _last_tag(path: Path) -> str:
    """The run id of the file's last run line (trec_eval prints the last line's)."""
    with open(path, "rb") as fh:
        gz = compression(fh.read(64), str(path)) is not None  # (gzip, bzip2, xz: read whole)
        fh.seek(0, os.SEEK_END)
        size = fh.tell()
        take = min(size, 1 << 16)
        while not gz:
            fh.seek(size - take)
            tail = fh.read(take)
            lines = [ln for ln in tail.splitlines() if ln.strip() and not ln.lstrip().startswith(b"#")]
            if len(lines) > 1 or take == size:
                break
            take = min(size, take * 8)
    if gz:
        lines = [ln for ln in open_bytes(path).splitlines() if ln.strip() and not ln.lstrip().startswith(b"#")]
    fields = lines[-1].split() if lines else []
    return fields[5].decode("utf-8", errors="replace") if len(fields) >= 6 else ""


def _read_judgments(
    path: Path, source: str, rel_format: str, version: int
) -> tuple[Qrels, dict[str, Qrels] | None, list | None]:
    """The qrels file read in its ``-R`` format: the qrels, and the judgment groups or preferences."""
    groups = prefs = None
    if version < 10:
        _refuse_comments_v9(path, 5 if rel_format == "prefs" else 4, source)
    if rel_format == "qrels_jg":
        groups = {jg: Qrels.from_dict(q) for jg, q in read_qrels_jg(path, source).items()}
        qr = _union(list(groups.values()))
    elif rel_format in ("prefs", "qrels_prefs"):
        prefs = read_prefs(path, source, qrels_form=rel_format == "qrels_prefs")
        judged: dict[str, dict[str, int]] = {}
        for line in prefs:
            judged.setdefault(line.qid, {})[line.doc] = 1
        qr = Qrels.from_dict(judged)  # the topics and docs judged: which topics are evaluated
    else:
        read = read_file(path, "qrels", "trec", source=source)
        qr = Qrels(read.columns, source, dropped_duplicates=read.dropped)
    return qr, groups, prefs


def _read_run(path: str, notes: list[str], version: int) -> tuple[Run, str]:
    """The results file read as trec_eval reads it: words after the run tag are ignored (and the
    lines that had them counted in a note); the run id is the last line's. ``-`` (standard input) or
    another stream is read once, into a temporary file."""
    source = "<stdin>" if path == "-" else path
    with local_copy(path, source, "results") as p:
        return _read_results(p, source, notes, version)


def _read_results(path: Path, source: str, notes: list[str], version: int) -> tuple[Run, str]:
    if version < 10:
        _refuse_comments_v9(path, 6, source)
    parsed = read_trec(path, "run", source, trailing="ignore")
    cols, _ = resolve_duplicates(parsed.columns, "run", source, "error", lambda q, d: locate_in_trec(path, q, d))
    if parsed.trailing:
        n = parsed.trailing
        notes.append(
            f"{source}: {n} line{'s' if n != 1 else ''} with words after the run tag (the sixth field); "
            "ignored, as trec_eval ignores them"
        )
    runid = parsed.tag if parsed.tag is not None else _last_tag(path)
    return Run(cols, runid or "run", source), runid


_COMMENT = re.compile(rb"(?m)^[ \t]*#[^\n]*")


def _refuse_comments_v9(path: Path, n_fields: int, source: str | None = None) -> None:
    """trec_eval 9.0.x has no comment lines (10.0 skips lines starting with ``#``): a 9.x reading of
    a file holding one stops, as 9.0.x does when the line lacks the format's fields ("Malformed
    line"), and also when it has them, where 9.0.x would read it as data for a query named ``#...``."""
    data = open_bytes(path)
    found = _COMMENT.search(data)
    if found is None:
        return
    line = found.group().decode("utf-8", errors="replace").rstrip("\r")
    fields = line.split()
    if len(fields) == n_fields or (n_fields == 6 and len(fields) > 6):
        what = f"would take this one as data for a query named {fields[0]!r}"
    else:
        what = "stops here with 'Malformed line'"
    raise FormatError(
        source or str(path),
        data.count(b"\n", 0, found.start()) + 1,
        f"a comment line: trec_eval 9.0.x reads none and {what}; trec_eval 10.0 skips them (--trec-eval-version 10)",
        line,
    )


def _truncate(run: Run, max_docs: int | None, judged_only: bool, qrels: Qrels, ties: str) -> Run:
    """``-M``: the first N docs of each topic after ranking; ``-J``: only the docs judged (>= 0)."""
    if max_docs is None and not judged_only:
        return run
    c = run.columns
    rows = run.ranked_rows(ties)
    if max_docs is not None:
        seg = c.layout.segment_of(rows)
        first = np.r_[0, np.flatnonzero(seg[1:] != seg[:-1]) + 1]
        rank0 = np.arange(rows.size) - np.repeat(first, np.diff(np.r_[first, rows.size]))
        rows = rows[rank0 < max(int(max_docs), 0)]
    if judged_only:
        heads = np.sort(qrels.columns.layout.heads)
        q = positions(c.layout.heads, heads)[c.layout.segment_of(rows)]
        hit, qrow = pair_lookup(q, c.doc.take(rows), qrels.columns, heads)
        rows = rows[hit[qrels.columns.values[qrow] >= 0]]
    return Run(c.take(np.sort(rows)), run.name, run.source)


# --------------------------------------------------------------------------------------------------
# the program
# --------------------------------------------------------------------------------------------------


def _union(parts: list[Qrels]) -> Qrels:
    """The queries and docs of several qrels (a doc's first grade): the topics trec_eval evaluates."""
    merged: dict[str, dict[str, int]] = {}
    for part in parts:
        for qid, docs in part.to_dict().items():
            into = merged.setdefault(qid, {})
            for doc, grade in docs.items():
                into.setdefault(doc, grade)
    return Qrels.from_dict(merged)


def _judgment_groups(groups: dict[str, Qrels], run: Run, data: EvalData, ties: str) -> JudgmentGroups:
    """The run joined with each group's qrels, and where each evaluated query sits in each."""
    evals, where = [], []
    qids = np.asarray(data.qids)
    for qrels in groups.values():
        g = join(qrels.columns, run.columns, ties=ties, missing="zero", run_name=run.name)
        evals.append(g)
        where.append(positions(qids, np.asarray(g.qids)))
    return JudgmentGroups(tuple(groups), tuple(evals), tuple(where))


MISSING_ZSCORE = -1000000.0  # trec_eval.h: MISSING_ZSCORE_VALUE


def _to_zscores(
    table: dict[tuple[str, str], tuple[float, float]], qids: Sequence[str], name: str, values: np.ndarray
) -> np.ndarray:
    """trec_eval's ``te_convert_to_zscore`` of one measure's per-topic values."""
    out = np.empty_like(values)
    for i, (qid, v) in enumerate(zip(qids, values.tolist())):
        found = table.get((qid, name))
        if found is None:
            out[i] = MISSING_ZSCORE
            continue
        mean, stddev = found
        if math.isnan(v) or math.isnan(mean) or math.isnan(stddev):
            # (v - mean) / stddev in trec_eval's build: the first NaN operand is the result's
            out[i] = v if math.isnan(v) else mean if math.isnan(mean) else stddev
        elif stddev:
            out[i] = (v - mean) / stddev
        else:
            out[i] = 0.0 if v == mean else MISSING_ZSCORE
    return out


def trec_eval(
    qrels: str | os.PathLike[str],
    results: str | os.PathLike[str],
    measures: Sequence[str] = (),
    *,
    query: bool = False,
    complete: bool = False,
    level: int = 1,
    max_docs: int | None = None,
    summary: bool = True,
    judged_only: bool = False,
    n_docs: int = 0,
    version: int = 10,
    zscores: str | os.PathLike[str] | None = None,
    rel_format: str = "qrels",
    notes: list[str] | None = None,
) -> str:
    """Evaluate like ``trec_eval [-q] [-c] [-n] [-J] [-l L] [-M N] [-N D] [-Z FILE] {-m measure}* qrels
    results`` and return what it prints.

    ``zscores`` (``-Z``): a file of ``qid measure mean stddev`` lines; every per-topic value becomes
    ``(value - mean) / stddev`` before it is printed and summarised, and is printed as a ``Z``-prefixed
    double; a topic or measure the file lacks, or a stddev of 0 with a value other than the mean,
    gives trec_eval's missing value -1000000 (``convert_zscores.c``).

    ``rel_format`` (``-R``): ``qrels``; ``qrels_jg`` (``qid jg docid grade``: judgments in groups,
    e.g. one per assessor; the ``*_avgjg`` measures average over a query's groups); ``prefs``
    (``qid jg jsg docid rel_level``: preferences, for the ``prefs_*`` measures, ``-m all_prefs``),
    or ``qrels_prefs`` (a qrels file read as preferences: the iter column is the judgment group).
    The preference measures rank a run by score and then doc id *ascending* (trec_eval's
    ``form_prefs_counts.c``), apply ``-M`` in that order and ignore ``-J``.

    ``notes``: a list that receives what the caller should tell the user (lines of the results file
    with words after the run tag, which trec_eval ignores)."""
    notes = [] if notes is None else notes
    if version not in (9, 10):
        raise ConfigError(f"trec_eval version must be 9 or 10, got {version!r}")
    if max_docs is not None and max_docs < 0:
        raise ConfigError(f"-M must be a non-negative number of docs, got {max_docs}")
    if rel_format not in REL_FORMATS:
        raise ConfigError(f"trec_eval: -R must be one of {', '.join(REL_FORMATS)}, got {rel_format!r}")
    sel = _select(measures, version)
    ztable = None if zscores is None else read_zscores(zscores)
    source = os.fspath(qrels)
    if source.startswith("irds:") and rel_format == "qrels":  # an ir_datasets dataset's qrels, by name
        read = read_file(source, "qrels", "trec", source=source)
        qr, groups, prefs = Qrels(read.columns, source, dropped_duplicates=read.dropped), None, None
    else:
        with local_copy(qrels, source, "qrels") as local:  # a stream (-, a pipe) read once, into a file
            qr, groups, prefs = _read_judgments(local, source, rel_format, version)
    run, runid = _read_run(os.fspath(results), notes, version)
    ties = "trec10" if version >= 10 else "trec"  # 10.0 reads scores as doubles, 9.x as floats
    before = np.sort(run.columns.layout.heads)  # the topics with results, before -M and -J
    if prefs is None:  # the preference measures rank and cut the run themselves, and ignore -J
        run = _truncate(run, max_docs, judged_only, qr, ties)
    # a topic whose docs -M / -J removed is still a topic with results (trec_eval cuts while it
    # evaluates): it is evaluated with nothing retrieved, and printed, in both versions
    emptied = run.columns.layout.n_segments < before.size
    policy = "zero" if complete or emptied else "ignore"
    data = join(qr.columns, run.columns, ties=ties, missing=policy, run_name=run.name)
    for spec in trec_specs(version):
        reads = "prefs" if rel_format == "qrels_prefs" else rel_format
        if spec.name in sel.marked and spec.rel_format not in (None, reads):
            raise TrecEvalStop(
                "", f"{_WRONG_FORMAT[spec.rel_format]}\ntrec_eval: Can't calculate measure '{spec.name}'"
            )
    if groups is not None:
        data = data.with_extras(judgment_groups=_judgment_groups(groups, run, data, ties))
    if prefs is not None:
        built = build_preferences(prefs, run, data.qids, source=os.fspath(qrels), version=version, max_docs=max_docs)
        data = data.with_extras(preferences=built)
    present = positions(np.asarray(data.qids), before) >= 0
    # 10.0 stops at the first judged topic (in qid order) that the results lack, unless -c: it
    # prints (with -q) the topics before it, then "result qid '...' not found in qrels", exit 4
    stop_at = None
    if version >= 10 and not complete and data.accounting.missing_ids:
        lacking = np.asarray(data.accounting.missing_ids)
        lacking = lacking[positions(lacking, before) < 0]
        stop_at = str(lacking[0]) if lacking.size else None
    if stop_at is not None and not present.any():
        raise TrecEvalStop("", f"trec_eval: result qid '{stop_at}' not found in qrels")
    # 9.x counts the topics with results only, -c or not; 10.0 with -c every judged topic
    if data.n_queries == 0 or ((version < 10 or not complete) and not present.any()):
        raise TrecEvalStop("", "trec_eval: No queries with both results and relevance info", 7)
    keep = None if complete else np.flatnonzero(present)  # without -c: the topics with results only
    qids = data.qids if keep is None else [data.qids[i] for i in keep.tolist()]
    missing = ~present if keep is None else np.zeros(keep.size, dtype=bool)
    n_all = len(qids)
    # trec_eval's count of retrieved docs is 0 for a topic cut to nothing, and for a topic without
    # results under 10.0's -c when -J or -M0 drops its one bogus doc ("ceci_nest_pas_un_docno")
    bogus_kept = version >= 10 and complete and max_docs != 0 and not judged_only
    no_docs = (data.n_ret == 0) & (present | (not bogus_kept))

    args = TrecArgs(level, version, n_docs, no_docs)
    columns: list[tuple[TrecSpec, list[_Column]]] = []
    for spec in trec_specs(version):
        if spec.name not in sel.marked:
            continue
        if spec.kind in ("runid", "num_q"):
            columns.append((spec, []))
            continue
        try:
            cols = _columns(spec, sel.params.get(spec.name), data, args)
        except TrecEvalMeasureError:
            raise
        except MeasureError as exc:  # trec_eval cannot calculate it (utility's coefficients): status 4
            raise TrecEvalMeasureError(str(exc), 4) from None
        for col in cols:
            if keep is not None:
                col.values = col.values[keep] if isinstance(col.values, np.ndarray) else [col.values[i] for i in keep]
            if complete and missing.any() and isinstance(col.values, np.ndarray):
                vals = np.array(col.values, dtype=np.float64)
                if version < 10:
                    # 9.x: missing topics are not evaluated, they add 0 to the sums
                    vals[missing] = 0.0
                elif col.reset_missing:
                    vals[missing] = 0.0
                col.values = vals
            if ztable is not None and isinstance(col.values, np.ndarray):
                zs = _to_zscores(ztable, qids, col.name, np.asarray(col.values, dtype=np.float64))
                if complete and version < 10:
                    zs[missing] = 0.0  # 9.x: topics without results are not evaluated, not converted
                col.values = zs
        columns.append((spec, cols))
    z = "Z" if ztable is not None else ""

    lines: list[str] = []
    if query:
        printed = np.flatnonzero(~missing) if version < 10 else np.arange(n_all)
        for qi in printed.tolist():
            qid = qids[qi]
            if stop_at is not None and qid > stop_at:
                break
            for _spec, cols in columns:
                for col in cols:
                    if not col.per_query:
                        continue
                    if col.fmt == "str":
                        lines.append("%-22s\t%s\t'%s'" % (col.name, qid, col.values[qi]))
                    else:
                        shown = _fmt(float(col.values[qi]), "double" if z else col.fmt)
                        lines.append("%s%-22s\t%s\t%s" % (z, col.name, qid, shown))
    if stop_at is not None:
        raise TrecEvalStop(
            "".join(line + "\n" for line in lines), f"trec_eval: result qid '{stop_at}' not found in qrels"
        )
    if summary:
        n_eval = n_all if (version >= 10 or not complete) else int((~missing).sum())
        divisor = n_all
        for spec, cols in columns:
            if spec.kind == "runid":
                lines.append("%-22s\t%s\t%s" % ("runid", "all", runid))
                continue
            if spec.kind == "num_q":
                lines.append("%s%-22s\t%s\t%s" % (z, "num_q", "all", _fmt(float(n_all), "double" if z else "long")))
                continue
            for col in cols:
                if col.summary == "none":
                    continue
                vals = np.asarray(col.values, dtype=np.float64)
                if col.summary == "sum":
                    if spec.name == "num_rel" and complete:  # the qrels count, never a z-score
                        total = float(int((qr.columns.values > 0).sum()))
                    else:
                        total = _seq_total(vals)
                    lines.append("%s%-22s\t%s\t%s" % (z, col.name, "all", _fmt(total, "double" if z else "long")))
                elif col.summary == "gm":
                    use = vals if version >= 10 else vals[~missing]
                    # C's MAX(v, floor): a NaN is not > the floor, so it counts as the floor
                    logs = np.array([math.log(v if v > MIN_GEO_MEAN else MIN_GEO_MEAN) for v in use.tolist()])
                    total = _seq_total(logs)
                    if version < 10 and complete:
                        total += (n_all - n_eval) * math.log(MIN_GEO_MEAN)
                    value = math.exp(total / divisor) if divisor > 0 else 0.0
                    lines.append("%s%-22s\t%s\t%s" % (z, col.name, "all", _fmt(value, "double")))
                else:
                    total = _seq_total(vals)
                    value = total / divisor if divisor else total
                    lines.append("%s%-22s\t%s\t%s" % (z, col.name, "all", _fmt(value, "double")))
    return "".join(line + "\n" for line in lines)
