"""Datasets by name: ``irds:<id>`` stands for an ir_datasets dataset wherever qrels, query texts or
passages are read (``ctxeval evaluate irds:msmarco-passage/trec-dl-2019/judged run.txt``,
``--queries irds:...``, ``--passages irds:...``, ``collect(retriever, "irds:...")``).

ir_datasets (``pip install 'ctxeval[irds]'``) is imported only for such a name. It fetches a
dataset's files on first use into ``$IR_DATASETS_HOME`` (default ``~/.ir_datasets``) and reads them
from there afterwards. Qrels are its ``qrels_iter()`` (query id, doc id, relevance; the iteration
column is not read); query texts are each query's ``default_text()`` (a TREC topic's title); a
passage is a document's ``default_text()``, looked up in the dataset's document store one id at a
time, so a judge run on a pool of a large collection never loads the collection.

An unknown id, a dataset without the part asked for (with the ids of its subsets that have it), the
package missing, and files ir_datasets cannot get are one-line errors naming the ``irds:`` id.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator, Mapping
from typing import Any

from .._core.columns import Columns
from .._errors import ConfigError, CtxevalError, DependencyError, InputError, did_you_mean
from ._lazy import pl
from .tables import from_table

__all__ = ["PREFIX", "is_ref", "passages", "qrels_columns", "query_texts", "question_records"]

PREFIX = "irds:"
#: a part of a dataset -> (ir_datasets' name of it, how the error names it)
_PARTS = {"qrels": ("qrels", "qrels"), "queries": ("queries", "queries"), "docs": ("docs", "documents")}


def is_ref(value: Any) -> bool:
    """Whether ``value`` names an ir_datasets dataset (``irds:<id>``).

    >>> is_ref("irds:beir/scifact/test"), is_ref("qrels.txt")
    (True, False)
    """
    return isinstance(value, str) and value.startswith(PREFIX)


def _module() -> Any:
    try:
        import ir_datasets
    except ImportError:
        raise DependencyError("an irds: dataset", "ir-datasets", "irds") from None
    return ir_datasets


def _dataset(ref: str, part: str) -> Any:
    """The dataset ``ref`` names, which must have ``part`` (qrels, queries or docs)."""
    name = ref[len(PREFIX) :]
    if not name or name != name.strip():
        raise ConfigError(
            f"{ref!r}: give an ir_datasets id after 'irds:', e.g. irds:msmarco-passage/trec-dl-2019/judged"
        )
    irds = _module()
    try:
        ds = irds.load(name)
    except KeyError:
        raise InputError(f"{ref}: unknown ir_datasets id{did_you_mean(name, irds.registry)}") from None
    attr, what = _PARTS[part]
    if not getattr(ds, f"has_{attr}")():
        have = [d for d in irds.registry if d.startswith(name + "/") and getattr(irds.load(d), f"has_{attr}")()]
        shown = ", ".join(have[:5]) + (f" and {len(have) - 5} more" if len(have) > 5 else "")
        also = f"; its subsets with {what}: {shown}" if have else ""
        raise InputError(f"{ref}: this ir_datasets dataset has no {what}{also}")
    return ds


def _failed(ref: str, exc: Exception) -> InputError:
    """ir_datasets' own failure (files it cannot download or read) as one line."""
    home = os.environ.get("IR_DATASETS_HOME") or "~/.ir_datasets"
    if isinstance(exc, RuntimeError) and len(exc.args) > 1 and exc.args[0] == "All download sources failed":
        with contextlib.suppress(TypeError, IndexError):  # args: (message, [(source, error), ...])
            return InputError(
                f"{ref}: ir_datasets could not download the dataset's files ({_short(exc.args[1][0][1])}); "
                f"it keeps them under {home} (IR_DATASETS_HOME)"
            )
    return InputError(
        f"{ref}: ir_datasets could not read the dataset ({type(exc).__name__}: {_short(exc)}); "
        f"its files are kept under {home} (IR_DATASETS_HOME)"
    )


def _short(exc: Any) -> str:
    reason = " ".join(str(exc).split())
    return reason if len(reason) <= 240 else reason[:237] + "..."


def _rows(ref: str, part: str) -> Iterator[Any]:
    ds = _dataset(ref, part)
    try:
        yield from getattr(ds, f"{_PARTS[part][0]}_iter")()
    except CtxevalError:
        raise
    except Exception as exc:
        raise _failed(ref, exc) from None


def _text(record: Any) -> str:
    """A query's or document's text (ir_datasets' ``default_text()``, else its ``text`` field)."""
    get = getattr(record, "default_text", None)
    return str(get() if callable(get) else record.text)


def qrels_columns(ref: str) -> Columns:
    """The dataset's qrels as core columns (validated as any qrels frame is)."""
    qids: list[str] = []
    docs: list[str] = []
    grades: list[int] = []
    for q in _rows(ref, "qrels"):
        qids.append(q.query_id)
        docs.append(q.doc_id)
        grades.append(int(q.relevance))
    frame = pl.DataFrame(
        {"query_id": qids, "doc_id": docs, "relevance": grades},
        schema={"query_id": pl.String, "doc_id": pl.String, "relevance": pl.Int64},
    )
    cols, _ = from_table(frame, "qrels", ref)
    return cols


def query_texts(ref: str) -> dict[str, str]:
    """Query id -> the query's text."""
    out: dict[str, str] = {}
    for q in _rows(ref, "queries"):
        out[q.query_id] = _text(q)
    if not out:
        raise InputError(f"{ref}: the dataset lists no queries")
    return out


def question_records(ref: str) -> list[dict[str, Any]]:
    """Sample records for :func:`ctxeval.collect`: each query's id and text, with its qrels as
    ``grades`` where it has any (a query without qrels keeps no references)."""
    texts = query_texts(ref)
    grades: dict[str, dict[str, int]] = {}
    if _dataset(ref, "queries").has_qrels():
        for q in _rows(ref, "qrels"):
            grades.setdefault(q.query_id, {})[q.doc_id] = int(q.relevance)
    return [
        {"query_id": qid, "question": text, **({"grades": grades[qid]} if qid in grades else {})}
        for qid, text in texts.items()
    ]


class _Passages(Mapping[str, str]):
    """Document id -> text, looked up in the dataset's document store on demand (and kept)."""

    def __init__(self, ref: str, dataset: Any) -> None:
        self.ref, self._ds = ref, dataset
        self._store: Any = None
        self._seen: dict[str, str | None] = {}

    def _get(self, doc_id: str) -> str | None:
        if doc_id not in self._seen:
            try:
                if self._store is None:
                    self._store = self._ds.docs_store()
                found = self._store.get_many([doc_id])
            except Exception as exc:
                raise _failed(self.ref, exc) from None
            self._seen[doc_id] = _text(found[doc_id]) if doc_id in found else None
        return self._seen[doc_id]

    def __getitem__(self, doc_id: str) -> str:
        text = self._get(doc_id)
        if text is None:
            raise KeyError(doc_id)
        return text

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and self._get(doc_id) is not None

    def __iter__(self) -> Iterator[str]:
        try:
            for d in self._ds.docs_iter():
                yield d.doc_id
        except Exception as exc:
            raise _failed(self.ref, exc) from None

    def __len__(self) -> int:
        count = self._ds.docs_count()
        return int(count) if count is not None else sum(1 for _ in self)


def passages(ref: str) -> Mapping[str, str]:
    """Document id -> text, read from the dataset's document store as ids are asked for."""
    return _Passages(ref, _dataset(ref, "docs"))
