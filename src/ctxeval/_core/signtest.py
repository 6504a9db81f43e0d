"""The exact two-sided sign test (binomial test with p = 1/2), for counts small and large.

Pure standard library: ``p = min(1, 2 * P[X <= min(a, b)])`` for ``X ~ Binomial(a + b, 1/2)``, summed
exactly with integers (``math.comb``), so the value is exact for any count a report can hold.
"""

from __future__ import annotations

import math

__all__ = ["sign_test"]


def sign_test(a: int, b: int) -> float:
    """Two-sided exact sign test of ``a`` against ``b`` successes (ties already left out): the chance,
    if each case were equally likely to fall either way, of a split at least as uneven.

    >>> sign_test(14, 13), sign_test(9, 1), sign_test(0, 0)
    (1.0, 0.021484375, 1.0)
    """
    if a < 0 or b < 0:
        raise ValueError("sign_test: counts must be >= 0")
    n = a + b
    if n == 0:
        return 1.0
    low = min(a, b)
    tail = sum(math.comb(n, i) for i in range(low + 1))
    return min(1.0, (2 * tail) / (1 << n))  # int / int: Python rounds the exact quotient once
