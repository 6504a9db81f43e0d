"""The shape of a reply, declared once per task: one value gives the strict parser, the JSON schema
sent to servers that constrain their output, the shape a repair turn names, and the prompt's last
sentence (:attr:`Reply.instruction`), so that the four cannot drift apart.

A reply is parsed strictly: exactly the one JSON object asked for (a Markdown code fence around it is
tolerated), or :class:`ParseError`; the runner then asks once more with a repair turn, and otherwise
records the judgment as *undecided* with its reason, never a guess.

>>> r = Integer("grade", 1, 5)
>>> r.parse('{"grade": 4}'), r.shape
(4, '{"grade": N} with N from 1 to 5')
>>> r.instruction
'Reply with one JSON object and nothing else: {"grade": N} with N from 1 to 5.'
>>> Boolean("used").parse('```json\\n{"used": true}\\n```')
True
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Boolean", "Choice", "Free", "Integer", "Nuggets", "ParseError", "Reply", "Strings", "json_object"]


class ParseError(ValueError):
    """A reply that is not the one JSON object the task asks for."""


_FENCED = re.compile(r"```(?:json)?\s*(.*?)\s*```", flags=re.DOTALL)


def json_object(reply: str) -> dict[str, Any] | None:
    """The reply as a JSON object (a Markdown code fence around it tolerated), else None."""
    text = reply.strip()
    m = _FENCED.fullmatch(text)
    try:
        obj = json.loads(m.group(1) if m else text)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _object(reply: str) -> dict[str, Any]:
    obj = json_object(reply)
    if obj is None:
        raise ParseError(f"not a JSON object: {reply[:80]!r}")
    return obj


def _closed(**props: Any) -> dict[str, Any]:
    return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


class Reply:
    """What a task's reply must be. Subclasses give :meth:`value` (the parsed value of the object, or
    :class:`ParseError`), :attr:`schema` and :attr:`shape`; :meth:`parse` and :attr:`instruction`
    follow from them. ``logprobs``: the answer is read from the first token's logprobs, not parsed."""

    key: str
    logprobs = False

    @property
    def schema(self) -> Mapping[str, Any] | None:
        raise NotImplementedError

    @property
    def shape(self) -> str:
        raise NotImplementedError

    @property
    def instruction(self) -> str:
        """The prompt's last sentence: the object to reply with, in the words a repair turn uses too."""
        return f"Reply with one JSON object and nothing else: {self.shape}."

    def parse(self, reply: str) -> Any:
        obj = _object(reply)
        if set(obj) != {self.key}:
            raise ParseError(f"expected {self.shape}, got {reply[:80]!r}")
        return self.value(obj[self.key], reply)

    def value(self, v: Any, reply: str) -> Any:
        raise NotImplementedError


@dataclass(frozen=True)
class Integer(Reply):
    """``{key: N}`` with N an integer from ``lo`` to ``hi``."""

    key: str
    lo: int
    hi: int

    @property
    def schema(self) -> Mapping[str, Any]:
        return _closed(**{self.key: {"type": "integer", "enum": list(range(self.lo, self.hi + 1))}})

    @property
    def shape(self) -> str:
        return f'{{"{self.key}": N}} with N from {self.lo} to {self.hi}'

    def value(self, v: Any, reply: str) -> int:
        if isinstance(v, bool) or not isinstance(v, int) or not self.lo <= v <= self.hi:
            raise ParseError(f'expected {{"{self.key}": {self.lo}..{self.hi}}}, got {reply[:80]!r}')
        return v


@dataclass(frozen=True)
class Boolean(Reply):
    """``{key: true}`` or ``{key: false}``."""

    key: str

    @property
    def schema(self) -> Mapping[str, Any]:
        return _closed(**{self.key: {"type": "boolean"}})

    @property
    def shape(self) -> str:
        return f'{{"{self.key}": true}} or {{"{self.key}": false}}'

    def value(self, v: Any, reply: str) -> bool:
        if not isinstance(v, bool):
            raise ParseError(f'expected {{"{self.key}": true|false}}, got {reply[:80]!r}')
        return v


@dataclass(frozen=True)
class Choice(Reply):
    """``{key: one of choices}``."""

    key: str
    choices: tuple[str, ...]

    @property
    def schema(self) -> Mapping[str, Any]:
        return _closed(**{self.key: {"type": "string", "enum": list(self.choices)}})

    @property
    def shape(self) -> str:
        each = [f'{{"{self.key}": "{c}"}}' for c in self.choices]
        return ", ".join(each[:-1]) + f" or {each[-1]}" if len(each) > 1 else each[0]

    def value(self, v: Any, reply: str) -> str:
        if v not in self.choices:
            raise ParseError(f'expected {{"{self.key}": {"|".join(self.choices)}}}, got {reply[:80]!r}')
        return str(v)


@dataclass(frozen=True)
class Strings(Reply):
    """``{key: [1 .. limit non-blank strings]}`` (each stripped); ``noun`` names the items."""

    key: str
    limit: int
    noun: str

    @property
    def schema(self) -> Mapping[str, Any]:
        items = {"type": "array", "items": {"type": "string"}, "minItems": 1, "maxItems": self.limit}
        return _closed(**{self.key: items})

    @property
    def shape(self) -> str:
        return f'{{"{self.key}": ["...", "..."]}} with 1 to {self.limit} {self.noun}'

    def value(self, v: Any, reply: str) -> list[str]:
        if not isinstance(v, list) or not all(isinstance(x, str) and x.strip() for x in v):
            raise ParseError(f'expected {{"{self.key}": [strings]}}, got {reply[:80]!r}')
        if not v or len(v) > self.limit:
            raise ParseError(f"expected 1..{self.limit} items in {self.key}, got {len(v)}")
        return [x.strip() for x in v]


@dataclass(frozen=True)
class Nuggets(Reply):
    """``{"nuggets": [{"text", "importance": vital|okay}]}`` with 1 to ``limit`` nuggets, parsed as
    ``[(text, vital?)]``."""

    limit: int
    key: str = "nuggets"

    @property
    def schema(self) -> Mapping[str, Any]:
        item = _closed(text={"type": "string"}, importance={"type": "string", "enum": ["vital", "okay"]})
        return _closed(nuggets={"type": "array", "items": item, "minItems": 1, "maxItems": self.limit})

    @property
    def shape(self) -> str:
        return f'{{"nuggets": [{{"text": "...", "importance": "vital" or "okay"}}]}} with 1 to {self.limit} nuggets'

    def value(self, v: Any, reply: str) -> list[tuple[str, bool]]:
        if not isinstance(v, list) or not v:
            raise ParseError(f'expected {{"nuggets": [{{"text", "importance"}}]}}, got {reply[:80]!r}')
        out = []
        for n in v:
            if (
                not isinstance(n, dict)
                or not isinstance(n.get("text"), str)
                or not n["text"].strip()
                or n.get("importance") not in ("vital", "okay")
            ):
                raise ParseError(f"a nugget must be {{text, importance: vital|okay}}, got {n!r}")
            out.append((n["text"].strip(), n["importance"] == "vital"))
        return out


@dataclass(frozen=True)
class Free(Reply):
    """A free answer whose first token's logprobs are the value (no schema, nothing to parse); its
    prompt ends with its own instruction (``instruction``)."""

    text: str
    logprobs = True

    @property
    def schema(self) -> None:
        return None

    @property
    def shape(self) -> str:
        return ""

    @property
    def instruction(self) -> str:
        return self.text

    def parse(self, reply: str) -> str:
        return reply
