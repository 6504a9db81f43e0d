"""Ids held in a polars column: the :class:`~ctxeval._core.ids.Ids` of everything the polars readers
parse (large TREC files, CSV, JSON lines, Parquet, dataframes). The ids stay in the column the parser
wrote (no copy into Python strings); polars' hashing, gathers, comparisons and sorts work on it and
release the GIL, so the core's block work runs on several cores."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from .._core.ids import ArrayIds, Ids

if TYPE_CHECKING:
    import polars as pl
else:
    from ._lazy import pl

__all__ = ["SEED", "SeriesIds"]

SEED = 0x5EED_C7E7


class SeriesIds:
    """A polars ``String`` column as an :class:`~ctxeval._core.ids.Ids`."""

    __slots__ = ("s",)

    def __init__(self, s: pl.Series) -> None:
        self.s = s

    def __len__(self) -> int:
        return int(self.s.len())

    def __repr__(self) -> str:
        return f"SeriesIds({self.s.len()} ids)"

    def hash(self, lo: int = 0, hi: int | None = None) -> np.ndarray:
        s = self.s if lo == 0 and hi is None else self.s.slice(lo, (len(self) if hi is None else hi) - lo)
        return s.hash(SEED).to_numpy()

    def take(self, rows: np.ndarray) -> SeriesIds:
        return SeriesIds(self.s.gather(rows))

    def slice(self, lo: int, hi: int) -> SeriesIds:
        return SeriesIds(self.s.slice(lo, hi - lo))

    def _gather(self, rows: np.ndarray) -> Any:
        s = self.s
        if 20 * rows.size > s.len() and s.n_chunks() > 1:  # many rows: one contiguous chunk first
            s = s.rechunk()
        return s.gather(rows)

    def equal(self, rows: np.ndarray, other: Ids, other_rows: np.ndarray) -> np.ndarray:
        if not isinstance(other, SeriesIds):
            raise TypeError("harmonise the columns before comparing them")
        if rows.size == 0:
            return np.zeros(0, dtype=bool)
        return (self._gather(rows) == other._gather(other_rows)).to_numpy()

    def greater(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.size == 0:
            return np.zeros(0, dtype=bool)
        return (self._gather(a) > self._gather(b)).to_numpy()

    def order(self, rows: np.ndarray, keys: tuple[np.ndarray, ...]) -> np.ndarray:
        if rows.size == 0:
            return rows
        cols = {f"k{i}": k for i, k in enumerate(keys)}
        df = pl.DataFrame({**cols, "doc": self.s.gather(rows), "row": rows})
        by = [*cols, "doc"]
        return (
            df.sort(by, descending=[False] * len(cols) + [True], maintain_order=True)["row"].to_numpy().astype(np.int64)
        )

    def to_list(self, rows: np.ndarray | None = None) -> list[str]:
        return (self.s if rows is None else self.s.gather(rows)).to_list()

    def harmonise(self, other: Ids) -> tuple[Ids, Ids] | None:
        if isinstance(other, SeriesIds):
            return self, other
        if isinstance(other, ArrayIds):
            return self, from_array(other)
        return None


def from_array(ids: ArrayIds) -> SeriesIds:
    """The same ids as a polars column (the fixed-width bytes lose their NUL padding)."""
    return SeriesIds(pl.Series("doc_id", ids.as_bytes()).cast(pl.String))


def from_list(ids: list[str]) -> SeriesIds:
    return SeriesIds(pl.Series("doc_id", ids, dtype=pl.String))
