"""The reading rule of TREC text (ctxeval._io.trec's docstring), case by case through every tier.

Each fast tier may decline a file (None: the next tier reads it) but must never read it otherwise
than the rule says; the line-by-line tier and the public reader must give exactly the expected rows
or the expected error. A Hypothesis test feeds arbitrary bytes to every tier and to the public
readers and accepts only a result or a CtxevalError.
"""

from __future__ import annotations

import gzip
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxeval
from ctxeval._io import columnar, native
from ctxeval._io.exact import frame as exact_frame
from ctxeval._io.frames import frame_of

Q = "qrels"
R = "run"
BIG = b"".join(b"q%d 0 d%d 1\n" % (i, i) for i in range(3000))

# (name, kind, bytes, expected rows (qid, doc, value) or the error's text)
CASES = [
    ("plain", Q, b"q1 0 d1 1\nq1 0 d2 0\n", [("q1", "d1", 1), ("q1", "d2", 0)]),
    ("spaces and tabs fold", Q, b"  q1 \t0\t d1  1 \t\n", [("q1", "d1", 1)]),
    ("crlf", Q, b"q1 0 d1 1\r\nq1 0 d2 0\r\n", [("q1", "d1", 1), ("q1", "d2", 0)]),
    ("comments and blank lines", Q, b"# x\n\n q1 0 d1 1\n   \n#q2 0 d2 1\n", [("q1", "d1", 1)]),
    ("bom", Q, b"\xef\xbb\xbfq1 0 d1 1\n", [("q1", "d1", 1)]),
    ("bom then a blank line", Q, b"\xef\xbb\xbf\nq1 0 d1 1\n", [("q1", "d1", 1)]),
    ("no-break space inside an id", Q, "q1 0 d\u00a01 1\n".encode(), [("q1", "d\u00a01", 1)]),
    ("vertical tab inside an id", Q, b"q1 0 d\x0b1 1\n", [("q1", "d\x0b1", 1)]),
    ("U+3000 is no separator", Q, "q1\u30000 d1 1\n".encode(), ":1: expected 4 fields (qid iter docid grade), found 3"),
    ("too few fields", Q, b"q1 0 d1\n", ":1: expected 4 fields (qid iter docid grade), found 3"),
    ("a doubled space for a missing iter", Q, b"q1  d1 1\n", ":1: expected 4 fields (qid iter docid grade), found 3"),
    ("a fifth field", Q, b"q1 0 d1 1 x\n", ":1: expected 4 fields (qid iter docid grade), found 5"),
    (
        "one stray line in a big file",
        Q,
        BIG + b"q9 0 d9 1 extra\n",
        ":3001: expected 4 fields (qid iter docid grade), found 5",
    ),
    (
        "a run given as qrels",
        Q,
        b"q1 Q0 d1 1 0.5 tag\n",
        "found 6; this looks like a run (qid Q0 docid rank score tag), not qrels",
    ),
    ("grade with underscore", Q, b"q1 0 d1 1_0\n", ":1: relevance '1_0' is not an integer"),
    ("grade in Arabic-Indic digits", Q, "q1 0 d1 \u0663\n".encode(), ":1: relevance '\u0663' is not an integer"),
    ("grade beyond 64 bits", Q, b"q1 0 d1 3.5e38\n", ":1: relevance '3.5e38' is out of range"),
    ("grade written as a float", Q, b"q1 0 d1 2.0\n", [("q1", "d1", 2)]),
    ("NUL in an id", Q, b"q1 0 d\x001 1\n", ":1: a NUL byte in a field"),
    ("a lone CR stays in an id", Q, b"q1 0 d\r1 1\n", [("q1", "d\r1", 1)]),
    ("plain run", R, b"q1 Q0 d1 1 0.5 t\nq1 Q0 d2 2 0.25 t\n", [("q1", "d1", 0.5), ("q1", "d2", 0.25)]),
    (
        "a doubled space for a missing Q0",
        R,
        b"q1  d1 1 0.5 t\n",
        ":1: expected 6 fields (qid Q0 docid rank score tag), found 5",
    ),
    (
        "a doubled space for a missing rank",
        R,
        b"q1 Q0 d1  0.5 t\n",
        ":1: expected 6 fields (qid Q0 docid rank score tag), found 5",
    ),
    ("a seventh field", R, b"q1 Q0 d1 1 0.5 t x\n", ":1: expected 6 fields (qid Q0 docid rank score tag), found 7"),
    ("score with underscore", R, b"q1 Q0 d1 1 0_5 t\n", ":1: score '0_5' is not a number"),
    ("score beyond float64", R, b"q1 Q0 d1 1 1e400 t\n", ":1: score '1e400' is not finite"),
    ("score nan", R, b"q1 Q0 d1 1 nan t\n", ":1: score 'nan' is not finite"),
    ("score inf", R, b"q1 Q0 d1 1 -inf t\n", ":1: score '-inf' is not finite"),
    ("hexadecimal score", R, b"q1 Q0 d1 1 0x1p3 t\n", ":1: score '0x1p3' is not a number"),
    ("large finite score", R, b"q1 Q0 d1 1 1e300 t\n", [("q1", "d1", 1e300)]),
]


def _rows(cols, kind: str) -> list[tuple]:
    return [tuple(r) for r in frame_of(cols, "score" if kind == R else "relevance").iter_rows()]


def _fast_tiers(path: Path, data: bytes, kind: str) -> dict[str, list[tuple] | None]:
    """What each fast tier makes of the file (None: it declines): the compiled scanner (on the file and
    in memory), and the vectorised tier's two polars paths (a plainly laid-out piece read as it is, and
    text with its separators folded)."""
    out: dict[str, list[tuple] | None] = {}
    if native.available():  # tests/io/test_native.py checks that it is wherever a C compiler is
        mapped = native.scan_file(path, kind)
        out["native"] = None if mapped is None else _rows(mapped.columns, kind)
        scanned = native.scan_bytes(data, kind)
        out["native in memory"] = None if scanned is None else _rows(scanned.columns, kind)
    body = data[3:] if data.startswith(b"\xef\xbb\xbf") else data
    for tier, frame in (("plain", columnar._plain(body, kind)), ("folded", columnar.folded(body, kind))):
        reduced = columnar._Reduced(kind)
        if frame is not None and reduced.add(frame) and (cols := reduced.columns()) is not None:
            out[tier] = _rows(cols, kind)
        else:
            out[tier] = None
    return out


def _read_public(path: Path, kind: str) -> list[tuple]:
    obj = ctxeval.Run.from_file(path) if kind == R else ctxeval.Qrels.from_file(path)
    value = "score" if kind == R else "relevance"
    return [tuple(r) for r in obj.frame.select(["query_id", "doc_id", value]).iter_rows()]


@pytest.mark.parametrize(("name", "kind", "data", "expected"), CASES, ids=[c[0] for c in CASES])
def test_every_tier_follows_the_rule(name: str, kind: str, data: bytes, expected, tmp_path: Path) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for tier, rows in _fast_tiers(path, data, kind).items():
            if rows is not None:
                assert not isinstance(expected, str), f"{tier} read a file the rule refuses"
                assert rows == expected, tier
        if isinstance(expected, str):
            with pytest.raises(ctxeval.FormatError) as err:
                exact_frame(data, kind, "input.txt")
            assert expected in str(err.value)
            with pytest.raises(ctxeval.FormatError) as err:
                _read_public(path, kind)
            assert f"{path}{expected}" in str(err.value) or expected in str(err.value)
            assert "\n" not in str(err.value)
        else:
            df = exact_frame(data, kind, "input.txt")
            value = "score" if kind == R else "relevance"
            assert [tuple(r) for r in df.select(["query_id", "doc_id", value]).iter_rows()] == expected
            assert _read_public(path, kind) == expected


def test_the_rule_holds_through_gzip(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt.gz"
    path.write_bytes(gzip.compress(b"q1 0 d1 1 x\n", mtime=0))
    with pytest.raises(ctxeval.FormatError, match="found 5"):
        ctxeval.Qrels.from_file(path)


_FIELD = st.sampled_from([b"q1", b"q2", b"d1", b"d\xc2\xa0", b"Q0", b"0", b"1", b"2.0", b"-3", b"0.5", b"1e400",
                          b"nan", b"1_0", b"#", b"\x00", b"\xff", b"\r", b"x"])  # fmt: skip
# separators drawn per file: one kind only (the fast tiers' case) or mixed, single or doubled
_SEPARATORS = st.sampled_from([[b" "], [b"\t"], [b" ", b"  "], [b"\t", b"\t\t"], [b" ", b"\t", b"  ", b" \t"]])


@st.composite
def _text(draw: st.DrawFn) -> bytes:
    seps = draw(_SEPARATORS)
    lines = draw(st.lists(st.lists(st.tuples(_FIELD, st.sampled_from(seps)), max_size=8), max_size=12))
    return b"\n".join(b"".join(f + s for f, s in line) for line in lines)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    kind=st.sampled_from([Q, R]),
    data=st.one_of(st.binary(max_size=300), _text()),
)
def test_arbitrary_bytes_give_a_result_or_a_ctxeval_error(kind: str, data: bytes, tmp_path: Path) -> None:
    path = tmp_path / "fuzz.txt"
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fast = _fast_tiers(path, data, kind)  # a fast tier declines or reads: never raises
        try:
            public = _read_public(path, kind)
        except ctxeval.CtxevalError:
            public = None
        try:  # the exact tier is the reference: a fast tier reads what it reads, or declines
            df = exact_frame(data, kind, "fuzz.txt")
            value = "score" if kind == R else "relevance"
            exact = [tuple(r) for r in df.select(["query_id", "doc_id", value]).iter_rows()]
        except ctxeval.CtxevalError:
            exact = None
    if exact is not None and not exact:
        exact = None  # an empty result: the public readers refuse an empty file
    assert public == exact
    for tier, rows in fast.items():
        if rows is not None:
            assert rows == exact, tier


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(form=st.sampled_from(["prefs", "qrels_prefs"]), data=st.one_of(st.binary(max_size=300), _text()))
def test_arbitrary_bytes_as_preferences_give_a_result_or_a_ctxeval_error(
    form: str, data: bytes, tmp_path: Path
) -> None:
    from ctxeval._trec_eval import trec_eval

    path = tmp_path / "prefs.txt"
    path.write_bytes(data)
    run = tmp_path / "run.txt"
    run.write_text("a Q0 b 1 2 t\na Q0 c 2 1 t\n1 Q0 0 1 1 t\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        try:
            out: str | None = trec_eval(path, run, ["all_prefs"], query=True, complete=True, rel_format=form)
        except ctxeval.CtxevalError:
            out = None  # refused with a one-line error: the other accepted outcome
    assert out is None or (out.endswith("\n") and "prefs_num_prefs_poss  \tall\t" in out)
