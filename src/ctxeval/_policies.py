"""How input is read and queries are counted: one frozen, validated value shared by every verb.

* ``ties``: the ranking rule. ``trec`` (the default; trec_eval 9.x's and pytrec_eval's): score
  descending, compared as 32-bit floats (they hold scores as C floats: 0.300000009 and 0.300000001
  tie), ties broken by doc id descending (byte-wise); ``trec10`` (trec_eval 10.0's): the same with
  scores compared as 64-bit floats; ``input``: the order of the rows within each query as given;
  ``docno``: another name of ``trec``; ``expected``: ranked as ``trec``, every measure taking its
  expected value over all orders of the rows whose scores tie (McSherry & Najork 2008; closed forms
  or exact averaging, never sampling), with the values of the best and the worst orders beside it.
* ``missing``: judged queries a run lacks. ``zero``: scored 0 (trec_eval ``-c``); ``ignore``: left
  out (trec_eval's default); ``error``: refused.
* ``duplicates``: a (query, doc) pair given twice. ``error``; ``first``: keep the first line;
  ``best``: keep the highest score (runs) or grade (qrels).
* ``overlap``: a run that shares no query with the qrels. ``require`` (the default): an error, as it
  is almost always the wrong file (every measure would be 0 under ``missing="zero"``), and an overlap
  below a tenth of the run's or of the qrels' queries is noted with its counts; ``any``: scored as it
  is, without the note.
* ``columns``: which columns of tabular input (CSV/TSV, JSON lines, Parquet, frames) hold what, for
  names the readers do not know: ``"qid=query-id,doc=corpus-id,grade=score"`` or a mapping of the roles
  ``qid``, ``doc``, ``grade`` (qrels), ``score`` and ``tag`` (runs) to column names.

The command line reads its choices and help texts from :data:`CHOICES` and :data:`HELP`.

>>> Policies(missing="ignore")
Policies(ties='trec', missing='ignore', duplicates='error', overlap='require', columns=None)
>>> Policies(ties="tre")
Traceback (most recent call last):
ctxeval.ConfigError: ties must be one of 'trec', 'docno', 'trec10', 'input', 'expected', got 'tre'
>>> Policies(ties="docno").ties
'trec'
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, TypeVar, cast

from ._errors import ConfigError, did_you_mean

__all__ = ["CANONICAL", "CHOICES", "HELP", "Policies", "coerce_settings", "parse_columns"]

S = TypeVar("S")


def coerce_settings(cls: type[S], value: S | Mapping[str, Any] | None, what: str) -> S:
    """A frozen settings value of ``cls`` from itself, a mapping of its fields, or None (the defaults);
    ``what`` names it in errors."""
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if isinstance(value, Mapping):
        names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
        unknown = set(value) - set(names)
        if unknown:
            raise ConfigError(f"unknown {what} {sorted(unknown)}; they are {', '.join(names)}")
        return cls(**value)
    raise ConfigError(f"{what} must be a {cls.__name__} or a mapping, got {type(value).__name__}")


CHOICES: dict[str, tuple[str, ...]] = {
    "ties": ("trec", "docno", "trec10", "input", "expected"),
    "missing": ("zero", "ignore", "error"),
    "duplicates": ("error", "first", "best"),
    "overlap": ("require", "any"),
}

HELP: dict[str, str] = {
    "ties": "trec (or docno): score (as float32, trec_eval 9 and pytrec_eval) descending, then doc id descending; "
    "trec10: the same with scores as float64 (trec_eval 10.0); input: the file's order within each query; "
    "expected: every measure's exact expected value over all orders of tied scores, with the best and worst "
    "orders' values beside it (how much of the figure is luck)",
    "missing": "judged queries absent from a run: zero = score them 0 (trec_eval -c; default), "
    "ignore = leave them out (trec_eval's default), error = fail",
    "duplicates": "a repeated (query, doc) pair: fail, or keep the first / the best-scored",
    "overlap": "require: a run sharing no query with the qrels is an error (almost always the wrong file) and a "
    "small overlap is noted; any: score it as it is",
}


@dataclass(frozen=True)
class Policies:
    """The ranking, query-set and duplicate rules (see the module docstring)."""

    ties: str = "trec"
    missing: str = "zero"
    duplicates: str = "error"
    overlap: str = "require"
    columns: tuple[tuple[str, str], ...] | str | Mapping[str, str] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", parse_columns(self.columns))
        if self.ties == "docno":  # trec_eval's rule under the name the issue trackers use
            object.__setattr__(self, "ties", "trec")
        for f in fields(self):
            if f.name == "columns":
                continue
            value = getattr(self, f.name)
            allowed = CHOICES[f.name]
            if value not in allowed:
                raise ConfigError(f"{f.name} must be one of {', '.join(map(repr, allowed))}, got {value!r}")

    @classmethod
    def coerce(cls, value: Policies | Mapping[str, Any] | None) -> Policies:
        """A :class:`Policies`, a mapping of its fields, or None (the defaults)."""
        return coerce_settings(cls, value, "policies")

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ties": self.ties, "missing": self.missing, "duplicates": self.duplicates}
        if self.overlap != "require":
            out["overlap"] = self.overlap
        if self.columns:
            out["columns"] = dict(self._column_pairs())
        return out

    def renames(self, kind: str | None = None) -> dict[str, str]:
        """Column name -> the readers' name for it (``query_id``, ``doc_id``, ``relevance``, ``score``,
        ``tag``), from :attr:`columns`; for one ``kind`` of file (``qrels``: qid, doc, grade; ``run``:
        qid, doc, score, tag), only its roles (a qrels' ``grade=score`` leaves a run's ``score`` alone).

        >>> Policies(columns="qid=query-id,grade=score").renames("run")
        {'query-id': 'query_id'}
        """
        roles = _KIND_ROLES.get(kind or "", tuple(CANONICAL))
        return {column: CANONICAL[role] for role, column in self._column_pairs() if role in roles}

    def _column_pairs(self) -> tuple[tuple[str, str], ...]:
        return cast("tuple[tuple[str, str], ...]", self.columns or ())


#: the roles of ``columns`` and the column names the table readers know them by
CANONICAL = {"qid": "query_id", "doc": "doc_id", "grade": "relevance", "score": "score", "tag": "tag"}
_KIND_ROLES = {"qrels": ("qid", "doc", "grade"), "run": ("qid", "doc", "score", "tag")}


def parse_columns(value: Any) -> tuple[tuple[str, str], ...] | None:
    """``"qid=query-id,doc=corpus-id"`` or ``{"qid": "query-id"}`` -> ``(("doc", "corpus-id"), ("qid",
    "query-id"))`` (sorted by role), validated; None or empty -> None.

    >>> parse_columns("qid=query-id, doc=corpus-id")
    (('doc', 'corpus-id'), ('qid', 'query-id'))
    """
    if value is None or value == "" or value == ():
        return None
    if isinstance(value, str):
        pairs = []
        for part in value.split(","):
            role, sep, column = part.partition("=")
            if not sep or not role.strip() or not column.strip():
                raise ConfigError(f"columns: {part.strip()!r} is not ROLE=COLUMN (roles: {', '.join(CANONICAL)})")
            pairs.append((role.strip(), column.strip()))
    elif isinstance(value, Mapping):
        pairs = [(str(k), str(v)) for k, v in value.items()]
    elif isinstance(value, tuple):
        pairs = [(str(k), str(v)) for k, v in value]
    else:
        raise ConfigError(f"columns must be 'ROLE=COLUMN,...' or a mapping, got {type(value).__name__}")
    seen: dict[str, str] = {}
    for role, column in pairs:
        if role not in CANONICAL:
            raise ConfigError(
                f"columns: unknown role {role!r}{did_you_mean(role, CANONICAL)}; roles: {', '.join(CANONICAL)}"
            )
        if role in seen:
            raise ConfigError(f"columns: role {role!r} given twice")
        seen[role] = column
    if len(set(seen.values())) != len(seen):
        raise ConfigError("columns: one column named for two roles")
    return tuple(sorted(seen.items()))
