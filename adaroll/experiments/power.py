"""Power analysis: how many seeds, and how large an evaluation, it takes to see a saving.

A saving is measured as the paired per-seed difference of *total env steps to the target*
(Vanilla minus Hybrid). Its spread has two sources:

* **crossing jitter** - the first evaluation at or above the target moves with the evaluation's
  own sampling noise, even for the same policies: an Avg@k over ``m`` tasks with ``k``
  attempts each has variance ``v / (m k)``, ``v`` the mean over tasks of ``p_x (1 - p_x)``
  (at most ``p (1 - p)``); at a learning slope ``s`` (Avg@k per env step) near the target that
  is a jitter of ``sd_eval / s`` env steps, plus the spacing ``d`` of the evaluation marks
  (a crossing is only seen at a mark: uniform, variance ``d^2 / 12``);
* **training variation** between seeds (``seed_sd``), measured from earlier runs, which
  pairing removes only in part.

Both configurations of a pair carry their own jitter, so the paired difference has variance
``seed_sd^2 + 2 jitter^2``. Seeds for a two-sided paired test at level ``alpha`` with the
given power: ``n = ((z_{1-alpha/2} + z_power) sd / effect)^2 + z_{1-alpha/2}^2 / 2`` (normal
approximation with Guenther's small-sample correction for the t test), rounded up.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from statistics import NormalDist
from typing import Any


class PowerError(ValueError):
    """The question has no answer (zero effect, zero variance, values out of range)."""


def eval_sd(task_variance: float, tasks: int, attempts: int) -> float:
    """Standard deviation of an Avg@k (as a fraction) from its own sampling, for a fixed task
    set: ``sqrt(task_variance / (tasks * attempts))``. ``task_variance`` is the mean over tasks
    of ``p_x (1 - p_x)`` (0.25 at most)."""
    if not 0 <= task_variance <= 0.25:
        raise PowerError(f"task_variance is a mean of p(1-p), in [0, 0.25]; got {task_variance}")
    if tasks < 1 or attempts < 1:
        raise PowerError(f"an evaluation needs >= 1 task and attempt; got {tasks} x {attempts}")
    return math.sqrt(task_variance / (tasks * attempts))


def crossing_jitter(sd_of_eval: float, slope: float, mark_spacing: float = 0.0) -> float:
    """Env steps by which a first crossing of the target moves from evaluation noise alone:
    ``sqrt((sd_eval / slope)^2 + mark_spacing^2 / 12)``; ``slope`` in Avg@k (fraction) per env
    step near the target."""
    if slope <= 0:
        raise PowerError(
            f"the learning slope must be positive to cross a target; got {slope}: "
            "a policy that does not improve never crosses it, whatever the seeds"
        )
    return math.sqrt((sd_of_eval / slope) ** 2 + mark_spacing**2 / 12.0)


def seeds_needed(effect: float, sd: float, power: float = 0.8, alpha: float = 0.05) -> int:
    """Seeds a two-sided paired test at ``alpha`` needs to detect a mean difference ``effect``
    with ``power`` when per-seed differences have standard deviation ``sd``."""
    if effect == 0:
        raise PowerError(
            "an effect of zero cannot be detected: every number of seeds rejects it "
            "only at the rate alpha"
        )
    if sd <= 0:
        raise PowerError(
            "a variance of zero gives no analysis: one seed would decide, and no "
            "measured spread supports that - measure the spread of the differences first"
        )
    if not 0 < power < 1 or not 0 < alpha < 1:
        raise PowerError(f"power and alpha lie in (0, 1); got {power}, {alpha}")
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    return max(2, math.ceil(((z_a + z_b) * sd / abs(effect)) ** 2 + z_a**2 / 2))


def detectable_effect(seeds: int, sd: float, power: float = 0.8, alpha: float = 0.05) -> float:
    """The smallest mean difference ``seeds`` paired seeds detect with ``power`` (inverse of
    :func:`seeds_needed`, same approximation)."""
    if sd <= 0:
        raise PowerError("a variance of zero gives no analysis")
    z_a, z_b = NormalDist().inv_cdf(1 - alpha / 2), NormalDist().inv_cdf(power)
    usable = seeds - z_a**2 / 2
    if usable <= 0:
        return math.inf
    return (z_a + z_b) * sd / math.sqrt(usable)


@dataclass(frozen=True)
class PowerPlan:
    effect: float
    """Predicted saving, in total env steps to the target."""
    eval_sd: float
    """Standard deviation of one Avg@k (fraction)."""
    jitter: float
    """Crossing jitter of one configuration, env steps."""
    difference_sd: float
    """Standard deviation of the paired per-seed difference, env steps."""
    seeds: int
    """Seeds needed for the power (never fewer than ``min_seeds``)."""
    tasks: int
    attempts: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def plan(
    effect: float,
    *,
    task_variance: float,
    slope: float,
    seed_sd: float,
    tasks: int,
    attempts: int,
    mark_spacing: float = 0.0,
    power: float = 0.8,
    alpha: float = 0.05,
    min_seeds: int = 10,
) -> PowerPlan:
    """Seeds needed at one evaluation size (``tasks`` x ``attempts``)."""
    sd_e = eval_sd(task_variance, tasks, attempts)
    jitter = crossing_jitter(sd_e, slope, mark_spacing)
    sd = math.sqrt(seed_sd**2 + 2 * jitter**2)
    seeds = max(min_seeds, seeds_needed(effect, sd, power, alpha))
    return PowerPlan(effect, sd_e, jitter, sd, seeds, tasks, attempts)


def smallest_evaluation(
    effect: float,
    *,
    max_seeds: int,
    task_variance: float,
    slope: float,
    seed_sd: float,
    tasks_options: tuple[int, ...],
    attempts_options: tuple[int, ...],
    mark_spacing: float = 0.0,
    power: float = 0.8,
    alpha: float = 0.05,
    min_seeds: int = 10,
) -> PowerPlan | None:
    """The cheapest evaluation (fewest episodes, tasks x attempts) among the options whose plan
    needs at most ``max_seeds`` seeds; None when even the largest needs more."""
    plans = [
        plan(
            effect,
            task_variance=task_variance,
            slope=slope,
            seed_sd=seed_sd,
            tasks=m,
            attempts=k,
            mark_spacing=mark_spacing,
            power=power,
            alpha=alpha,
            min_seeds=min_seeds,
        )
        for m in tasks_options
        for k in attempts_options
    ]
    fitting = [p for p in plans if p.seeds <= max_seeds]
    return min(fitting, key=lambda p: (p.tasks * p.attempts, p.seeds), default=None)
