"""Continuous pivot weights and adaptive gates (pure math in adaroll.algos.pivots)."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from adaroll.algos.pivots import (
    DEFAULT_TAU_DIS,
    disagreement_from_counts,
    draw_independent,
    draw_weighted,
    quantile_threshold,
    soft_gate,
)

PAPER_D = [
    disagreement_from_counts(c) for c in ([8], [7, 1], [6, 2], [6, 1, 1], [5, 3], [4, 4], [1] * 8)
]


@pytest.mark.parametrize("temperature", [0.01, 0.05, 0.2, 1.0])
def test_soft_gate_is_increasing_in_d_and_half_at_the_gate(temperature: float) -> None:
    grid = [i / 100 for i in range(101)]
    values = [soft_gate(d, DEFAULT_TAU_DIS, temperature) for d in grid]
    pairs = list(zip(values, values[1:], strict=False))
    assert all(a <= b for a, b in pairs)
    assert all(a < b for a, b in pairs if 0 < a and b < 1)  # strict until floats saturate
    assert soft_gate(DEFAULT_TAU_DIS, DEFAULT_TAU_DIS, temperature) == 0.5


def test_soft_gate_recovers_the_hard_gate_as_temperature_goes_to_zero() -> None:
    hard = [float(d > DEFAULT_TAU_DIS) for d in PAPER_D]
    assert hard == [0, 0, 0, 1, 1, 1, 1]  # 6-2 dropped, 6-1-1 kept
    assert [soft_gate(d, DEFAULT_TAU_DIS, 0.0) for d in PAPER_D] == hard
    for temperature in (1e-3, 1e-5, 1e-9):
        soft = [soft_gate(d, DEFAULT_TAU_DIS, temperature) for d in PAPER_D]
        assert soft == pytest.approx(hard, abs=1e-5)
    assert soft_gate(DEFAULT_TAU_DIS, DEFAULT_TAU_DIS, 0.0) == 0.0  # the hard gate is strict


def test_soft_gate_keeps_a_six_two_split_sometimes() -> None:
    six_two = PAPER_D[2]
    assert soft_gate(six_two, DEFAULT_TAU_DIS, 0.05) == pytest.approx(
        1 / (1 + math.exp(0.02143 / 0.05)), abs=1e-3
    )
    assert 0.35 < soft_gate(six_two, DEFAULT_TAU_DIS, 0.05) < 0.45


def test_soft_gate_extremes_and_errors() -> None:
    assert soft_gate(1.0, 0.0, 1e-12) == 1.0 and soft_gate(0.0, 1.0, 1e-12) == 0.0  # no overflow
    assert soft_gate(float("nan"), 0.45, 0.1) == 0.0
    with pytest.raises(ValueError, match="temperature"):
        soft_gate(0.5, 0.45, -0.1)


@pytest.mark.parametrize("seed", range(5))
def test_quantile_threshold_matches_numpy(seed: int) -> None:
    rng = random.Random(seed)
    scores = [rng.random() for _ in range(rng.randint(1, 12))]
    for q in (0.0, 0.25, 0.5, 0.75, 0.9, 1.0):
        assert quantile_threshold(scores, q) == pytest.approx(float(np.quantile(scores, q)))


def test_quantile_threshold_keeps_the_top_share_under_the_strict_gate() -> None:
    low = [0.0, 0.05, 0.1, 0.12, 0.2, 0.25, 0.3, 0.35]  # all far below tau_dis
    gate = quantile_threshold(low, 0.75)
    assert [s for s in low if s > gate] == [0.3, 0.35]
    assert quantile_threshold([0.4, float("nan"), 0.6], 0.5) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="^a quantile needs at least one score$"):
        quantile_threshold([float("nan")], 0.5)
    with pytest.raises(ValueError, match=r"q must be in \[0, 1\], got 1.5"):
        quantile_threshold([0.1], 1.5)


def test_draw_independent_frequencies_follow_the_weights() -> None:
    weights = [0.0, 0.1, 0.5, 0.9, 1.0]
    rng = random.Random(0)
    counts = [0] * len(weights)
    for _ in range(4000):
        for i in draw_independent(weights, rng):
            counts[i] += 1
    freq = [c / 4000 for c in counts]
    assert freq[0] == 0.0 and freq[4] == 1.0
    assert freq[1:4] == pytest.approx([0.1, 0.5, 0.9], abs=0.03)


class _ZeroRandom(random.Random):
    """A generator whose every draw is 0.0, the lowest value random() can return."""

    def random(self) -> float:
        return 0.0


def test_a_zero_weight_is_never_kept_even_by_the_lowest_draw() -> None:
    assert draw_independent([0.0, 0.5, 0.0], _ZeroRandom()) == [1]


def test_draw_weighted_rejects_a_negative_k() -> None:
    with pytest.raises(ValueError, match="k must be non-negative, got -1"):
        draw_weighted([0.5], -1, random.Random(0))


def test_draw_independent_always_draws_one_unless_all_weights_are_zero() -> None:
    rng = random.Random(1)
    tiny = [1e-6, 2e-6, 0.0]
    drawn = [draw_independent(tiny, rng) for _ in range(300)]
    assert all(len(d) == 1 and d[0] in (0, 1) for d in drawn)
    assert sum(d == [1] for d in drawn) > sum(d == [0] for d in drawn)  # proportional to weight
    assert draw_independent([0.0, 0.0], rng) == []


def test_draw_weighted_is_distinct_and_prefers_heavy_weights() -> None:
    rng = random.Random(2)
    weights = [0.0, 0.1, 0.3, 0.9]
    first = [0] * 4
    for _ in range(2000):
        drawn = draw_weighted(weights, 2, rng)
        assert len(drawn) == len(set(drawn)) == 2 and 0 not in drawn
        first[drawn[0]] += 1
    assert first[1] < first[2] < first[3]
    assert first[3] / 2000 == pytest.approx(0.9 / 1.3, abs=0.03)  # first draw proportional
    assert sorted(draw_weighted(weights, 10, rng)) == [1, 2, 3]
    assert draw_weighted(weights, 0, rng) == []
