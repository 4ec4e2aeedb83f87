"""Learning-progress statistics for scheduling (pure functions, no I/O).

* :func:`wilson_upper` - one-sided Wilson score upper bound of a success rate: the forgetting
  monitor demotes a task only when even this optimistic bound is below its threshold, so a few
  unlucky probes never demote.
* :func:`slope` - least-squares slope of a series over its index: the success-rate trend of the
  last few groups at a Suffix frontier (learning progress per group).
* :func:`advantage_energy` - ``sum_i (r_i - mean(r))^2`` of a group's rewards: the squared norm of
  its raw GRPO advantages, zero exactly when the group carries no gradient. For 0/1 rewards it is
  ``n p (1 - p)``.
* :func:`ucb_progress_per_cost` - optimistic learning progress per unit cost of bandit arms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist


def wilson_upper(successes: float, trials: float, confidence: float) -> float:
    """One-sided Wilson score upper bound of a Bernoulli rate at ``confidence`` (e.g. 0.95).

    ``successes`` of ``trials`` (``0 <= successes <= trials``; floats allowed for discounted
    counts). With ``z = Phi^-1(confidence)`` and ``p = successes / trials``::

        (p + z^2 / 2n + z sqrt(p (1 - p) / n + z^2 / 4n^2)) / (1 + z^2 / n)

    No trials -> 1.0 (nothing is known, so nothing is ruled out).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    if trials < 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if trials == 0:
        return 1.0
    z = NormalDist().inv_cdf(confidence)
    n, p = float(trials), successes / trials
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return min(1.0, (centre + spread) / (1 + z * z / n))


def slope(values: Sequence[float]) -> float:
    """Least-squares slope of ``values`` against their index 0..n-1. [n] -> float; 0.0 if n < 2."""
    n = len(values)
    if n < 2:
        return 0.0
    x_mean, y_mean = (n - 1) / 2, sum(values) / n
    num = sum((i - x_mean) * (y - y_mean) for i, y in enumerate(values))
    den = sum((i - x_mean) ** 2 for i in range(n))
    return num / den


def advantage_energy(rewards: Sequence[float]) -> float:
    """``sum_i (r_i - mean(r))^2`` of one group's rewards. [G] -> float (0.0 for an empty group)."""
    if not rewards:
        return 0.0
    mean = sum(rewards) / len(rewards)
    return sum((r - mean) ** 2 for r in rewards)


def ucb_progress_per_cost(
    counts: Sequence[float], progress: Sequence[float], costs: Sequence[float], exploration: float
) -> list[float]:
    """Optimistic progress per unit cost of each of A arms.

    ``counts``, ``progress``, ``costs``: [A] (possibly discounted) pull counts and sums of the
    progress and the cost of those pulls. For a pulled arm (``n_a > 0``)::

        score_a = (progress_a / n_a + c * sqrt(ln(1 + N) / n_a)) / max(costs_a / n_a, 1)

    with ``N = sum_a n_a``: UCB1's bonus on the progress, divided by the arm's mean cost (a
    measured quantity, so it gets no bonus; floored at one unit). An arm never pulled scores
    ``inf``, so every arm is tried once before any is exploited. -> [A]
    """
    if not len(counts) == len(progress) == len(costs):
        raise ValueError(f"need equal lengths, got {len(counts)}, {len(progress)}, {len(costs)}")
    total = sum(counts)
    scores = []
    for n, gain, cost in zip(counts, progress, costs, strict=True):
        if n <= 0:
            scores.append(math.inf)
            continue
        bonus = exploration * math.sqrt(math.log(1 + total) / n)
        scores.append((gain / n + bonus) / max(cost / n, 1.0))
    return scores
