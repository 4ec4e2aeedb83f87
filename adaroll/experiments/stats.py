"""Statistics over seeds (pure functions): spread, paired bootstrap confidence intervals,
three-way verdicts, censored costs-to-target and their medians.

How a claim is judged (docs/RESULTS.md, "How we measure"): per seed, the paired difference
``ours - theirs`` of a configuration pair; a 95% percentile-bootstrap interval of the mean
difference; *held* when the interval excludes zero in the paper's direction, *contradicted*
when it excludes zero the other way, *inconclusive* otherwise. A run that never reached a target
is censored at its budget: it enters a paired difference at the larger of the pair's budgets
(the restricted-mean convention) and a median by Kaplan-Meier.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from adaroll.algos.targets import first_reaching, target_keys

Verdict = Literal["held", "contradicted", "inconclusive"]


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


def cost_to_reach(
    curve: Sequence[dict[str, Any]], target: float | None, split: str = "val"
) -> tuple[int | None, int | None]:
    """Total env steps and training samples (the whole bill, as summary curves hold them) at
    the first evaluation whose ``split`` Avg@4 reaches ``target``; None if never."""
    point = first_reaching(list(curve), target, split)
    if point is None:
        return None, None
    return int(point["total_env_steps"]), int(point["train_samples"])


def bootstrap_ci(
    values: Sequence[float], *, level: float = 0.95, resamples: int = 10_000, seed: int = 0
) -> tuple[float, float, float] | None:
    """Mean of ``values`` (e.g. paired per-seed differences) and the percentile-bootstrap
    interval at ``level``: ``(mean, low, high)``; None for no values. Deterministic in ``seed``."""
    xs = [float(v) for v in values]
    if not xs:
        return None
    rng = random.Random(seed)
    n = len(xs)
    means = sorted(sum(rng.choice(xs) for _ in range(n)) / n for _ in range(resamples))
    tail = (1 - level) / 2
    low = means[int(math.floor(tail * (resamples - 1)))]
    high = means[int(math.ceil((1 - tail) * (resamples - 1)))]
    return statistics.fmean(xs), low, high


def bootstrap_ratio_ci(
    numerators: Sequence[float],
    denominators: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = 10_000,
    seed: int = 0,
) -> tuple[float, float, float] | None:
    """``sum(numerators) / sum(denominators)`` over paired seeds (e.g. env steps saved over
    Vanilla's env steps: the saving as a fraction of the mean cost, the unit of a cost model's
    prediction) and its percentile-bootstrap interval, resampling seeds; None for no seeds."""
    pairs = [(float(a), float(b)) for a, b in zip(numerators, denominators, strict=True)]
    if not pairs or sum(b for _, b in pairs) == 0:
        return None
    rng = random.Random(seed)
    ratios = []
    for _ in range(resamples):
        drawn = [rng.choice(pairs) for _ in pairs]
        total = sum(b for _, b in drawn)
        ratios.append(sum(a for a, _ in drawn) / total if total else 0.0)
    ratios.sort()
    tail = (1 - level) / 2
    low = ratios[int(math.floor(tail * (resamples - 1)))]
    high = ratios[int(math.ceil((1 - tail) * (resamples - 1)))]
    return sum(a for a, _ in pairs) / sum(b for _, b in pairs), low, high


ROUNDING = 1e-9
"""Differences this close to a bound count as on it: an Avg@4 difference is a multiple of
1 / (4 x tasks), and ``0.55 - 0.525`` is ``0.025000000000000022`` in floating point."""


def verdict(interval: tuple[float, float, float] | None, direction: int) -> Verdict:
    """``direction`` +1: the paper says ours - theirs > 0; -1: < 0."""
    if interval is None:
        return "inconclusive"
    _, low, high = interval
    low, high = _snap(low, 0.0), _snap(high, 0.0)
    if (direction > 0 and low > 0) or (direction < 0 and high < 0):
        return "held"
    if (direction > 0 and high < 0) or (direction < 0 and low > 0):
        return "contradicted"
    return "inconclusive"


def equivalence(interval: tuple[float, float, float] | None, margin: float) -> Verdict:
    """A claim that two configurations are *close* (``|ours - theirs| <= margin``): held when
    the interval lies within ``[-margin, margin]``, contradicted when it lies wholly outside it,
    inconclusive otherwise."""
    if interval is None:
        return "inconclusive"
    _, low, high = interval
    low, high = _snap(_snap(low, margin), -margin), _snap(_snap(high, margin), -margin)
    if -margin <= low and high <= margin:
        return "held"
    if low > margin or high < -margin:
        return "contradicted"
    return "inconclusive"


def _snap(value: float, bound: float) -> float:
    return bound if abs(value - bound) <= ROUNDING else value


def closeness(interval: tuple[float, float, float] | None) -> float | None:
    """The smallest margin within which the interval shows two configurations close: its end
    farthest from zero (None for no interval)."""
    if interval is None:
        return None
    _, low, high = interval
    return max(abs(low), abs(high))


@dataclass(frozen=True)
class Censored:
    """A cost to reach a target: ``value`` when reached, else the run's ``budget`` (censored)."""

    value: float | None
    budget: float

    @property
    def censored(self) -> bool:
        return self.value is None

    @property
    def observed(self) -> float:
        return self.budget if self.value is None else self.value


def paired_cost_difference(ours: Censored, theirs: Censored) -> float:
    """``ours - theirs``, a censored side counted at the larger of the two budgets."""
    cap = max(ours.budget, theirs.budget)
    a = cap if ours.censored else ours.observed
    b = cap if theirs.censored else theirs.observed
    return a - b


def censored_median(costs: Sequence[Censored]) -> tuple[float | None, bool]:
    """Kaplan-Meier median of right-censored costs: ``(median, is_lower_bound)``. When the
    survival curve never falls to one half, the median is only known to exceed the largest
    censored budget: ``(that budget, True)``. ``(None, False)`` for no runs."""
    if not costs:
        return None, False
    events = sorted(costs, key=lambda c: (c.observed, c.censored))
    at_risk, survival = len(events), 1.0
    for c in events:
        if not c.censored:
            survival *= 1 - 1 / at_risk
            if survival <= 0.5 + 1e-12:
                return c.observed, False
        at_risk -= 1
    return max(c.budget for c in costs), True


def fmt_censored(costs: Sequence[Censored]) -> str:
    """``1,234`` (the median), ``>= 15,000`` when censoring hides it, with ``(k censored)``."""
    median, bound = censored_median(costs)
    if median is None:
        return "-"
    k = sum(c.censored for c in costs)
    return f"{'>= ' if bound else ''}{median:,.0f}" + (f" ({k}/{len(costs)} censored)" if k else "")


def fmt_interval(
    interval: tuple[float, float, float] | None, scale: float = 1.0, unit: str = ""
) -> str:
    """``+2.50 [-1.25, +6.00]`` (mean and 95% interval, times ``scale``)."""
    if interval is None:
        return "-"
    mean, low, high = (scale * v for v in interval)
    digits = 2 if scale != 1.0 else 0
    return f"{mean:+,.{digits}f}{unit} [{low:+,.{digits}f}, {high:+,.{digits}f}]"


def ratio(a: float | None, b: float | None) -> float | None:
    """a / b, or None when either is missing or b is zero."""
    if a is None or b is None or b == 0 or math.isnan(b):
        return None
    return a / b


def censored_cost(row: dict[str, Any], split: str = "val") -> Censored | None:
    """A summary row's cost to its ``split`` target, censored at its whole bill; None when the
    row has no such target (no Train evaluations at the marks)."""
    keys = target_keys(split)
    if row.get(keys["reached"]) is None:
        return None
    return Censored(row[keys["steps"]] if row[keys["reached"]] else None, row["total_env_steps"])


def paired_saving(
    pairs: Sequence[tuple[dict[str, Any], dict[str, Any]]], split: str = "val"
) -> tuple[float, float, float] | None:
    """Mean and 95% interval of ``theirs - ours`` total env steps to the ``split`` target over
    the (theirs, ours) row pairs of the seeds where both have the target (positive: ours
    saves); None when none has it."""
    diffs = []
    for theirs, ours in pairs:
        a, b = censored_cost(theirs, split), censored_cost(ours, split)
        if a is not None and b is not None:
            diffs.append(paired_cost_difference(a, b))
    return bootstrap_ci(diffs)
