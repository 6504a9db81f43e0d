"""The small safe grammar of measure names (no ``eval``)::

    measure  := NAME [ "(" param ("," param)* ")" ] [ "@" CUTOFF | "@" BUDGET "tok" ]
    param    := KEY "=" value
    value    := INT | FLOAT | BOOL | STRING | QUOTED | "{" INT ":" NUMBER ("," INT ":" NUMBER)* "}"

trec_eval names (``ndcg_cut.10``, ``P.5,10``, ``P_5``, ``map``, ``recip_rank``) and common ranx names
(``ndcg@10``, ``mrr``, ``hit_rate@5``) are accepted as aliases of the same canonical measures.

>>> m = parse_measure("ndcg_cut.10")
>>> str(m), m == parse_measure("nDCG@10")
('nDCG@10', True)
>>> str(parse_measure("P(rel=2)@5")), str(parse_measure("AP(rel=1)")), [str(x) for x in parse_measures("P.5,10")]
('P(rel=2)@5', 'AP', ['P@5', 'P@10'])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .._errors import MeasureError, did_you_mean
from .base import _BARE_RE, _NAME_RE, Measure, known_names, lookup, make, with_trec_value

__all__ = ["parse_measure", "parse_measures"]


def _split_top(text: str, sep: str = ",") -> list[str]:
    parts: list[str] = []
    depth = 0
    quote: str | None = None
    cur: list[str] = []
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = None
            continue
        if ch in "'\"":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if quote or depth:
        raise ValueError("unbalanced quotes or braces")
    parts.append("".join(cur))
    return parts


def _words(text: str) -> list[str]:
    """``text`` split at whitespace outside parentheses, braces and quotes: ``"nDCG@10 AP(rel = 2)"`` is
    two names, as ir_measures reads a list of measures."""
    words: list[str] = []
    cur: list[str] = []
    depth = 0
    quote: str | None = None
    for ch in text:
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif ch.isspace() and depth == 0:
            if cur:
                words.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    if cur:
        words.append("".join(cur))
    return words


def _literal(text: str) -> Any:
    t = text.strip()
    if not t:
        raise ValueError("empty value")
    if t[0] in "'\"":
        if len(t) < 2 or t[-1] != t[0]:
            raise ValueError(f"unterminated string {t}")
        return t[1:-1]
    if t.startswith("{"):
        if not t.endswith("}"):
            raise ValueError(f"unterminated mapping {t}")
        out: dict[int, float] = {}
        body = t[1:-1].strip()
        for item in _split_top(body) if body else []:
            k, sep, v = item.partition(":")
            if not sep:
                raise ValueError(f"mapping item {item.strip()!r} is not GRADE:GAIN")
            key = _literal(k)
            val = _literal(v)
            if not isinstance(key, int) or isinstance(key, bool):
                raise ValueError(f"mapping key {k.strip()!r} is not an integer")
            out[key] = val
        return out
    low = t.lower()
    if low in ("true", "false"):
        return low == "true"
    if low in ("none", "null"):
        return None
    if re.fullmatch(r"[+-]?\d+", t):
        return int(t)
    try:
        return float(t)
    except ValueError:
        pass
    if _BARE_RE.match(t):
        return t
    raise ValueError(f"cannot read value {t!r}")


def _number(text: str) -> int | float:
    v = _literal(text)
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"cutoff {text!r} is not a number")
    return v


_HELP = "expected NAME, NAME@K or NAME(param=value,...)@K, e.g. nDCG@10, P(rel=2)@5"


def parse_measure(text: str | Measure) -> Measure:
    """Parse one measure name (canonical, trec_eval or ranx style) into a :class:`Measure`."""
    found = parse_measures(text)
    if len(found) != 1:
        raise MeasureError(f"{text!r} names {len(found)} measures; give one")
    return found[0]


def parse_measures(text: str | Measure | Iterable[str | Measure]) -> list[Measure]:
    """Parse a measure name that may denote several measures (``P.5,10`` is P@5 and P@10; names
    separated by spaces, ``"nDCG@10 AP"``, are each read).

    >>> parse_measures("nDCG@10 AP(rel = 2)")
    [Measure('nDCG@10'), Measure('AP(rel=2)')]
    """
    if isinstance(text, Measure):
        return [text]
    if not isinstance(text, str):
        out: list[Measure] = []
        for t in text:
            out.extend(parse_measures(t))
        return out
    raw = text.strip()
    if not raw:
        raise MeasureError(f"empty measure name; {_HELP}")
    words = _words(raw)
    if len(words) > 1:  # "nDCG@10 AP": several measures in one string (ir_measures' habit)
        return [m for w in words for m in parse_measures(w)]
    m = _NAME_RE.match(raw)
    if m:
        name = m.group("name")
        family, fixed = lookup(name)
        if family is not None:
            params: dict[str, Any] = dict(fixed)
            if m.group("params") is not None:
                try:
                    for item in _split_top(m.group("params")):
                        if not item.strip():
                            continue
                        key, sep, value = item.partition("=")
                        if not sep or not key.strip().isidentifier():
                            raise ValueError(f"{item.strip()!r} is not key=value")
                        params[key.strip()] = _literal(value)
                except ValueError as exc:
                    raise MeasureError(f"cannot parse measure {raw!r}: {exc}; {_HELP}") from None
            cut: int | float | None = None
            budget: int | None = None
            tok = re.fullmatch(r"(\d+)tok", m.group("cut") or "")  # a budget of tokens: nDCG@512tok
            if tok:
                budget = int(tok.group(1))
            elif m.group("cut") is not None:
                cut_text = m.group("cut")
                lvl = re.fullmatch(r"(.+?)-l(\d+)", cut_text)  # ranx: ndcg@10-l2
                if lvl:
                    cut_text = lvl.group(1)
                    params["rel"] = int(lvl.group(2))
                try:
                    cut = _number(cut_text)
                except ValueError as exc:
                    raise MeasureError(f"cannot parse measure {raw!r}: {exc}; {_HELP}") from None
            return [make(family, params, cut, budget)]
    trec = _parse_trec_style(raw)
    if trec is not None:
        return trec
    head = re.split(r"[@(.]", raw, maxsplit=1)[0]
    hint = did_you_mean(head, known_names()) if head else ""
    raise MeasureError(f"unknown measure {raw!r}{hint}; {_HELP}. Run 'ctxeval measures' for the list")


def _parse_trec_style(raw: str) -> list[Measure] | None:
    """``name.v1,v2`` (trec_eval -m syntax), ``name.key=v,...`` (trec_eval parameter pairs: integer
    keys are gains, other keys are parameters) and ``name_v`` (trec_eval output names)."""
    base, dot, rest = raw.partition(".")
    if dot:
        family, fixed = lookup(base)
        if family is not None and rest:
            if "=" in rest:
                return [_trec_pairs(raw, family, fixed, rest)]
            out = []
            for v in rest.split(","):
                try:
                    value = _number(v)
                except ValueError:
                    raise MeasureError(f"cannot parse measure {raw!r}: {v!r} is not a number") from None
                out.append(with_trec_value(family, fixed, value))
            return out
    m = re.fullmatch(r"(.+?)_([0-9][0-9.]*)", raw)
    if m:
        family, fixed = lookup(m.group(1))
        if family is not None:
            try:
                value = _number(m.group(2))
            except ValueError:
                return None
            return [with_trec_value(family, fixed, value)]
    return None


def _trec_pairs(raw: str, family: str, fixed: dict[str, Any], rest: str) -> Measure:
    params: dict[str, Any] = dict(fixed)
    gains: dict[int, Any] = {}
    for item in rest.split(","):
        key, sep, value = item.partition("=")
        key = key.strip()
        try:
            if not sep or not key:
                raise ValueError(f"{item!r} is not key=value")
            val = _literal(value)
        except ValueError as exc:
            raise MeasureError(f"cannot parse measure {raw!r}: {exc}") from None
        if re.fullmatch(r"[+-]?\d+", key):
            gains.setdefault(int(key), val)  # trec_eval: the first gain given for a grade wins
        else:
            params[key] = val
    if gains:
        params["gains"] = gains
    return make(family, params)
