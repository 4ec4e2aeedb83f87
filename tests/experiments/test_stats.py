from adaroll.experiments.stats import cost_to_reach, fmt_count, fmt_pct, mean_std, ratio

CURVE = [{"env_steps": 0, "train_samples": 0, "train_avg": 0.3},
         {"env_steps": 100, "train_samples": 40, "train_avg": 0.5},
         {"env_steps": 200, "train_samples": 90, "train_avg": 0.45},
         {"env_steps": 300, "train_samples": 120, "train_avg": 0.6}]  # fmt: skip


def test_cost_to_reach_is_the_first_evaluation_at_or_above_the_target():
    assert cost_to_reach(CURVE, 0.5) == (100, 40)
    assert cost_to_reach(CURVE, 0.55) == (300, 120)
    assert cost_to_reach(CURVE, 0.3, offset=(7, 3)) == (7, 3)
    assert cost_to_reach(CURVE, 0.61) == (None, None)
    assert cost_to_reach(CURVE, None) == (None, None)


def test_spread_ignores_missing_seeds_and_says_so():
    assert mean_std([0.5, None, 0.7]) == (0.6, mean_std([0.5, 0.7])[1], 2)
    assert mean_std([None]) == (None, None, 0)
    assert fmt_pct([0.5, 0.7, None]) == "60.00 ± 14.14 (2/3)"
    assert fmt_pct([0.25]) == "25.00 ± 0.00"
    assert fmt_count([100, 300]) == "200 ± 141"
    assert fmt_count([None, None]) == "-"
    assert ratio(1, 0) is None and ratio(None, 2) is None and ratio(1, 4) == 0.25
