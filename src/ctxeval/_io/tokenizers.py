"""Counting tokens: a named tokenizer that works offline out of the box, and a hook for the team's own.

A budget of B tokens is only as meaningful as the tokenizer that counted them, so every tokenizer
has a name, and every report that cuts at a budget names it.

* ``words-v1`` (the default; needs nothing): one token per run of word characters (Unicode letters,
  digits and the underscore: the regex ``\\w+``) and one per other character that is not white space
  (punctuation, symbols). Deterministic and fast; not what an LLM counts: on English prose a
  BPE tokenizer such as cl100k_base counts about as many tokens (words of several tokens and
  joined punctuation roughly cancel), on code, numbers and non-Latin scripts it can count far more.
* ``tiktoken:<encoding>`` (``tiktoken:cl100k_base``, ``tiktoken:o200k_base``): OpenAI's tokenizers
  (``pip install tiktoken``; the encoding's file is downloaded on first use or read from
  ``TIKTOKEN_CACHE_DIR``). A ``tiktoken.Encoding`` may be given directly.
* A Hugging Face tokenizer (a ``tokenizers.Tokenizer`` or a ``transformers`` tokenizer): tokens
  counted without special tokens.
* Any callable ``str -> int`` (named by ``Tokenizer(count, name="...")``, else by its qualified name).

>>> t = Tokenizer.coerce("words-v1")
>>> t.name, t.count(["Hello, world!", "naïve café 42"]).tolist()
('words-v1', [4, 3])
>>> Tokenizer.coerce(len, name="chars").count(["abc"]).tolist()
[3]
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .._errors import ConfigError, DependencyError

__all__ = ["DEFAULT_TOKENIZER", "Tokenizer"]

DEFAULT_TOKENIZER = "words-v1"
_WORDS_V1 = re.compile(r"\w+|[^\w\s]")


def _words_v1(text: str) -> int:
    return sum(1 for _ in _WORDS_V1.finditer(text))


@dataclass(frozen=True)
class Tokenizer:
    """A named token counter (see the module docstring): ``count(texts)`` gives each text's tokens."""

    name: str
    fn: Callable[[str], int] = field(repr=False, compare=False)
    batch: Callable[[list[str]], list[int]] | None = field(default=None, repr=False, compare=False)

    def count(self, texts: Iterable[str]) -> np.ndarray:
        """The number of tokens of each text (int64)."""
        items = list(texts)
        if self.batch is not None and items:
            counts = self.batch(items)
        else:
            counts = [self.fn(t) for t in items]
        out = np.asarray(counts, dtype=np.int64).reshape(-1)
        if out.size != len(items):
            raise ConfigError(f"tokenizer {self.name} gave {out.size} counts for {len(items)} texts")
        if out.size and int(out.min()) < 0:
            raise ConfigError(f"tokenizer {self.name} gave a negative count")
        return out

    @classmethod
    def coerce(cls, value: Any = None, *, name: str | None = None) -> Tokenizer:
        """A :class:`Tokenizer` from itself, a name (``words-v1``, ``tiktoken:<encoding>``), a
        ``tiktoken.Encoding``, a Hugging Face tokenizer, or a callable ``str -> int``."""
        if value is None:
            value = DEFAULT_TOKENIZER
        if isinstance(value, Tokenizer):
            return value if name is None else cls(name, value.fn, value.batch)
        if isinstance(value, str):
            return _named(value)
        enc = _tiktoken_encoding(value)
        if enc is not None:
            return cls(name or f"tiktoken:{enc.name}", lambda t: len(enc.encode(t, disallowed_special=())))
        hf = _hugging_face(value)
        if hf is not None:
            return cls(name or hf[0], hf[1])
        if callable(value):
            label = name or getattr(value, "__qualname__", None) or type(value).__name__
            return cls(f"callable:{label}" if name is None else label, value)
        raise ConfigError(
            f"tokenizer must be a name ({DEFAULT_TOKENIZER}, tiktoken:cl100k_base), a tiktoken encoding, a Hugging "
            f"Face tokenizer or a callable str -> int, got {type(value).__name__}"
        )


def _named(value: str) -> Tokenizer:
    if value == DEFAULT_TOKENIZER:
        return Tokenizer(DEFAULT_TOKENIZER, _words_v1)
    kind, sep, arg = value.partition(":")
    if kind == "tiktoken" and sep and arg:
        try:
            import tiktoken
        except ImportError:
            raise DependencyError(f"tokenizer {value}", "tiktoken", "tiktoken", how="pip install tiktoken") from None
        try:
            enc = tiktoken.get_encoding(arg)
        except Exception as exc:  # an unknown name, or no network to fetch the file (message shortened)
            raise ConfigError(
                f"tokenizer {value}: tiktoken cannot load {arg!r} ({type(exc).__name__}: {str(exc)[:160]}); offline, "
                "put the encoding's file in TIKTOKEN_CACHE_DIR"
            ) from None
        return Tokenizer(value, lambda t: len(enc.encode(t, disallowed_special=())))
    raise ConfigError(
        f"unknown tokenizer {value!r}: use {DEFAULT_TOKENIZER}, tiktoken:<encoding> or a callable str -> int"
    )


def _tiktoken_encoding(value: Any) -> Any:
    mod = type(value).__module__ or ""
    if mod.startswith("tiktoken") and type(value).__name__ == "Encoding":
        return value
    return None


def _hugging_face(value: Any) -> tuple[str, Callable[[str], int]] | None:
    mod = type(value).__module__ or ""
    if mod.startswith("tokenizers") and type(value).__name__ == "Tokenizer":
        return "hf:tokenizers", lambda t: len(value.encode(t, add_special_tokens=False).ids)
    if mod.startswith("transformers"):
        label = getattr(value, "name_or_path", "") or type(value).__name__
        return f"hf:{label}", lambda t: len(value.encode(t, add_special_tokens=False))
    return None
