"""The resampling kernels of compare's tests and intervals: bootstrap sums and sign-flip sums over
queries, the same bits on any BLAS and any number of threads.

Randomness comes from ``numpy.random.default_rng(seed)`` only: random signs from whole 64-bit outputs
of the bit generator, resampling indices from ``integers(0, n, (chunk, n))`` chunk after chunk (the
draws of ``scipy.stats.bootstrap`` with the same generator); neither depends on the chunk size. A
resampled statistic is a sum Σ c_i x_i over the queries (c_i: how often query i was drawn, or whether
its sign flipped); the values are first rounded to a grid on which every such sum is exact
(:func:`exact_grid`), so the sums are the same bits whatever order a BLAS adds them in.

Cost. Each chunk of about 4 million draws is counted a few resamples at a time (``bincount`` of
about 65,000 draws, whose counts stay in cache) and multiplied with the values in one matrix product. When the queries' rows of values take
few distinct values (per-query hits, P@1, one-document queries: typical of RAG), the sums are taken
over the distinct rows instead: a resample's count of each distinct row (``bincount`` of the drawn
rows' classes), and for sign flips the number of flipped bits in each class's bit mask (a population
count of 64 queries at a time). Both give the same exact sums, so the same bits, as the plain product.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from .._errors import ConfigError

__all__ = [
    "CHUNK_ELEMENTS",
    "as_matrix",
    "check_count",
    "check_seed",
    "chunks",
    "exact_grid",
    "flip_sums",
    "resample_means",
    "resample_sums",
    "unique_masks",
]

#: elements of one chunk of random signs / resampling indices (32 MB as int64)
CHUNK_ELEMENTS = 1 << 22
#: resampled indices counted by one bincount (its counts stay in cache)
GROUP_ELEMENTS = 1 << 16
#: at most this many distinct non-zero rows of differences: sign flips counted by population counts
FLIP_CLASSES = 32

Progress = Callable[[float], None] | None


def as_matrix(x: np.ndarray) -> tuple[np.ndarray, bool]:
    """``x`` as a float64 matrix (a vector is one column) and whether it was a vector."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 1:
        return a[:, None], True
    if a.ndim != 2:
        raise ConfigError(f"expected a vector or a matrix of per-query values, got an array of shape {a.shape}")
    return a, False


def check_count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ConfigError(f"{name} must be a whole number >= 1, got {value!r}")
    return int(value)


def check_seed(seed: int) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ConfigError(f"seed must be a whole number >= 0, got {seed!r}")
    return int(seed)


def unique_masks(valid: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct columns of a boolean matrix, in first-seen order, and each column's index among them.

    >>> u, which = unique_masks(np.array([[1, 1, 0], [1, 1, 1]], dtype=bool))
    >>> u.astype(int).tolist(), which.tolist()
    ([[1, 0], [1, 1]], [0, 0, 1])
    """
    valid = np.asarray(valid, dtype=bool)
    if valid.shape[1] == 0:
        return valid, np.zeros(0, dtype=np.int64)
    packed = np.packbits(valid, axis=0).T
    _, first, inverse = np.unique(packed, axis=0, return_index=True, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return valid[:, first[order]], rank[inverse]


def exact_grid(x: np.ndarray) -> np.ndarray:
    """Round each column of ``x`` (finite values; shape ``(n, m)``) to a power-of-two grid on which every
    sum of up to n of its values, each taken up to n times in all, is exact in float64.

    The grid step of a column is 2^(e − 52) with 2^e > n · max|x|: every partial sum is then a whole
    number of steps below 2^53 steps, so floating-point addition in any order (a multi-threaded BLAS
    splits a matrix product differently with more threads) gives the same bits. A value moves by at
    most half a step, ≤ n · max|x| · 2⁻⁵² (about the rounding error of one float sum over the column).

    >>> g = exact_grid(np.array([[0.1], [0.2], [0.3]]))  # 3 · 0.3 < 2^0: steps of 2^-52
    >>> bool(np.all(np.abs(g[:, 0] - [0.1, 0.2, 0.3]) <= 2.0**-53)), bool(np.all(g * 2.0**52 % 1 == 0))
    (True, True)
    """
    a = np.asarray(x, dtype=np.float64)
    n = a.shape[0]
    if a.size == 0:
        return a.copy()
    top = np.abs(a).max(axis=0) * n
    _, e = np.frexp(top)  # top < 2^e
    step = np.ldexp(1.0, (e - 52).astype(np.int64))
    step = np.where(top > 0, np.maximum(step, np.finfo(np.float64).tiny), 1.0)
    return np.round(a / step) * step


def chunks(total: int, n: int) -> list[int]:
    """Sizes of the consecutive chunks of ``total`` rows of n random draws each."""
    size = max(1, CHUNK_ELEMENTS // max(n, 1))
    return [min(size, total - start) for start in range(0, total, size)]


def distinct_rows(w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``w`` (by their bytes) and each row's index among them."""
    flat = np.ascontiguousarray(w)
    keys = flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return flat[first], inverse.reshape(-1).astype(np.intp)


# --------------------------------------------------------------------------------------------------
# sign flips
# --------------------------------------------------------------------------------------------------


def _sign_words(rng: np.random.Generator, rows: int, n: int) -> np.ndarray:
    """``uint64[rows, ⌈n/64⌉]`` of independent fair bits: query i of a row flips its sign when bit
    i mod 64 of word i // 64 is set (the bits of whole outputs of the bit generator, so the stream does
    not depend on how the draws are chunked)."""
    words = (n + 63) // 64
    return rng.bit_generator.random_raw(rows * words).astype("<u8", copy=False).reshape(rows, words)


_POP8 = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)


def _popcount_rows(words: np.ndarray) -> np.ndarray:
    """The number of set bits of each row of a ``uint64`` matrix."""
    count = getattr(np, "bitwise_count", None)  # numpy >= 2.0
    if count is not None:
        return count(words).sum(axis=1, dtype=np.int64)
    return _POP8[words.view(np.uint8)].sum(axis=1)


def flip_sums(dz: np.ndarray, permutations: int, seed: int, progress: Progress = None) -> Iterator[np.ndarray]:
    """For each of ``permutations`` random sign-flip draws, in order, Σ_i flip_i dz_i per column
    (``flip_i`` 0 or 1), yielded in blocks of rows. ``dz`` must be on :func:`exact_grid` (no NaN)."""
    n, m = dz.shape
    rng = np.random.default_rng(seed)
    nonzero = np.flatnonzero(np.any(dz != 0.0, axis=1))
    classes = None
    if nonzero.size:
        rows_u, cls = distinct_rows(dz[nonzero])
        if rows_u.shape[0] <= FLIP_CLASSES:
            onehot = np.zeros((rows_u.shape[0], ((n + 63) // 64) * 64), dtype=bool)
            onehot[cls, nonzero] = True
            masks = np.packbits(onehot, axis=1, bitorder="little").view("<u8")
            classes = (rows_u, masks)
    sizes = chunks(permutations, n)
    flips = np.empty((sizes[0], n) if classes is None else (0, 0))  # one buffer for every chunk
    for size in sizes:
        words = _sign_words(rng, size, n)
        if not nonzero.size:
            yield np.zeros((size, m))
        elif classes is not None:
            rows_u, masks = classes
            counts = np.column_stack([_popcount_rows(words & mask) for mask in masks]).astype(np.float64)
            yield counts @ rows_u
        else:
            np.copyto(flips[:size], np.unpackbits(words.view(np.uint8), axis=1, count=n, bitorder="little"))
            yield flips[:size] @ dz
        if progress:
            progress(size / permutations)


# --------------------------------------------------------------------------------------------------
# bootstrap
# --------------------------------------------------------------------------------------------------


def resample_sums(
    x: np.ndarray, *, resamples: int = 10000, seed: int = 0, progress: Progress = None
) -> tuple[np.ndarray, np.ndarray]:
    """``(sums, counts)``, both ``float64[B, m]``: for each of B bootstrap resamples of the rows, the sum of
    each column's defined values over the resample (a row drawn c times counts c times) and how many
    defined values it holds. Rows are drawn by ``integers(0, n, (chunk, n))`` from
    ``default_rng(seed)``, the draws of ``scipy.stats.bootstrap``.
    """
    a, _ = as_matrix(x)
    B = check_count("resamples", resamples)
    seed = check_seed(seed)
    n, m = a.shape
    sums, counts = np.zeros((B, m)), np.zeros((B, m))
    if n == 0 or m == 0:
        return sums, counts
    valid = ~np.isnan(a)
    xz = exact_grid(np.where(valid, a, 0.0))  # exact resampled sums: the same bits on any BLAS
    masks, which = unique_masks(valid)
    part = np.flatnonzero(~masks.all(axis=0))  # masks with an undefined row; the others hold all n rows
    w = np.hstack([xz, masks[:, part].astype(np.float64)])  # one product: the sums and the defined counts
    w_u, cls = distinct_rows(w)
    few = w_u.shape[0] <= n // 4  # count each resample's draws of each distinct row instead of each row
    if few:  # the classes in the smallest type: gathering them reads and writes less
        cls = cls.astype(np.min_scalar_type(w_u.shape[0] - 1))
    per_mask = np.full((B, masks.shape[1]), float(n))
    rng = np.random.default_rng(seed)
    # int32 draws for n < 2^31: the same numbers as int64 ones (numpy draws both from 32-bit outputs)
    dtype = np.int32 if n <= np.iinfo(np.int32).max else np.int64
    sizes = chunks(B, n)
    width = len(w_u) if few else n
    c = np.empty((sizes[0], width))
    group = max(1, GROUP_ELEMENTS // n)  # resamples counted by one bincount: its counts stay in cache
    at = 0
    for size in sizes:
        idx = rng.integers(0, n, (size, n), dtype=dtype)
        for r0 in range(0, size, group):
            k = min(group, size - r0)
            drawn = cls[idx[r0 : r0 + k]] if few else idx[r0 : r0 + k]
            if k == 1 and width <= 8:  # a handful of classes: counted by comparisons, faster than bincount
                c[r0] = [np.count_nonzero(drawn == u) for u in range(width)]
            elif k == 1:
                c[r0] = np.bincount(drawn[0], minlength=width)
            else:
                keys = drawn + (np.arange(k, dtype=np.intp) * width)[:, None]
                c[r0 : r0 + k] = np.bincount(keys.ravel(), minlength=k * width).reshape(k, width)
        out = c[:size] @ (w_u if few else w)
        sums[at : at + size] = out[:, :m]
        per_mask[at : at + size, part] = out[:, m:]
        at += size
        if progress:
            progress(size / B)
    counts[:] = per_mask[:, which]
    return sums, counts


def resample_means(x: np.ndarray, *, resamples: int = 10000, seed: int = 0, progress: Progress = None) -> np.ndarray:
    """``float64[B, m]``: each column's mean over its defined values in each of B bootstrap resamples
    of the rows (NaN for a resample without any of its defined values). See :func:`resample_sums`."""
    sums, counts = resample_sums(x, resamples=resamples, seed=seed, progress=progress)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.where(counts > 0, counts, 1.0), np.nan)
