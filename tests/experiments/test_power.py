"""Power analysis: hand-computed cases and the questions it refuses."""

from __future__ import annotations

import math

import pytest

from adaroll.experiments import power


def test_eval_noise_and_crossing_jitter() -> None:
    # Avg@4 over 80 tasks at p = 0.5: sqrt(0.25 / 320) = 0.028 (2.8 points)
    assert power.eval_sd(0.25, 80, 4) == pytest.approx(math.sqrt(0.25 / 320))
    # 1.7 points of noise at a slope of 0.5 points per 1K env steps: 3,400 env steps of jitter
    assert power.crossing_jitter(0.017, 0.005 / 1000) == pytest.approx(3400)
    assert power.crossing_jitter(0.0, 1.0, mark_spacing=1200) == pytest.approx(1200 / math.sqrt(12))


def test_seeds_needed_grows_with_the_spread_and_shrinks_with_the_effect() -> None:
    # ((1.96 + 0.8416) * 1 / 1)^2 + 1.96^2 / 2 = 7.85 + 1.92 -> 10
    assert power.seeds_needed(1.0, 1.0) == 10
    assert power.seeds_needed(0.5, 1.0) > power.seeds_needed(1.0, 1.0)
    assert power.seeds_needed(-1.0, 1.0) == 10  # the sign does not matter
    effect = power.detectable_effect(power.seeds_needed(0.7, 1.0), 1.0)
    assert effect <= 0.7


def test_plan_and_smallest_evaluation() -> None:
    p = power.plan(1000, task_variance=0.2, slope=0.6e-5, seed_sd=1500, tasks=80, attempts=4)
    assert p.seeds >= 10 and p.difference_sd > 1500
    big = power.plan(1000, task_variance=0.2, slope=0.6e-5, seed_sd=1500, tasks=320, attempts=8)
    assert big.jitter < p.jitter and big.seeds <= p.seeds
    best = power.smallest_evaluation(
        1000,
        max_seeds=40,
        task_variance=0.2,
        slope=0.6e-5,
        seed_sd=500,
        tasks_options=(80, 160, 320),
        attempts_options=(4, 8),
    )
    assert best is not None and best.seeds <= 40
    assert (
        power.smallest_evaluation(
            10,
            max_seeds=10,
            task_variance=0.2,
            slope=1e-6,
            seed_sd=5000,
            tasks_options=(80,),
            attempts_options=(4,),
        )
        is None
    )


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: power.seeds_needed(0.0, 1.0), "effect of zero"),
        (lambda: power.seeds_needed(1.0, 0.0), "variance of zero"),
        (lambda: power.crossing_jitter(0.02, 0.0), "slope"),
        (lambda: power.eval_sd(0.3, 80, 4), "task_variance"),
    ],
)
def test_questions_without_an_answer_say_why(call, match: str) -> None:
    with pytest.raises(power.PowerError, match=match):
        call()
