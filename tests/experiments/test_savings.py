from adaroll.experiments.savings import HEADER, saving_rows


def _summary(updates: int, predicted: float, vanilla: tuple, hybrid: tuple) -> dict:
    def row(reached_at, total):
        return {
            "reached_target": reached_at is not None,
            "steps_to_target": reached_at,
            "total_env_steps": total,
        }

    return {
        "configurations": {"base_vanilla": row(*vanilla), "base_hybrid": row(*hybrid)},
        "cost_model": {
            "phases": {"base_vanilla": {"predicted_per_iteration": 1000.0}},
            "savings": {"base_hybrid": {"updates": updates, "predicted_saving": predicted}},
        },
    }


def test_rows_put_each_prediction_beside_the_paired_measurement() -> None:
    seeds = [
        _summary(10, 0.5, vanilla=(12_000, 18_000), hybrid=(6_000, 16_000)),
        _summary(10, 0.3, vanilla=(10_000, 18_000), hybrid=(8_000, 16_000)),
    ]
    (row,) = saving_rows(seeds, {"base_hybrid": "H", "base_vanilla": "V"})
    assert len(row) == len(HEADER)
    assert row[0] == "H vs V" and row[1] == "2" and row[2] == "10.0 ± 0.0"
    assert row[3].startswith("+40.00%")  # mean of 50% and 30%
    assert row[4].startswith("+4,000 ")  # S x N x Vanilla's cost per iteration: 5,000 and 3,000
    assert row[5].startswith("+4,000 ")  # measured: 6,000 and 2,000
    assert row[6].startswith("+35.00%")  # 6,000 / 12,000 and 2,000 / 10,000


def test_a_run_that_never_reached_the_target_counts_at_the_larger_budget() -> None:
    seeds = [_summary(15, 0.2, vanilla=(None, 18_000), hybrid=(9_000, 16_000))]
    (row,) = saving_rows(seeds, {})
    assert row[5].startswith("+9,000 ")  # 18,000 (censored Vanilla at the cap) - 9,000
    assert row[6].startswith("+50.00%")


def test_pairs_missing_from_the_summaries_are_left_out() -> None:
    summary = _summary(10, 0.5, vanilla=(1, 2), hybrid=(1, 2))
    del summary["cost_model"]["savings"]["base_hybrid"]
    assert saving_rows([summary], {}) == []
