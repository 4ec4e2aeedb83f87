"""Statistics over seeds: spread, cost to a target, bootstrap intervals, verdicts, censoring."""

from __future__ import annotations

import pytest

from adaroll.experiments.stats import (
    Censored,
    bootstrap_ci,
    censored_median,
    closeness,
    cost_to_reach,
    equivalence,
    fmt_censored,
    fmt_count,
    fmt_pct,
    mean_std,
    paired_cost_difference,
    ratio,
    verdict,
)

CURVE = [
    {"total_env_steps": 500, "train_samples": 0, "val_avg": 0.3},
    {"total_env_steps": 600, "train_samples": 40, "val_avg": 0.5},
    {"total_env_steps": 700, "train_samples": 90, "val_avg": 0.45},
    {"total_env_steps": 800, "train_samples": 120, "val_avg": 0.6},
]


def test_cost_to_reach_is_the_first_evaluation_at_or_above_the_target():
    assert cost_to_reach(CURVE, 0.5) == (600, 40)
    assert cost_to_reach(CURVE, 0.55) == (800, 120)
    assert cost_to_reach(CURVE, 0.3) == (500, 0)
    assert cost_to_reach(CURVE, 0.61) == (None, None)
    assert cost_to_reach(CURVE, None) == (None, None)


def test_bootstrap_interval_brackets_the_mean_and_narrows_with_agreement():
    mean, low, high = bootstrap_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    assert mean == 3.0 and 1.0 <= low < 3.0 < high <= 5.0
    assert bootstrap_ci([2.0] * 6) == (2.0, 2.0, 2.0)
    assert bootstrap_ci([1.0, -1.0, 2.0]) == bootstrap_ci([1.0, -1.0, 2.0])  # deterministic
    assert bootstrap_ci([]) is None


@pytest.mark.parametrize(
    ("interval", "direction", "expected"),
    [
        ((2.0, 0.5, 3.0), +1, "held"),
        ((2.0, 0.5, 3.0), -1, "contradicted"),
        ((-2.0, -3.0, -0.5), -1, "held"),
        ((-2.0, -3.0, -0.5), +1, "contradicted"),
        ((0.5, -1.0, 2.0), +1, "inconclusive"),
        ((0.0, 0.0, 0.0), +1, "inconclusive"),
        ((0.0, 0.1 + 0.2 - 0.3, 0.1 + 0.2 - 0.3), +1, "inconclusive"),  # 5.6e-17: zero
        (None, +1, "inconclusive"),
    ],
)
def test_verdicts_follow_the_interval(interval, direction, expected):
    assert verdict(interval, direction) == expected


@pytest.mark.parametrize(
    ("interval", "expected"),
    [
        ((0.0, -0.02, 0.02), "held"),  # inside +-0.025: close
        ((-0.01, -0.025, 0.025), "held"),  # the margin itself counts as close
        ((0.025, 0.55 - 0.525, 0.55 - 0.525), "held"),  # 0.025000000000000022: on the margin
        ((0.05, 0.03, 0.07), "contradicted"),  # wholly beyond the margin
        ((-0.05, -0.07, -0.03), "contradicted"),
        ((0.0, -0.04, 0.01), "inconclusive"),  # reaches past it on one side
        (None, "inconclusive"),
    ],
)
def test_closeness_is_judged_against_a_margin(interval, expected):
    assert equivalence(interval, 0.025) == expected


def test_closeness_is_the_interval_end_farthest_from_zero():
    assert closeness((0.0, -0.04, 0.01)) == 0.04
    assert closeness((0.03, 0.01, 0.05)) == 0.05
    assert closeness(None) is None


def test_censored_runs_enter_at_the_larger_budget_and_the_median_respects_them():
    reached, never = Censored(300, 1000), Censored(None, 1200)
    assert paired_cost_difference(reached, never) == 300 - 1200  # ours reached, theirs never did
    assert paired_cost_difference(never, reached) == 1200 - 300
    assert paired_cost_difference(never, Censored(None, 900)) == 0
    assert censored_median([Censored(100, 5), Censored(200, 5), Censored(None, 900)]) == (
        200,
        False,
    )
    # two of three never reached it: the median is only known to exceed the budget
    assert censored_median([Censored(100, 5), Censored(None, 800), Censored(None, 900)]) == (
        900,
        True,
    )
    assert (
        fmt_censored([Censored(100, 5), Censored(None, 800), Censored(None, 900)])
        == ">= 900 (2/3 censored)"
    )
    assert fmt_censored([Censored(100, 5)]) == "100"
    assert censored_median([]) == (None, False)


def test_spread_ignores_missing_seeds_and_says_so():
    assert mean_std([0.5, None, 0.7]) == (0.6, mean_std([0.5, 0.7])[1], 2)
    assert mean_std([None]) == (None, None, 0)
    assert fmt_pct([0.5, 0.7, None]) == "60.00 ± 14.14 (2/3)"
    assert fmt_pct([0.25]) == "25.00 ± 0.00"
    assert fmt_count([100, 300]) == "200 ± 141"
    assert fmt_count([None, None]) == "-"
    assert ratio(1, 0) is None and ratio(None, 2) is None and ratio(1, 4) == 0.25


def test_a_ratio_of_paired_sums_keeps_the_sign_of_the_total_saving() -> None:
    from adaroll.experiments.stats import bootstrap_ratio_ci

    # one seed saves a lot of a large cost, two lose a little of small ones: the mean of the
    # per-seed fractions is negative, the saving of the summed costs positive
    saved, cost = [6000.0, -600.0, -600.0], [10000.0, 1000.0, 1000.0]
    assert sum(s / c for s, c in zip(saved, cost, strict=True)) / 3 < 0
    ratio, low, high = bootstrap_ratio_ci(saved, cost)
    assert ratio == pytest.approx(4800 / 12000) and low <= ratio <= high
    assert low < 0 < high  # resamples of the one large saving, or of the two small losses
    assert bootstrap_ratio_ci([], []) is None
    with pytest.raises(ValueError):
        bootstrap_ratio_ci([1.0], [1.0, 2.0])
