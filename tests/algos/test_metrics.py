"""Avg@k / Pass@k against hand-computed values."""

from __future__ import annotations

import itertools
import math

import pytest

from adaroll.algos.metrics import (
    avg_at_k,
    metrics_by_split,
    pass_at_k,
    pass_at_k_unbiased,
    split_metrics,
    task_avg_at_k,
    task_pass_at_k,
    task_pass_at_k_unbiased,
)

T, F = True, False
RESULTS = {"a": [T, F, F, F], "b": [F, F, F, F], "c": [T, T, F, T]}


def test_split_hand_computed() -> None:
    assert avg_at_k(RESULTS, 4) == pytest.approx((0.25 + 0.0 + 0.75) / 3)
    assert pass_at_k(RESULTS, 4) == pytest.approx(2 / 3)
    assert pass_at_k(RESULTS, 4, unbiased=True) == pytest.approx(2 / 3)  # n == k: identical
    assert pass_at_k(RESULTS, 1) == pytest.approx(2 / 3)  # first attempts: T, F, T
    assert pass_at_k(RESULTS, 1, unbiased=True) == pytest.approx(
        avg_at_k(RESULTS, 4)
    )  # pass@1 = mean


def test_per_task_values() -> None:
    assert task_avg_at_k([T, F, T, T], 4) == 0.75
    assert task_pass_at_k([F, F, F, F, T], 4) == 0.0  # plain: the first k attempts only
    assert task_pass_at_k([F, F, F, T], 4) == 1.0
    assert task_pass_at_k_unbiased([F, F, F, F, T], 4) == pytest.approx(1 - 1 / 5)
    assert task_avg_at_k([1, 0, 0, 1], 2) == 0.5  # 0/1 accepted; Avg@k from n > k uses all n


@pytest.mark.parametrize(
    ("n", "c", "k", "expected"),
    [
        (8, 2, 4, 1 - 15 / 70),  # 1 - C(6,4)/C(8,4)
        (5, 1, 2, 1 - 6 / 10),
        (4, 0, 4, 0.0),
        (4, 1, 4, 1.0),
        (10, 7, 4, 1.0),  # n - c < k: every draw of k contains a success
        (10, 3, 1, 0.3),
    ],
)
def test_unbiased_estimator_hand_computed(n: int, c: int, k: int, expected: float) -> None:
    assert pass_at_k_unbiased(n, c, k) == pytest.approx(expected)


def test_unbiased_estimator_equals_the_binomial_formula_and_subset_average() -> None:
    for n in range(1, 13):
        for c in range(n + 1):
            for k in range(1, n + 1):
                exact = 1 - math.comb(n - c, k) / math.comb(n, k)
                assert pass_at_k_unbiased(n, c, k) == pytest.approx(exact, abs=1e-12)
    outcomes = [T, F, F, T, F, F]
    for k in range(1, 7):
        subsets = list(itertools.combinations(outcomes, k))
        average = sum(any(s) for s in subsets) / len(subsets)
        assert task_pass_at_k_unbiased(outcomes, k) == pytest.approx(average)


def test_large_n_is_stable() -> None:
    assert 0.0 <= pass_at_k_unbiased(10_000, 1, 4) == pytest.approx(4 / 10_000, rel=1e-6)


def test_split_metrics_reports_the_unbiased_pass_apart_from_the_plain_one() -> None:
    # Five attempts, the only success last: none among the first four (plain Pass@4 = 0), while
    # four of five drawn without replacement contain it with probability 4/5.
    m = split_metrics({"a": [F, F, F, F, T]}, 4)
    assert m["pass"] == 0.0 and m["pass_unbiased"] == pytest.approx(0.8) and m["avg"] == 0.2


def test_split_metrics_and_per_split() -> None:
    m = split_metrics(RESULTS, 4)
    assert m == pytest.approx(
        {"avg": 1 / 3, "pass": 2 / 3, "pass_unbiased": 2 / 3, "tasks": 3, "attempts": 12}
    )
    by_split = metrics_by_split({"train": RESULTS, "heldout": {"x": [T, T, T, T]}}, 4)
    assert by_split["train"] == m
    assert by_split["heldout"]["avg"] == 1.0 and by_split["heldout"]["pass"] == 1.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: avg_at_k({}, 4), "^no tasks to aggregate$"),
        (lambda: avg_at_k({"a": [T, F]}, 4), "@4 needs at least 4 attempts per task, got 2"),
        (lambda: pass_at_k({"a": [T, F]}, 0), "k must be >= 1, got 0"),
        (lambda: task_avg_at_k([T, 0.5], 1), "outcomes must be booleans .* got 0.5"),
        (lambda: pass_at_k_unbiased(3, 4, 2), r"need 0 <= c <= n, got n=3, c=4"),
        (lambda: pass_at_k_unbiased(3, 1, 4), r"need 1 <= k <= n, got n=3, k=4"),
    ],
)
def test_invalid_inputs(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
