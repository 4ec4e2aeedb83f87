"""Spread across seeds, and the "cost to reach a target" reading of a learning curve."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from typing import Any


def mean_std(values: Iterable[float | None]) -> tuple[float | None, float | None, int]:
    """Mean, sample standard deviation (0 for one value) and count of the non-missing values."""
    xs = [float(v) for v in values if v is not None]
    if not xs:
        return None, None, 0
    return statistics.fmean(xs), (statistics.stdev(xs) if len(xs) > 1 else 0.0), len(xs)


def fmt_pct(values: Sequence[float | None]) -> str:
    """``52.50 ± 1.25`` (percent) over seeds; ``-`` when no seed has a value; ``(2/3)`` when only
    some seeds have one (e.g. a target reached by two seeds of three)."""
    mean, std, n = mean_std(values)
    if mean is None or std is None:
        return "-"
    return f"{100 * mean:.2f} ± {100 * std:.2f}" + _partial(n, len(values))


def fmt_count(values: Sequence[float | None]) -> str:
    mean, std, n = mean_std(values)
    if mean is None or std is None:
        return "-"
    return f"{mean:,.0f} ± {std:,.0f}" + _partial(n, len(values))


def _partial(n: int, total: int) -> str:
    return "" if n == total else f" ({n}/{total})"


def cost_to_reach(curve: Sequence[dict[str, Any]], target: float | None,
                  offset: tuple[int, int] = (0, 0)) -> tuple[int | None, int | None]:  # fmt: skip
    """Env steps and training samples at the first evaluation whose Train Avg@4 reaches
    ``target`` (``offset`` adds the cost of an earlier phase, e.g. Stage I); None if never."""
    if target is None:
        return None, None
    for point in curve:
        value = point.get("train_avg")
        if value is not None and value >= target - 1e-9:
            return int(point["env_steps"]) + offset[0], int(point["train_samples"]) + offset[1]
    return None, None


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0 or math.isnan(b):
        return None
    return a / b
