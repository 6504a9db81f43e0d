"""``ctxeval chunking``: which chunker at which token budget (:mod:`.chunking`)."""

from .chunking import DEFAULT_BUDGETS, chunking, parse_budgets
from .model import ChunkerRow, ChunkingModel, Verdict

__all__ = ["DEFAULT_BUDGETS", "ChunkerRow", "ChunkingModel", "Verdict", "chunking", "parse_budgets"]
