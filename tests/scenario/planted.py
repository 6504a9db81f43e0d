"""The planted RAG corpus of the journey test (its generator ships with the package, as the RAG guide's
example: :mod:`ctxeval._planted`; the truth comes from how the data are made)."""

from ctxeval._planted import CLASSES, DK, GOOD, GRADE, POOL_EXTRA, UTILITY, WEAK, Corpus, K, make, write

__all__ = ["CLASSES", "DK", "GOOD", "GRADE", "POOL_EXTRA", "UTILITY", "WEAK", "Corpus", "K", "make", "write"]
