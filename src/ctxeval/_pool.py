"""What the set-based RAG measures need beyond the run and the qrels: the grade map onto the 1–5
utility scale, the retrieval pool, and the doc → group mapping of the novelty-discounted variant.

* **Grade map.** The RAG measures read ``EvalData.j_util``/``q_util``, the qrels grades after the map;
  every other measure (and every ``rel=`` threshold) reads the qrels' own grades.
* **Pool.** A system is a pair: the retrieval pool (a run cut at ``pool_depth``) and the final
  ordering (the run being evaluated). Without a pool run, the run itself cut at ``pool_depth``
  (default: its full length) is the pool. A final run with docs outside an explicit pool is an
  error (:class:`PoolError`) unless ``allow_outside_pool``; then they are counted in the report and,
  for PROC, the top-K docs outside the pool are added to the pool (the selector evidently had them),
  so PROC ≥ RA-nWG always holds. When the run is its own pool and K exceeds the pool depth, the same
  rule makes the top K part of the pool.
* **Groups.** A global doc id → group (source, facet) mapping. Docs without a group are each their
  own group.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from ._lazy import pl  # polars, imported on first use

from ._data import GradeMap, Qrels, Run
from ._errors import ConfigError, FormatError, InputError

if TYPE_CHECKING:
    from ._engine import EvalData
    from ._measures import Measure

__all__ = ["PoolError", "PoolInfo", "GroupInfo", "attach", "coerce_grade_map", "load_groups", "check_scale", "with_judged", "UTIL_MIN", "UTIL_MAX"]

UTIL_MIN, UTIL_MAX = 1, 5


class PoolError(InputError):
    """The final run holds docs that are not in its retrieval pool (and ``allow_outside_pool`` is off)."""


@dataclass
class PoolInfo:
    """The retrieval pool of every evaluated query, held sparsely (judged pool docs only)."""

    source: str  #: the pool run's name, or ``(the run itself)``
    own: bool  #: the run is its own pool
    depth: int | None  #: pool depth (None: the pool run's full length)
    p_seg: np.ndarray  #: query index of each judged pool doc (within depth)
    p_util: np.ndarray  #: its utility grade
    p_rank: np.ndarray  #: its 1-based rank in the pool
    j_in_pool: np.ndarray  #: per judged run row: is it in the pool
    outside_rows: int = 0  #: run rows outside the pool (explicit pools only)
    outside_queries: int = 0
    allow_outside: bool = False
    frame: pl.DataFrame | None = field(default=None, repr=False)  #: pool rows within depth: query_id, doc_id, rank

    def report(self) -> dict[str, Any]:
        return {"outside_pool_docs": self.outside_rows, "outside_pool_queries": self.outside_queries}


@dataclass
class GroupInfo:
    """Group codes (unique negative codes: no group) of the judged run rows, and of the judged docs of
    every query (``q_seg``, ``q_util``, ``q_group``: one entry per judged doc, in no particular order)."""

    j_group: np.ndarray
    q_seg: np.ndarray
    q_util: np.ndarray
    q_group: np.ndarray
    source: str


# --- coercion -----------------------------------------------------------------------------------


def coerce_grade_map(grade_map: Any) -> GradeMap | None:
    """None, a :class:`GradeMap`, a preset name / ``FROM:TO,...`` text, or a mapping."""
    if grade_map is None or isinstance(grade_map, GradeMap):
        return grade_map
    if isinstance(grade_map, str):
        return GradeMap.parse(grade_map)
    if isinstance(grade_map, Mapping):
        return GradeMap(grade_map)
    raise ConfigError(f"grade_map must be a preset name, a 'FROM:TO,...' text or a mapping, got {type(grade_map).__name__}")


def load_groups(groups: Any) -> tuple[dict[str, str], str] | None:
    """A doc id → group mapping from a mapping or a file of ``doc_id group`` lines (white space
    separated; blank lines and ``#`` comments skipped)."""
    if groups is None:
        return None
    if isinstance(groups, tuple) and len(groups) == 2 and isinstance(groups[0], dict):
        return groups  # already loaded
    if isinstance(groups, Mapping):
        return {str(k): str(v) for k, v in groups.items()}, "<groups dict>"
    if isinstance(groups, (str, os.PathLike)):
        path = Path(groups)
        out: dict[str, str] = {}
        with path.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                text = line.strip()
                if not text or text.startswith("#"):
                    continue
                parts = text.split()
                if len(parts) != 2:
                    raise FormatError(str(path), lineno, "expected two fields: doc_id group", text)
                out[parts[0]] = parts[1]
        return out, str(path)
    raise ConfigError(f"groups must be a mapping of doc id to group or a file path, got {type(groups).__name__}")


def _check_depth(pool_depth: Any) -> int | None:
    if pool_depth is None:
        return None
    if isinstance(pool_depth, bool) or not isinstance(pool_depth, int) or pool_depth < 1:
        raise ConfigError(f"pool_depth must be a whole number >= 1, got {pool_depth!r}")
    return pool_depth


# --- attaching to EvalData ------------------------------------------------------------------------


def _map(grades: np.ndarray, gm: GradeMap) -> np.ndarray:
    keys = np.array(sorted(gm.mapping), dtype=np.int64)
    vals = np.array([gm.mapping[k] for k in keys.tolist()], dtype=np.int64)
    pos = np.clip(np.searchsorted(keys, grades), 0, keys.size - 1)
    return vals[pos]


def _ranked_with_rank(df: pl.DataFrame) -> pl.DataFrame:
    return df.with_columns(pl.int_range(1, pl.len() + 1, dtype=pl.Int64).over("query_id").alias("rank"))


def attach(
    data: EvalData,
    qrels: Qrels,
    run: Run,
    *,
    grade_map: Any = None,
    pool: Any = None,
    pool_depth: int | None = None,
    allow_outside_pool: bool = False,
    groups: Any = None,
) -> None:
    """Attach utility grades, the pool and group codes to ``data`` (called by ``prepare``)."""
    gm = coerce_grade_map(grade_map)
    depth = _check_depth(pool_depth)
    if gm is not None and gm.mapping:
        present = np.unique(data.q_grade)
        unmapped = sorted(set(present.tolist()) - set(gm.mapping))
        if unmapped:
            raise ConfigError(f"grade map {gm.describe()} does not map grade(s) {unmapped} of the qrels; add them to the map")
        data.j_util = _map(data.j_grade, gm)  # type: ignore[misc]
        data.q_util = _map(data.q_grade, gm)  # type: ignore[misc]
    data.grade_map = gm
    if pool is None and depth is None and groups is None:
        return

    qids = pl.DataFrame({"query_id": pl.Series(data.qids, dtype=pl.String), "_seg": np.arange(data.n_queries, dtype=np.int64)})
    # the judged docs of the evaluated queries with their utility grades
    util = qrels.frame.join(qids, on="query_id", how="inner")
    if gm is not None and gm.mapping:
        util = util.with_columns(pl.col("relevance").replace_strict(gm.mapping, return_dtype=pl.Int64))
    ranked = _run_rows(data, run)

    if pool is not None:
        from ._engine import ranked_frame

        prun = Run.coerce(pool)
        pdf = prun.frame.join(qids.select("query_id"), on="query_id", how="semi")
        pranked = _ranked_with_rank(ranked_frame(pdf, data.ties))
        if depth is not None:
            pranked = pranked.filter(pl.col("rank") <= depth)
        pj = pranked.join(util, on=["query_id", "doc_id"], how="inner")
        # membership of the final run's rows
        hit = ranked.select("query_id", "doc_id").join(
            pranked.select("query_id", "doc_id", pl.lit(True).alias("_in")), on=["query_id", "doc_id"], how="left", maintain_order="left"
        )["_in"]
        in_pool = hit.is_not_null().to_numpy()
        outside = ~in_pool
        n_out = int(outside.sum())
        out_q = int(ranked["query_id"].filter(pl.Series(outside)).n_unique()) if n_out else 0
        if n_out and not allow_outside_pool:
            first = int(np.flatnonzero(outside)[0])
            q, d = ranked["query_id"][first], ranked["doc_id"][first]
            depth_txt = f" (pool depth {depth})" if depth is not None else ""
            raise PoolError(
                f"run {run.name!r}: {n_out} doc{'s' if n_out != 1 else ''} in {out_q} quer{'ies' if out_q != 1 else 'y'} "
                f"not in the retrieval pool {prun.name!r}{depth_txt}, e.g. query {q!r} doc {d!r}; "
                "a reranker can only reorder its pool. Use allow_outside_pool=True / --allow-outside-pool to evaluate anyway"
            )
        data.pool = PoolInfo(
            source=prun.name,
            own=False,
            depth=depth,
            p_seg=pj["_seg"].to_numpy().astype(np.int64),
            p_util=pj["relevance"].to_numpy().astype(np.int64),
            p_rank=pj["rank"].to_numpy().astype(np.int64),
            j_in_pool=in_pool[data.j_idx],
            outside_rows=n_out,
            outside_queries=out_q,
            allow_outside=allow_outside_pool,
            frame=pranked.select("query_id", "doc_id", "rank"),
        )
    elif depth is not None:
        data.pool = own_pool(data, depth)

    if groups is not None:
        mapping, source = load_groups(groups)  # type: ignore[misc]
        labels = {lab: i for i, lab in enumerate(sorted(set(mapping.values())))}
        doc_code = {d: labels[lab] for d, lab in mapping.items()}
        j_docs = ranked["doc_id"].gather(data.j_idx) if data.j_idx.size else pl.Series("doc_id", [], dtype=pl.String)
        data.groups = GroupInfo(
            j_group=_codes(j_docs, doc_code),
            q_seg=util["_seg"].to_numpy().astype(np.int64),
            q_util=util["relevance"].to_numpy().astype(np.int64),
            q_group=_codes(util["doc_id"], doc_code),
            source=source,
        )


def _run_rows(data: EvalData, run: Run) -> pl.DataFrame:
    """The ranked rows of the evaluated queries (``data.frame`` when kept)."""
    if data.frame is not None:
        return data.frame
    from ._engine import ranked_frame

    present = [q for q, h in zip(data.qids, data.has_run) if h]
    rdf = run.frame.join(pl.DataFrame({"query_id": pl.Series(present, dtype=pl.String)}), on="query_id", how="semi")
    return ranked_frame(rdf, data.ties)


def _codes(docs: pl.Series, doc_code: dict[str, int]) -> np.ndarray:
    codes = docs.replace_strict(doc_code, default=-1, return_dtype=pl.Int64).to_numpy().astype(np.int64)
    none = codes == -1
    codes[none] = -2 - np.arange(int(none.sum()), dtype=np.int64)
    return codes


def own_pool(data: EvalData, depth: int | None) -> PoolInfo:
    """The run itself, cut at ``depth``, as its own pool."""
    in_pool = np.ones(data.j_idx.size, dtype=bool) if depth is None else data.j_rank <= depth
    return PoolInfo(
        source="(the run itself)",
        own=True,
        depth=depth,
        p_seg=data.j_seg[in_pool],
        p_util=np.asarray(data.j_util)[in_pool],
        p_rank=data.j_rank[in_pool],
        j_in_pool=in_pool,
    )


def pool_of(data: EvalData) -> PoolInfo:
    if data.pool is None:
        if "own_pool" not in data._cache:
            data._cache["own_pool"] = own_pool(data, None)  # type: ignore[assignment]
        return data._cache["own_pool"]  # type: ignore[return-value]
    return data.pool  # type: ignore[return-value]


# --- evaluate helpers -----------------------------------------------------------------------------


def is_rag(m: Measure) -> bool:
    return m.spec.group == "rag"


def check_scale(data: EvalData, measures: Iterable[Measure]) -> None:
    """Raise :class:`ConfigError` when RAG measures are requested and the (mapped) qrels hold grades
    outside the 1–5 utility scale."""
    rag = [str(m) for m in measures if is_rag(m)]
    if not rag:
        return
    util = np.asarray(data.q_util)
    bad = sorted(set(util[(util < UTIL_MIN) | (util > UTIL_MAX)].tolist()))
    if bad:
        gm = data.grade_map
        after = f" after the grade map {gm.describe()}" if gm is not None and getattr(gm, "mapping", None) else ""  # type: ignore[attr-defined]
        shown = ", ".join(rag[:3]) + (", ..." if len(rag) > 3 else "")
        raise ConfigError(
            f"{shown} read grades on the 1-5 utility scale (5 decisive ... 1 distractor), but the qrels{after} "
            f"hold grade(s) {bad}; give a grade map, e.g. --grade-map trec-dl / grade_map='trec-dl' for TREC DL's 0-3 "
            "scale, or --grade-map 3:5,2:4,1:3,0:2"
        )


def with_judged(measures: list[Measure]) -> list[Measure]:
    """The measures plus ``Judged@K`` for every K of a RAG measure (reported beside them)."""
    from ._measures import make

    out = list(measures)
    for m in measures:
        if is_rag(m) and m.cutoff is not None:
            j = make("Judged", None, m.cutoff)
            if j not in out:
                out.append(j)
    return out


def settings(pool: Run | None, pool_depth: int | None, allow_outside_pool: bool, groups: Any) -> dict[str, Any]:
    return {
        "source": pool.source if pool is not None else None,
        "name": pool.name if pool is not None else "(each run itself)",
        "depth": pool_depth,
        "allow_outside_pool": allow_outside_pool,
        "groups": groups[1] if groups else None,
    }
