"""Matching 64-bit keys: a direct-address table in numpy (the probe of every join).

Keys are uniformly distributed 64-bit hashes (see :mod:`ctxeval._core.ids`); every match they
suggest is checked on the ids by the caller.
"""

from __future__ import annotations

import numpy as np

__all__ = ["lookup_keys", "match_keys"]

# odd multipliers that pick other bits of a key for the second and later tables of match_keys
_REHASH = (0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD)
_LOAD = 8  # table slots per key (a power of two at least this many times the keys)


def _slot_table(n: int) -> tuple[np.ndarray, np.uint64]:
    bits = max(int(n * _LOAD - 1).bit_length(), 4)
    return np.full(1 << bits, -1, dtype=np.int32), np.uint64(64 - bits)


def match_keys(keys: np.ndarray, table_keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(i, j)`` with ``keys[i] == table_keys[j]``, ``i`` ascending: for each key, the first of the
    table's keys equal to it found (one per key; equal table keys only arise from a hash collision,
    which the callers' string check then detects). Keys are uniformly distributed 64-bit hashes.

    A direct-address table in numpy: ``table_keys`` are scattered into ``8 * len`` slots by their top
    bits; a key looks up its slot and compares. The few table keys that lost their slot to another
    go to a second table (other bits), looked up only by the keys whose slot was taken by a
    different key, and so on until none is left. About twice as fast as a general hash join on
    cache-sized blocks, and numpy's gathers release the GIL, so blocks run on all cores.

    Checked against a dictionary, with 300 table keys forced into one slot of the first table:

    >>> rng = np.random.default_rng(7)
    >>> table_keys = rng.integers(0, 2**63, 4000, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    >>> table_keys[:300] = (table_keys[:300] >> np.uint64(20)) | np.uint64(0xABCD << 48)
    >>> table_keys = np.unique(table_keys)  # distinct (and sorted: the shared slot is one stretch)
    >>> keys = np.concatenate([table_keys[::3], rng.integers(0, 2**63, 9000, dtype=np.int64).astype(np.uint64)])
    >>> keys = keys[rng.permutation(keys.size)]
    >>> i, j = match_keys(keys, table_keys)
    >>> where = {k: n for n, k in enumerate(table_keys.tolist())}
    >>> expect = [(n, where[k]) for n, k in enumerate(keys.tolist()) if k in where]
    >>> list(zip(i.tolist(), j.tolist())) == expect, len(expect)
    (True, 1334)
    """
    n = table_keys.size
    table, shift = _slot_table(n)
    slot = (table_keys >> shift).astype(np.intp)
    idx = np.arange(n, dtype=np.int32)
    table[slot] = idx  # one of the keys sharing a slot wins it
    cand = table[(keys >> shift).astype(np.intp)]
    taken = np.flatnonzero(cand >= 0)
    c = cand[taken]
    eq = table_keys[c] == keys[taken]
    hit = np.flatnonzero(eq)
    i, j = taken[hit], c[hit].astype(np.int64)
    lost = np.flatnonzero(table[slot] != idx)  # table keys that did not win their slot
    ask = taken[~eq]  # keys whose slot holds another key: they may equal a lost key
    more_i, more_j = [], []
    for mul in map(np.uint64, _REHASH):
        if not (lost.size and ask.size):
            break
        lk = table_keys[lost]
        table, shift = _slot_table(lost.size)
        slot = ((lk * mul) >> shift).astype(np.intp)
        idx = np.arange(lost.size, dtype=np.int32)
        table[slot] = idx
        ak = keys[ask]
        cand = table[((ak * mul) >> shift).astype(np.intp)]
        taken = np.flatnonzero(cand >= 0)
        c = cand[taken]
        eq = lk[c] == ak[taken]
        more_i.append(ask[taken[eq]])
        more_j.append(lost[c[eq]])
        ask = ask[taken[~eq]]
        lost = lost[table[slot] != idx]
    if lost.size and ask.size:  # still some left (rare): a binary search of the sorted rest
        order = np.argsort(table_keys[lost], kind="stable")
        lost = lost[order]
        lk = table_keys[lost]
        ak = keys[ask]
        at = np.minimum(np.searchsorted(lk, ak), lk.size - 1)
        eq = lk[at] == ak
        more_i.append(ask[eq])
        more_j.append(lost[at[eq]])
    if more_i:
        mi = np.concatenate(more_i)
        if mi.size:
            mj = np.concatenate(more_j)
            order = np.argsort(mi)
            mi, mj = mi[order], mj[order]
            at = np.searchsorted(i, mi)
            i, j = np.insert(i, at, mi), np.insert(j, at, mj)
    return i.astype(np.int64, copy=False), j


def lookup_keys(keys: np.ndarray, table_keys: np.ndarray) -> np.ndarray:
    """For each key, the index of a table key equal to it, or -1: :func:`match_keys` as one array
    over the keys (the probe written into it in place, no index arrays of the hits), for a table
    probed by many more keys than it holds (a run's rows placed in a chunk table). Only the keys that
    missed though their slot holds another key are matched again, against the table keys that lost
    their slot.

    Checked against a dictionary, with 300 table keys forced into one slot:

    >>> rng = np.random.default_rng(7)
    >>> table_keys = rng.integers(0, 2**63, 4000, dtype=np.int64).astype(np.uint64) * np.uint64(2)
    >>> table_keys[:300] = (table_keys[:300] >> np.uint64(20)) | np.uint64(0xABCD << 48)
    >>> keys = np.concatenate([table_keys[::3], rng.integers(0, 2**63, 9000, dtype=np.int64).astype(np.uint64)])
    >>> keys = keys[rng.permutation(keys.size)]
    >>> where = {k: n for n, k in enumerate(table_keys.tolist())}
    >>> got = lookup_keys(keys, table_keys)
    >>> got.tolist() == [where.get(k, -1) for k in keys.tolist()], int((got >= 0).sum())
    (True, 1334)
    """
    out = np.full(keys.size, -1, dtype=np.int64)
    n = table_keys.size
    if n == 0 or keys.size == 0:
        return out
    table, shift = _slot_table(n)
    slot = (table_keys >> shift).view(np.int64)
    idx = np.arange(n, dtype=np.int32)
    table[slot] = idx  # one of the keys sharing a slot wins it
    np.right_shift(keys, shift, out=out.view(np.uint64))  # each key's slot
    cand = table[out]
    out[:] = cand
    # an empty slot (-1) reads the last table key, which such a key cannot equal (its slot is taken)
    miss = np.flatnonzero(table_keys[cand] != keys)
    out[miss] = -1
    ask = miss[cand[miss] >= 0]  # their slot holds another key: they may equal a key that lost its slot
    lost = np.flatnonzero(table[slot] != idx)
    if ask.size and lost.size:
        i, j = match_keys(keys[ask], table_keys[lost])
        out[ask[i]] = lost[j]
    return out
