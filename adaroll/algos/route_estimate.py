"""A task's root success estimated at no env cost, from what the policy does at the task's
expert checkpoints (issue 40, item 3). Pure functions over floats, no I/O.

A verified expert trajectory is a chain of decisions ``a_1^E .. a_T^E``; the policy succeeds
from the root when it takes each (or an equivalent one), so::

    p_hat(x) = prod_t f_t

where ``f_t`` is the chance that the policy takes the expert's action at checkpoint ``c_t``:
``match`` reads it from the ``N`` samples pivot scoring already drew there (the share that match
the expert under ``M``, smoothed so that no factor is 0 or 1: ``(k + 1/2) / (N + 1)``);
``likelihood`` is ``pi(a_t^E | c_t)``, one forward pass per checkpoint. Both ignore the other
paths to success and the device's noise, and the product compounds every factor's error, so
the raw estimate ranks tasks better than it measures them; a one-parameter calibration
``p = p_hat^gamma``, fitted by maximum likelihood on a few tasks' root probes, puts it on the
probes' scale (gamma < 1 raises it).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

FLOOR = 1e-6
"""The smallest factor (a likelihood of 0 would make every later comparison meaningless)."""
GAMMA_RANGE = (0.02, 50.0)
"""The exponents the calibration searches."""


def smoothed_share(matches: float, n: int) -> float:
    """The chance of the expert's action from ``matches`` of ``n`` samples: ``(k + 1/2) / (n + 1)``
    (Jeffreys-like: 8 of 8 gives 0.94, 0 of 8 gives 0.06)."""
    if n < 1 or not 0 <= matches <= n:
        raise ValueError(f"matches must lie in [0, n] with n >= 1, got {matches} of {n}")
    return (matches + 0.5) / (n + 1)


def product_estimate(factors: Sequence[float]) -> float:
    """``prod_t f_t`` with every factor floored at :data:`FLOOR` (1 for no factor)."""
    return math.exp(sum(math.log(min(1.0, max(FLOOR, f))) for f in factors))


def calibrated(raw: float, gamma: float) -> float:
    """``raw ** gamma``: the raw estimate on the probes' scale."""
    return max(FLOOR, raw) ** gamma


def fit_gamma(observations: Sequence[tuple[float, int, int]]) -> float:
    """The exponent of :func:`calibrated` that maximises the binomial likelihood of
    ``(raw estimate, successes, trials)`` observations, within :data:`GAMMA_RANGE` (1 when
    there are none). The log-likelihood is concave in gamma (a linear term plus terms
    ``log(1 - raw^gamma)``), so a ternary search finds it; all successes push it to the range's
    low end, all failures to its high end."""
    data = [(max(FLOOR, min(1.0 - FLOOR, r)), s, t) for r, s, t in observations if t > 0]
    if not data:
        return 1.0

    def loglik(gamma: float) -> float:
        total = 0.0
        for raw, s, t in data:
            p = min(1.0 - FLOOR, max(FLOOR, raw**gamma))
            total += s * math.log(p) + (t - s) * math.log(1.0 - p)
        return total

    low, high = GAMMA_RANGE
    for _ in range(100):
        a, b = low + (high - low) / 3, high - (high - low) / 3
        if loglik(a) < loglik(b):
            low = a
        else:
            high = b
    return (low + high) / 2


def ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson's on tie-averaged ranks); None when either side is
    constant or there are fewer than two pairs."""
    if len(x) != len(y):
        raise ValueError(f"paired values needed, got {len(x)} and {len(y)}")
    if len(x) < 2:
        return None
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sxx = sum((a - mx) ** 2 for a in rx)
    syy = sum((b - my) ** 2 for b in ry)
    if sxx == 0 or syy == 0:
        return None
    return sxy / math.sqrt(sxx * syy)
