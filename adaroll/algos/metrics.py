"""Avg@k and Pass@k over task splits (pure functions, no I/O).

Results are ``{task_id: [success, ...]}``: the outcomes of independent root attempts per task.

* **Avg@k** - mean success over k attempts per task, averaged over tasks. From ``n >= k``
  attempts the mean of all ``n`` is used: it is the unbiased estimate of the k-attempt mean
  (with ``n == k`` it is exactly the definition).
* **Pass@k (plain)** - share of tasks with at least one success among their *first* k
  attempts (the paper's definition; needs ``n >= k``).
* **Pass@k (unbiased)** - the estimator ``1 - C(n - c, k) / C(n, k)`` of Chen et al. (2021)
  from ``n >= k`` attempts with ``c`` successes: the probability that k attempts drawn without
  replacement from the n contain a success. Lower variance than the plain one when ``n > k``;
  equal to it in expectation, and identical when ``n == k``.

All values are fractions in [0, 1]; multiply by 100 for the paper's tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

Outcomes = Sequence[bool]


def _check(outcomes: Outcomes, k: int) -> list[bool]:
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    flags: list[bool] = []
    for o in outcomes:
        if o not in (True, False):  # True/False, 0/1 (and 0.0/1.0) only
            raise ValueError(f"outcomes must be booleans (or 0/1), got {o!r}")
        flags.append(bool(o))
    if len(flags) < k:
        raise ValueError(f"@{k} needs at least {k} attempts per task, got {len(flags)}")
    return flags


def task_avg_at_k(outcomes: Outcomes, k: int) -> float:
    """Avg@k of one task: mean success of its ``n >= k`` attempts. [n] -> float."""
    flags = _check(outcomes, k)
    return sum(flags) / len(flags)


def task_pass_at_k(outcomes: Outcomes, k: int) -> float:
    """Plain Pass@k of one task: 1.0 if any of its first k attempts succeeded. [n >= k] -> 0/1."""
    return 1.0 if any(_check(outcomes, k)[:k]) else 0.0


def pass_at_k_unbiased(n: int, c: int, k: int) -> float:
    """``1 - C(n - c, k) / C(n, k)``: n attempts, c successes, ``1 <= k <= n``.

    Computed as ``1 - prod_{i = n - c + 1}^{n} (1 - k / i)`` (no huge binomials).
    """
    if not 1 <= k <= n:
        raise ValueError(f"need 1 <= k <= n, got n={n}, k={k}")
    if not 0 <= c <= n:
        raise ValueError(f"need 0 <= c <= n, got n={n}, c={c}")
    if n - c < k:
        return 1.0
    prod = 1.0
    for i in range(n - c + 1, n + 1):
        prod *= 1.0 - k / i
    return 1.0 - prod


def task_pass_at_k_unbiased(outcomes: Outcomes, k: int) -> float:
    """Unbiased Pass@k of one task from its ``n >= k`` attempts. [n] -> float."""
    flags = _check(outcomes, k)
    return pass_at_k_unbiased(len(flags), sum(flags), k)


def _mean_over_tasks(results: Mapping[str, Outcomes], values: list[float]) -> float:
    if not results:
        raise ValueError("no tasks to aggregate")
    return sum(values) / len(values)


def avg_at_k(results: Mapping[str, Outcomes], k: int) -> float:
    """Avg@k of a split: mean over tasks of :func:`task_avg_at_k`."""
    return _mean_over_tasks(results, [task_avg_at_k(o, k) for o in results.values()])


def pass_at_k(results: Mapping[str, Outcomes], k: int, *, unbiased: bool = False) -> float:
    """Pass@k of a split: mean over tasks of the plain (default) or unbiased per-task Pass@k."""
    per_task = task_pass_at_k_unbiased if unbiased else task_pass_at_k
    return _mean_over_tasks(results, [per_task(o, k) for o in results.values()])


def split_metrics(results: Mapping[str, Outcomes], k: int) -> dict[str, float]:
    """All metrics of one split: ``avg`` (Avg@k), ``pass`` (plain Pass@k), ``pass_unbiased``,
    ``tasks`` (number of tasks) and ``attempts`` (total attempts)."""
    return {
        "avg": avg_at_k(results, k),
        "pass": pass_at_k(results, k),
        "pass_unbiased": pass_at_k(results, k, unbiased=True),
        "tasks": float(len(results)),
        "attempts": float(sum(len(o) for o in results.values())),
    }


def metrics_by_split(
    splits: Mapping[str, Mapping[str, Outcomes]], k: int
) -> dict[str, dict[str, float]]:
    """``{split: {task_id: outcomes}}`` -> ``{split: split_metrics(...)}``."""
    return {name: split_metrics(results, k) for name, results in splits.items()}
