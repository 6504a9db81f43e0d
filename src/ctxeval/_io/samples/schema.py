"""The sample format, read and written side by side: :func:`parse` turns one JSON object into a
:class:`Sample`, :func:`record` turns a :class:`Sample` back into the object it reads from, and
``record(parse(r))`` reads back to the same sample for every object ``parse`` accepts (the property
test ``tests/io/test_sample_format.py`` checks it over every field).

Fields (the names in brackets are read as well: RAGAS's, and RAGAS 0.1's older ones; the writer
uses the first name). A field given under two of its names must give one value.

* ``query_id`` [``qid``, ``id``]: missing everywhere, the samples are named ``line-1``, ``line-2``, ...
  by position and the set says so (read beside other such sets, they are paired by their questions:
  :mod:`.across`); missing on some samples only, an error;
* ``question`` [``user_input``];
* the retrieved chunks, in rank order: ``retrieved`` as a list of ``{"id", "text"?, "score"?, ...}``
  (other keys are kept with the chunk) or of ids, or the parallel lists ``retrieved_ids``
  [``retrieved_context_ids``], ``retrieved_contexts`` [``contexts``], ``retrieved_scores``,
  ``retrieved_meta`` (one object per chunk: its other keys). The list
  order is the ranking (what the LLM reads). Scores that rank the chunks in list order under the
  evaluation's rule (decreasing as float32, ties by id descending) are the run's scores; otherwise (a
  reranker's order over first-stage scores) the list is ranked as given, with scores ``n, n - 1, ...,
  1``, the given scores kept for writing. Chunks given by their text only are named by a hash of the
  text (:func:`text_id`), so the same text is the same chunk across runs;
* ``reference_ids`` [``reference_context_ids``]: relevant, grade 1; ``grades``: ``{id: grade}`` (wins
  over ``reference_ids``); ``reference_contexts`` (without ids or grades: the judgments are the
  retrieved chunks whose text equals one exactly);
* ``reference_answer`` [``reference``, ``ground_truth``], ``response`` [``answer``], ``category``,
  ``pool`` (the first-stage candidates), ``facets`` (``[{"name", "ids"}]``), ``citations`` (the chunk
  ids the response cites), ``nuggets`` (``[{"text", "importance": "vital"|"okay", "supported_by",
  "partially_supported_by", "undecided", "tied"?, "not_sent"?}]``), and what ``ctxeval judge`` writes:
  ``claims`` (``[{"text", "supported_by", "undecided", "tied"?, "not_sent"?}]``), ``judged``
  (``{"relevant", "undecided", "tied"?, "not_sent"?}``), ``labelled_by``, ``claims_status``,
  ``nuggets_status``, ``citations_undecided``, ``citations_tied``, ``citations_not_sent``. A chunk the
  judge left without a judgment is listed by why: ``undecided`` (no answer it could use), ``tied``
  (its votes split evenly), ``not_sent`` (the budget stopped before it was asked; the last two are
  written when not empty); every measure reads all three alike: not judged, never guessed;
* any other field is kept as it is and written back (a name close to a known one is an error that
  names it, e.g. ``retreived_ids``).

Edge readings (one each, whatever the method; the set's notes count them):

* a lone surrogate in a text (``"ab\\ud800cd"``, e.g. from a JSON ``\\ud800`` escape, a chunker that
  cut a UTF-16 pair) becomes U+FFFD, the replacement character; in an id it is an error;
* an empty text (a chunk's, a reference context) is no evidence: it matches no reference, exactly
  or by similarity, and an empty reference context counts as no reference (its sample keeps it, the
  writer writes it back).
"""

from __future__ import annotations

import hashlib
import math
import re
from array import array
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..._errors import FormatError

__all__ = ["FIELDS", "Sample", "Tally", "parse", "record", "text_id"]

#: (text, vital, supporting ids, partially supporting ids, undecided ids, tied ids, ids not sent)
Nugget = tuple[str, bool, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: (text, supporting ids, undecided ids, tied ids, ids not sent)
Claim = tuple[str, tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]]
#: ids without a judgment, by why: undecided, tied, not sent (what the judge writes beside its labels)
OPEN = ("undecided", "tied", "not_sent")


@dataclass(frozen=True)
class Sample:
    """One query of a sample set (see the module docstring): what the measures read, and what it was
    read from (``reference_ids``, ``judgments_from``, ``given_scores``, ``retrieved_meta``, ``extra``)
    so that writing it back loses nothing."""

    query_id: str
    retrieved_ids: tuple[str, ...]
    retrieved_scores: tuple[float, ...]  #: the run's scores: as given when they rank in list order, else n .. 1
    question: str | None = None
    retrieved_texts: tuple[str, ...] | None = None
    grades: Mapping[str, int] | None = None  #: the judgments: given grades, or reference ids at grade 1
    reference_contexts: tuple[str, ...] | None = None
    reference_answer: str | None = None
    response: str | None = None
    category: str | None = None
    facets: tuple[tuple[str, tuple[str, ...]], ...] | None = None  #: (name, chunk ids) per facet
    citations: tuple[str, ...] | None = None  #: the chunk ids the response cites
    nuggets: tuple[Nugget, ...] | None = None
    pool: tuple[str, ...] | None = None  #: the first-stage candidates the retrieved list was chosen from
    #: the reference answer's claims, from a judge
    claims: tuple[Claim, ...] | None = None
    #: a judge's relevance of the chunks to the reference answer: (relevant ids, undecided ids, tied
    #: ids, ids not sent)
    judged: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None = None
    #: who wrote the labels (``ctxeval judge``): ({judge, model, heuristic, task}, ...)
    labelled_by: tuple[Mapping[str, Any], ...] = ()
    reference_ids: tuple[str, ...] | None = None  #: as given (grades win over them)
    #: where :attr:`grades` come from: ``"grades"``, ``"reference_ids"``, ``"reference_contexts"`` or None
    judgments_from: str | None = None
    given_scores: tuple[float, ...] | None = None  #: the scores as given, None when none were
    #: per retrieved chunk, the other keys of its ``retrieved`` object ({} for none); None: no chunk has any
    retrieved_meta: tuple[Mapping[str, Any], ...] | None = None
    extra: Mapping[str, Any] | None = None  #: the fields the format does not read, as given

    def relevant_contexts(self) -> tuple[str, ...]:
        """The reference contexts that count: the non-empty ones."""
        return tuple(t for t in self.reference_contexts or () if t)


@dataclass
class Tally:
    """What reading a set's samples met, for its notes."""

    reordered: int = 0  #: samples whose scores rank in another order than the list's
    unscored: int = 0  #: samples listing chunks without scores
    text_named: int = 0  #: samples naming chunks by their text
    text_refs: int = 0  #: samples judged by exact text
    surrogates: int = 0  #: texts with a lone surrogate replaced
    empty_retrieved: int = 0  #: samples that retrieved nothing
    empty_refs: int = 0  #: samples with a reference field that holds no reference
    empty_texts: int = 0  #: empty chunk texts and reference contexts (they match nothing)
    duplicate_keys: int = 0  #: keys given twice in one object (the first kept)
    duplicate_chunks: int = 0  #: chunks given twice in one list (the first kept)
    unknown: dict[str, int] = field(default_factory=dict)  #: fields not read -> samples giving them
    #: reference contexts judged by exact text that equal no chunk text but are contained in one
    excerpts: int = 0
    #: reference contexts judged by exact text that equal a chunk text (whole chunks, not excerpts)
    exact_refs: int = 0


_QID = ("query_id", "qid", "id")
_QUESTION = ("question", "user_input")
_IDS = ("retrieved_ids", "retrieved_context_ids")
_TEXTS = ("retrieved_contexts", "contexts")
_REF_IDS = ("reference_ids", "reference_context_ids")
_ANSWER = ("reference_answer", "reference", "ground_truth")
_RESPONSE = ("response", "answer")
_ONE_NAME = (
    "retrieved",
    "retrieved_scores",
    "retrieved_meta",
    "grades",
    "reference_contexts",
    "category",
    "facets",
    "citations",
    "nuggets",
    "pool",
    "claims",
    "judged",
    "labelled_by",
)
#: written by ``ctxeval judge``, read by no measure: kept as they are, without a note
_KEPT = ("claims_status", "nuggets_status", "citations_undecided", "citations_tied", "citations_not_sent")
#: every field name the format reads
FIELDS: frozenset[str] = frozenset(
    {*_QID, *_QUESTION, *_IDS, *_TEXTS, *_REF_IDS, *_ANSWER, *_RESPONSE, *_ONE_NAME, *_KEPT}
)
#: the names of one field each (a misspelling is matched against the fields a sample does not give)
_GROUPS = (_QID, _QUESTION, _IDS, _TEXTS, _REF_IDS, _ANSWER, _RESPONSE, *((n,) for n in _ONE_NAME))
_SURROGATE = re.compile("[\ud800-\udfff]")


def text_id(text: str) -> str:
    """The id of a chunk given by its text only: ``t`` + the first 16 hex digits of its BLAKE2b hash.

    >>> text_id("Paris is the capital of France.")
    'tee6ee5bbaa3d3af8'
    """
    return "t" + hashlib.blake2b(text.encode("utf-8"), digest_size=8).hexdigest()


class _Reader:
    """One record's fields, each taken once, with the source and line every error names."""

    def __init__(self, rec: Mapping[str, Any], source: str, line: int, tally: Tally) -> None:
        self.rec, self.source, self.line, self.tally = rec, source, line, tally

    def fail(self, problem: str) -> FormatError:
        return FormatError(self.source, self.line, problem)

    def first(self, names: tuple[str, ...]) -> tuple[str, Any]:
        """The value of the first of ``names`` given (not null), and that name; another of them giving
        a different value is an error."""
        found = [(k, self.rec[k]) for k in names if self.rec.get(k) is not None]
        if not found:
            return names[0], None
        for k, v in found[1:]:
            if v != found[0][1]:
                raise self.fail(f"{found[0][0]} and {k} give different values; give one of them")
        return found[0]

    def text(self, value: Any, what: str) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(f"{what} must be a string, got {type(value).__name__}")
        s = value if isinstance(value, str) else str(value)
        if not s.isascii() and _SURROGATE.search(s):
            self.tally.surrogates += 1
            s = _SURROGATE.sub("\ufffd", s)
        return s

    def clean(self, v: Any) -> Any:
        """A value kept as it is (an unknown field, a chunk's other keys), its texts' lone surrogates
        replaced as every text's are."""
        if isinstance(v, str):
            return self.text(v, "") if not v.isascii() else v
        if isinstance(v, Mapping):
            return {self.clean(k): self.clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.clean(x) for x in v]
        return v

    def opt_text(self, names: tuple[str, ...]) -> str | None:
        name, v = self.first(names)
        return None if v is None else self.text(v, name)

    def texts(self, value: Any, what: str) -> tuple[str, ...] | None:
        items = self.items(value, what)
        if items is None:
            return None
        if set(map(type, items)) <= {str} and all(map(str.isascii, items)):
            return items  # the common case, checked in C-level passes
        return tuple(self.text(v, f"{what}[{i}]") for i, v in enumerate(items, start=1))

    def items(self, value: Any, what: str, of: str = "") -> tuple[Any, ...] | None:
        """``value`` as a tuple (None stays None); anything but a list is refused naming ``what`` and,
        when given, what its elements must be (``of``: " of objects")."""
        if value is None:
            return None
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise self.fail(f"{what} must be a list{of}, got {type(value).__name__}")
        return tuple(value)

    def check_id(self, d: str, what: str) -> str:
        if not d or d != d.strip() or "\x00" in d:
            raise self.fail(f"{what}: an id must be non-empty, without blanks at its ends, got {d!r}")
        if not d.isascii() and _SURROGATE.search(d):
            raise self.fail(f"{what}: an id must be valid Unicode, got {d!r} (a lone surrogate)")
        return d

    def an_id(self, v: Any, what: str) -> str:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise self.fail(f"{what} must be a string, got {type(v).__name__}")
        return self.check_id(v if isinstance(v, str) else str(v), what)

    def ids(self, value: Any, what: str) -> tuple[str, ...] | None:
        """A list of chunk ids: strings (or whole numbers), none empty or with blanks at its ends (the
        rule every run and qrels file follows)."""
        items = self.items(value, what)
        if items is None:
            return None
        return tuple(self.an_id(v, f"{what}[{i}]") for i, v in enumerate(items, start=1))

    def score(self, v: Any, where: str) -> float:
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise self.fail(f"{where} must be a finite number, got {v!r}")
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if not math.isfinite(f):
            shown = repr(v) if isinstance(v, float) or len(str(v)) < 40 else f"an integer of {len(str(v))} digits"
            raise self.fail(f"{where} must be a finite number, got {shown}")
        return f


def parse(
    rec: Mapping[str, Any], source: str, line: int, generated: str | None, duplicates: str, tally: Tally
) -> Sample:
    """One sample object as a :class:`Sample` (``generated``: its query id when the set names samples
    by position); every error names ``source``, ``line`` and the field."""
    r = _Reader(rec, source, line, tally)
    _unknown_fields(r)
    if generated is not None:
        qid = generated
    else:
        name, value = r.first(_QID)
        if value is None:
            raise r.fail("no query_id (other samples have one)")
        if isinstance(value, bool) or not isinstance(value, (str, int)) or str(value) == "":
            raise r.fail(f"query_id must be a non-empty string, got {value!r}")
        qid = r.check_id(str(value), name)
    ids, texts, given, meta = _retrieved(r)
    ids, texts, given, meta = _unique(r, ids, texts, given, meta, duplicates)
    n = len(ids)
    if n == 0:
        tally.empty_retrieved += 1
    if given is not None and _ranks_as_listed(ids, given):
        scores = given
    else:
        if given is not None:
            tally.reordered += 1
        elif n:
            tally.unscored += 1
        scores = tuple(float(n - i) for i in range(n))
    grades_given = _grades(r)
    ref_ids = r.ids(r.first(_REF_IDS)[1], "reference_ids")
    ref_contexts = r.texts(rec.get("reference_contexts"), "reference_contexts")
    if ref_contexts is not None:
        tally.empty_texts += ref_contexts.count("")
    grades: dict[str, int] | None = None
    source_of = None
    if grades_given:
        grades, source_of = grades_given, "grades"
    elif ref_ids:
        grades, source_of = dict.fromkeys(ref_ids, 1), "reference_ids"
    elif ref_contexts and any(ref_contexts):
        known = dict(zip(texts, ids)) if texts is not None else {}
        grades = {known.get(t) or text_id(t): 1 for t in ref_contexts if t}
        source_of = "reference_contexts"
        tally.text_refs += 1
        if texts is not None:
            tally.excerpts += _excerpts(ref_contexts, texts, known)
            tally.exact_refs += sum(1 for t in ref_contexts if t and t in known)
    if grades is None and (grades_given is not None or ref_ids is not None or ref_contexts is not None):
        tally.empty_refs += 1
    category = rec.get("category")
    return Sample(
        qid,
        ids,
        scores,
        question=r.opt_text(_QUESTION),
        retrieved_texts=texts,
        grades=grades,
        reference_contexts=ref_contexts,
        reference_answer=r.opt_text(_ANSWER),
        response=r.opt_text(_RESPONSE),
        category=None if category is None else r.text(category, "category"),
        facets=_facets(r),
        citations=r.ids(rec.get("citations"), "citations"),
        nuggets=_nuggets(r),
        pool=r.ids(rec.get("pool"), "pool"),
        claims=_claims(r),
        judged=_judged(r),
        labelled_by=_labelled_by(r),
        reference_ids=ref_ids,
        judgments_from=source_of,
        given_scores=given,
        retrieved_meta=meta,
        extra={k: r.clean(v) for k, v in rec.items() if k not in FIELDS or k in _KEPT} or None,
    )


def record(s: Sample) -> dict[str, Any]:
    """A :class:`Sample` as the JSON object it reads back from (canonical field names; the fields
    read under another name, e.g. RAGAS's, are written under the first name)."""
    rec: dict[str, Any] = {"query_id": s.query_id}
    if s.question is not None:
        rec["question"] = s.question
    rec.update(_retrieved_record(s))
    if s.reference_ids is not None:
        rec["reference_ids"] = list(s.reference_ids)
    if s.judgments_from == "grades" and s.grades is not None:
        rec["grades"] = dict(s.grades)
    if s.reference_contexts is not None:
        rec["reference_contexts"] = list(s.reference_contexts)
    for name in ("reference_answer", "response", "category"):
        v = getattr(s, name)
        if v is not None:
            rec[name] = v
    if s.facets is not None:
        rec["facets"] = [{"name": n, "ids": list(ids)} for n, ids in s.facets]
    if s.citations is not None:
        rec["citations"] = list(s.citations)
    if s.nuggets is not None:
        rec["nuggets"] = [
            {
                "text": t,
                "importance": "vital" if v else "okay",
                "supported_by": list(f),
                "partially_supported_by": list(p),
                **_open_fields(opens),
            }
            for t, v, f, p, *opens in s.nuggets
        ]
    if s.pool is not None:
        rec["pool"] = list(s.pool)
    if s.claims is not None:
        rec["claims"] = [{"text": t, "supported_by": list(f), **_open_fields(opens)} for t, f, *opens in s.claims]
    if s.judged is not None:
        rec["judged"] = {"relevant": list(s.judged[0]), **_open_fields(s.judged[1:])}
    if s.labelled_by:
        rec["labelled_by"] = [dict(x) for x in s.labelled_by]
    for k, v in (s.extra or {}).items():
        rec.setdefault(k, v)
    return rec


def _open_fields(opens: Iterable[tuple[str, ...]]) -> dict[str, list[str]]:
    """The ids without a judgment by why: ``undecided`` always, ``tied`` and ``not_sent`` when any."""
    return {k: list(v) for k, v in zip(OPEN, opens) if v or k == "undecided"}


def _opens(r: _Reader, obj: Mapping[str, Any], where: str) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    undecided, tied, not_sent = (r.ids(obj.get(k), f"{where}.{k}") or () for k in OPEN)
    return undecided, tied, not_sent


# --- the fields, each read beside the shape record() writes ------------------------------------------


def _unknown_fields(r: _Reader) -> None:
    """Fields the format does not read are kept; one within two edits of a field the sample does not
    give (one edit for short names) is a misspelling: an error that names both."""
    from rapidfuzz.distance import Levenshtein

    open_ = [n for group in _GROUPS if not any(k in r.rec for k in group) for n in group]
    for k in r.rec:
        if k in FIELDS:
            continue
        if not isinstance(k, str):
            raise r.fail(f"a field name must be a string, got {k!r}")
        limit = 1 if len(k) <= 5 else 2
        close = sorted((Levenshtein.distance(k.lower(), n), n) for n in open_)
        if close and close[0][0] <= limit:
            raise r.fail(f"unknown field {k!r} (did you mean {close[0][1]!r}?)")
        r.tally.unknown[k] = r.tally.unknown.get(k, 0) + 1


def _retrieved(
    r: _Reader,
) -> tuple[tuple[str, ...], tuple[str, ...] | None, tuple[float, ...] | None, tuple[Mapping[str, Any], ...] | None]:
    """The retrieved ids, texts, given scores and per-chunk other keys."""
    rec = r.rec
    items = rec.get("retrieved")
    if items is not None:
        given = [k for k in (*_IDS, *_TEXTS, "retrieved_scores", "retrieved_meta") if rec.get(k) is not None]
        if given:
            raise r.fail(f"retrieved and {given[0]} both give the retrieved chunks; give one of them")
        return _retrieved_objects(r, items)
    ids = r.ids(r.first(_IDS)[1], "retrieved_ids")
    texts = r.texts(r.first(_TEXTS)[1], "retrieved_contexts")
    if ids is None:
        if not texts:
            return (), None, None, None
        ids = tuple(map(text_id, texts))
        r.tally.text_named += 1
    elif texts is not None and len(texts) != len(ids):
        raise r.fail(f"retrieved_contexts has {len(texts)} items but retrieved_ids {len(ids)}")
    if texts:
        r.tally.empty_texts += texts.count("")
    meta = None
    if rec.get("retrieved_meta") is not None:
        items = r.items(rec["retrieved_meta"], "retrieved_meta") or ()
        if len(items) != len(ids) or not all(isinstance(m, Mapping) for m in items):
            raise r.fail(f"retrieved_meta must be a list of {len(ids)} objects, one per retrieved chunk")
        meta = tuple(r.clean(dict(m)) for m in items) if any(items) else None
    raw = rec.get("retrieved_scores")
    scores = None
    if raw is not None:
        values = r.items(raw, "retrieved_scores") or ()
        if set(map(type, values)) <= {float} and all(map(math.isfinite, values)):
            scores = tuple(float(v) for v in values)  # the common case, without a check per item
        else:
            scores = tuple(r.score(v, f"retrieved_scores[{i}]") for i, v in enumerate(values, start=1))
        if len(scores) != len(ids):
            raise r.fail(f"retrieved_scores has {len(scores)} items but retrieved_ids {len(ids)}")
    return ids, (texts or None) if ids else None, scores, meta


def _retrieved_objects(
    r: _Reader, items: Any
) -> tuple[tuple[str, ...], tuple[str, ...] | None, tuple[float, ...] | None, tuple[Mapping[str, Any], ...] | None]:
    values = r.items(items, "retrieved") or ()
    ids: list[str] = []
    texts: list[str] = []
    scores: list[float] = []
    meta: list[Mapping[str, Any]] = []
    has_score = None
    any_text = named = False
    for i, it in enumerate(values, start=1):
        if isinstance(it, Mapping):
            text = it.get("text")
            if text is not None:
                text = r.text(text, f"retrieved[{i}].text")
                r.tally.empty_texts += text == ""
            if it.get("id") is None:
                if text is None:
                    raise r.fail(f"retrieved[{i}] has neither an id nor a text")
                named = True
                ids.append(text_id(text))
            else:
                ids.append(r.an_id(it["id"], f"retrieved[{i}].id"))
            texts.append(text or "")
            any_text = any_text or text is not None
            scored = it.get("score") is not None
            if has_score is None:
                has_score = scored
            elif scored != has_score:
                raise r.fail(f"retrieved[{i}]: some chunks have a score and others not")
            if scored:
                scores.append(r.score(it["score"], f"retrieved[{i}].score"))
            meta.append({k: r.clean(v) for k, v in it.items() if k not in ("id", "text", "score")})
        elif isinstance(it, (str, int)) and not isinstance(it, bool):
            ids.append(r.an_id(it, f"retrieved[{i}]"))
            texts.append("")
            meta.append({})
        else:
            raise r.fail(f"retrieved[{i}] must be an id or an object with an id")
    r.tally.text_named += named
    return (
        tuple(ids),
        tuple(texts) if any_text else None,
        tuple(scores) if has_score else None,
        tuple(meta) if any(meta) else None,
    )


def _unique(
    r: _Reader,
    ids: tuple[str, ...],
    texts: tuple[str, ...] | None,
    scores: tuple[float, ...] | None,
    meta: tuple[Mapping[str, Any], ...] | None,
    duplicates: str,
) -> tuple[tuple[str, ...], tuple[str, ...] | None, tuple[float, ...] | None, tuple[Mapping[str, Any], ...] | None]:
    """A chunk given twice in one list: an error naming both positions, or (``first``) the first kept."""
    if len(set(ids)) == len(ids):
        return ids, texts, scores, meta
    first: dict[str, int] = {}
    keep = []
    for i, d in enumerate(ids):
        if d in first:
            if duplicates == "error":
                what = "the same chunk text" if texts is not None and d == text_id(texts[i]) else f"chunk id {d!r}"
                raise r.fail(
                    f"retrieved: {what} is given twice (positions {first[d] + 1} and {i + 1}); "
                    "duplicates='first' / --duplicates first keeps the first"
                )
            r.tally.duplicate_chunks += 1
            continue
        first[d] = i
        keep.append(i)

    def pick(xs: tuple[Any, ...] | None) -> Any:
        return tuple(xs[i] for i in keep) if xs is not None else None

    return pick(ids), pick(texts), pick(scores), pick(meta)


def _retrieved_record(s: Sample) -> dict[str, Any]:
    """The parallel lists when they carry everything, else one ``retrieved`` object per chunk. A chunk
    named by its text is written by its text alone."""
    ids, texts, given = s.retrieved_ids, s.retrieved_texts, s.given_scores
    named = [texts is not None and d == text_id(texts[i]) for i, d in enumerate(ids)]
    if s.retrieved_meta is None and (all(named) or not any(named)):
        out: dict[str, Any] = {}
        if not (ids and all(named)):
            out["retrieved_ids"] = list(ids)
        if texts is not None:
            out["retrieved_contexts"] = list(texts)
        if given is not None:
            out["retrieved_scores"] = list(given)
        return out
    items = []
    for i, d in enumerate(ids):
        item: dict[str, Any] = {} if named[i] else {"id": d}
        if texts is not None:
            item["text"] = texts[i]  # (a chunk without a text among chunks with texts reads as an empty one)
        if given is not None:
            item["score"] = given[i]
        if s.retrieved_meta is not None:
            item.update(s.retrieved_meta[i])
        items.append(item)
    return {"retrieved": items}


def _excerpts(refs: tuple[str, ...], texts: tuple[str, ...], known: Mapping[str, str]) -> int:
    """How many of the non-empty ``refs`` equal none of ``texts`` but are held in one (blanks collapsed)."""
    held = [" ".join(t.split()) for t in texts]
    return sum(1 for t in refs if t and t not in known and any(" ".join(t.split()) in h for h in held))


def _ranks_as_listed(ids: tuple[str, ...], scores: tuple[float, ...]) -> bool:
    """Whether the scores rank the chunks in list order under the evaluation's rule: decreasing as
    float32, ties broken by chunk id descending (byte-wise)."""
    f32 = array("f", scores)  # rounded to float32 in C (beyond its range: inf), as the ranking compares them
    for i in range(len(f32) - 1):
        a, b = f32[i], f32[i + 1]
        if b > a or (b == a and ids[i + 1].encode("utf-8") > ids[i].encode("utf-8")):
            return False
    return True


def _grades(r: _Reader) -> dict[str, int] | None:
    """``{id: grade}``, whole numbers within 64 bits; None when not given ({} when given empty)."""
    given = r.rec.get("grades")
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise r.fail(f"grades must be an object {{id: grade}}, got {type(given).__name__}")
    out = {}
    for k, v in given.items():
        d = r.an_id(k, f"grades key {k!r}")
        if isinstance(v, bool) or not isinstance(v, int):
            raise r.fail(f"grades[{k!r}] must be a whole number, got {v!r}")
        if not -(2**63) <= v < 2**63:
            raise r.fail(f"grades[{k!r}] must be a whole number within 64 bits, got one of {len(str(abs(v)))} digits")
        out[d] = v
    return out


def _facets(r: _Reader) -> tuple[tuple[str, tuple[str, ...]], ...] | None:
    """``[{"name", "ids": [...]}]``: the aspects an answer needs, each with the chunks that cover it."""
    items = r.items(r.rec.get("facets"), "facets", " of {name, ids} objects")
    if items is None:
        return None
    out = []
    for i, f in enumerate(items, start=1):
        if not isinstance(f, Mapping) or "ids" not in f:
            raise r.fail(f"facets[{i}] must be an object with ids (and a name)")
        name = r.text(f["name"], f"facets[{i}].name") if f.get("name") is not None else f"facet {i}"
        out.append((name, r.ids(f["ids"], f"facets[{i}].ids") or ()))
    return tuple(out)


def _nuggets(r: _Reader) -> tuple[Nugget, ...] | None:
    """``[{"text", "importance": "vital"|"okay", "supported_by"?, "partially_supported_by"?, "undecided"?,
    "tied"?, "not_sent"?}]``."""
    items = r.items(r.rec.get("nuggets"), "nuggets", " of objects")
    if items is None:
        return None
    out = []
    for i, n in enumerate(items, start=1):
        if not isinstance(n, Mapping):
            raise r.fail(f"nuggets[{i}] must be an object with text and importance")
        imp = n.get("importance", "okay")
        if imp not in ("vital", "okay"):
            raise r.fail(f"nuggets[{i}].importance must be 'vital' or 'okay', got {imp!r}")
        text = r.text(n["text"], f"nuggets[{i}].text") if n.get("text") is not None else f"nugget {i}"
        lists = [r.ids(n.get(k), f"nuggets[{i}].{k}") or () for k in ("supported_by", "partially_supported_by")]
        out.append((text, imp == "vital", *lists, *_opens(r, n, f"nuggets[{i}]")))
    return tuple(out)


def _claims(r: _Reader) -> tuple[Claim, ...] | None:
    """``[{"text", "supported_by": [ids], "undecided"?, "tied"?, "not_sent"?: [ids]}]`` (``ctxeval judge
    claims`` writes it)."""
    items = r.items(r.rec.get("claims"), "claims", " of objects")
    if items is None:
        return None
    out: list[Claim] = []
    for i, c in enumerate(items, start=1):
        if not isinstance(c, Mapping) or not isinstance(c.get("text"), str):
            raise r.fail(f"claims[{i}] must be an object with a text")
        full: tuple[str, ...] = r.ids(c.get("supported_by"), f"claims[{i}].supported_by") or ()
        out.append((r.text(c["text"], f"claims[{i}].text"), full, *_opens(r, c, f"claims[{i}]")))
    return tuple(out)


def _judged(r: _Reader) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...], tuple[str, ...]] | None:
    """``{"relevant": [ids], "undecided"?, "tied"?, "not_sent"?: [ids]}`` (``ctxeval judge relevance``
    writes it)."""
    value = r.rec.get("judged")
    if value is None:
        return None
    if not isinstance(value, Mapping) or "relevant" not in value:
        raise r.fail("judged must be an object {relevant: [ids], undecided: [ids]}")
    relevant = r.ids(value["relevant"], "judged.relevant") or ()
    undecided, tied, not_sent = _opens(r, value, "judged")
    return relevant, undecided, tied, not_sent


def _labelled_by(r: _Reader) -> tuple[Mapping[str, Any], ...]:
    value = r.rec.get("labelled_by")
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(x, Mapping) for x in value):
        raise r.fail("labelled_by must be a list of objects {judge, model, heuristic, task}")
    return tuple(r.clean(dict(x)) for x in value)
