"""polars frames <-> core columns: the one place where a parsed frame becomes :class:`Columns`.

A frame has the columns ``query_id`` (str), ``doc_id`` (str) and the value column (``score``
float64 or ``relevance`` int64). Its rows are grouped by query stably when they are not already
(see :class:`~ctxeval._core.columns.Columns`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .._core.columns import Columns, Layout
from .._core.ids import ArrayIds
from .._core.segments import distinct
from .ids import SeriesIds

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = ["columns_from_frame", "columns_from_runs", "frame_of", "query_array"]


def query_array(ids: pl.Series) -> np.ndarray:
    """Query ids as a numpy ``U`` array (byte-wise order = code point order)."""
    return np.array(ids.to_list(), dtype=str) if ids.len() else np.zeros(0, dtype="U1")


def columns_from_frame(df: pl.DataFrame, value: str) -> Columns:
    """The frame's rows as grouped columns."""
    values = df[value].to_numpy()
    values = values.astype(np.float64 if value == "score" else np.int64, copy=False)
    doc = SeriesIds(df["doc_id"])
    if df.height == 0:
        return Columns(Layout(np.zeros(0, dtype="U1"), np.zeros(0, dtype=np.int64), 0), doc, values)
    rle = df.select(pl.col("query_id").rle()).to_series().struct.unnest()
    heads = rle["value"]
    lengths = rle["len"].to_numpy().astype(np.int64)
    return columns_from_runs(query_array(heads), lengths, doc, values)


def columns_from_runs(heads: np.ndarray, lengths: np.ndarray, doc: SeriesIds | ArrayIds, values: np.ndarray) -> Columns:
    """Columns from runs of equal query ids (``heads[i]`` repeated ``lengths[i]`` times)."""
    n = int(lengths.sum())
    if heads.size < 2 or bool(np.all(heads[1:] > heads[:-1])) or distinct(heads).size == heads.size:  # grouped
        return Columns(Layout(heads, lengths, n), doc, values)
    names, inv = np.unique(heads, return_inverse=True)
    return Columns.from_codes(np.repeat(inv.reshape(-1), lengths), names, doc, values)


def frame_of(cols: Columns, value: str, input_order: bool = True) -> pl.DataFrame:
    """The columns as a frame (``query_id``, ``doc_id``, ``value``), in input order by default."""
    lay = cols.layout
    doc = cols.doc.s if isinstance(cols.doc, SeriesIds) else pl.Series("doc_id", cols.doc.to_list(), dtype=pl.String)
    df = pl.DataFrame(
        {
            "query_id": pl.Series("query_id", lay.heads.tolist(), dtype=pl.String).gather(lay.row_segments())
            if len(cols)
            else pl.Series("query_id", [], dtype=pl.String),
            "doc_id": doc.alias("doc_id"),
            value: pl.Series(value, cols.values, dtype=pl.Float64 if value == "score" else pl.Int64),
        }
    )
    if input_order and cols.source_rows is not None:
        df = df[np.argsort(cols.source_rows, kind="stable")]
    return df
