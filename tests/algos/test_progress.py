"""Wilson bound, slope, advantage energy and the UCB score against hand-computed values."""

from __future__ import annotations

import math

import pytest

from adaroll.algos.progress import advantage_energy, slope, ucb_progress_per_cost, wilson_upper


def test_wilson_upper_matches_the_textbook_interval() -> None:
    # Two-sided 95% Wilson interval of 5/10 is [0.2366, 0.7634]: its upper end is the one-sided
    # 97.5% bound.
    assert wilson_upper(5, 10, 0.975) == pytest.approx(0.7634, abs=1e-4)
    z = 1.6448536269514722  # Phi^-1(0.95)
    assert wilson_upper(0, 8, 0.95) == pytest.approx(z * z / (8 + z * z))  # closed form at p = 0
    assert wilson_upper(8, 8, 0.95) == 1.0
    assert wilson_upper(0, 0, 0.95) == 1.0  # nothing observed rules nothing out


def test_wilson_upper_is_above_the_rate_and_tightens_with_data() -> None:
    bounds = [wilson_upper(n // 4, n, 0.95) for n in (4, 16, 64, 256)]
    assert all(b > 0.25 for b in bounds)
    assert bounds == sorted(bounds, reverse=True)
    assert wilson_upper(3, 10, 0.99) > wilson_upper(3, 10, 0.9)


@pytest.mark.parametrize(
    ("successes", "trials", "confidence", "message"),
    [
        (3, 2, 0.9, "successes <= trials"),
        (-1, 2, 0.9, "0 <= successes"),
        (1, -2, 0.9, "trials"),
        (1, 2, 1.0, r"confidence must be in \(0, 1\)"),
        (1, 2, 0.0, "confidence"),
        (1, 2, 1.5, "confidence"),
    ],
)
def test_wilson_upper_rejects_bad_input(
    successes: float, trials: float, confidence: float, message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        wilson_upper(successes, trials, confidence)


def test_slope_is_the_least_squares_fit() -> None:
    assert slope([0.0, 0.25, 0.5, 0.75]) == pytest.approx(0.25)
    assert slope([0.5, 0.5, 0.5]) == 0.0
    assert slope([0.9]) == 0.0
    assert slope([0.0, 1.0]) == 1.0  # two points already have a slope
    assert slope([0.0, 1.0, 0.0, 1.0]) == pytest.approx(0.2)  # (0.75 - 0.25 - 0.25 + 0.75) / 5


def test_advantage_energy_is_n_p_one_minus_p_for_binary_rewards() -> None:
    assert advantage_energy([1, 0, 1, 0]) == pytest.approx(1.0)
    assert advantage_energy([1.0] * 8) == 0.0
    assert advantage_energy([1, 0]) == pytest.approx(0.5)
    assert advantage_energy([1] * 6 + [0] * 2) == pytest.approx(8 * 0.75 * 0.25)
    assert advantage_energy([]) == 0.0


def test_ucb_tries_every_arm_then_prefers_progress_per_cost() -> None:
    assert ucb_progress_per_cost([0, 3], [0, 1], [0, 30], 1.0)[0] == math.inf
    # Same progress per pull, the second arm costs 4x as much: the first wins.
    cheap, dear = ucb_progress_per_cost([5, 5], [5, 5], [50, 200], 0.5)
    assert cheap > dear and cheap == pytest.approx(4 * dear)
    # The bonus shrinks with pulls: an equal-mean arm tried less scores higher.
    rare, often = ucb_progress_per_cost([1, 9], [0.5, 4.5], [10, 90], 1.0)
    assert rare > often
    # Cost below one unit is floored (a Local pull is not infinitely cheap).
    assert ucb_progress_per_cost([2], [2], [0], 0.0) == [1.0]
    with pytest.raises(ValueError, match="equal lengths"):
        ucb_progress_per_cost([1], [1, 2], [1], 1.0)


def test_ucb_score_hand_computed() -> None:
    # arm 0: (0.5 / 1 + 1.0 * sqrt(ln(1 + 4) / 1)) / max(2 / 1, 1); arm 1: pulled 3 times, the
    # mean cost 8 / 3 divides: (1.5 / 3 + sqrt(ln 5 / 3)) / (8 / 3).
    once, thrice = ucb_progress_per_cost([1, 3], [0.5, 1.5], [2, 8], 1.0)
    assert once == pytest.approx((0.5 + math.sqrt(math.log(5))) / 2)
    assert thrice == pytest.approx((0.5 + math.sqrt(math.log(5) / 3)) / (8 / 3))
    # An arm never pulled scores inf wherever it stands; the arms after it are still scored.
    assert ucb_progress_per_cost([0, 2, 0], [0, 1, 0], [0, 4, 0], 0.0) == [math.inf, 0.25, math.inf]
