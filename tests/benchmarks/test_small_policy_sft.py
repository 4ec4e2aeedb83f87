"""`benchmarks/small_policy_sft.py --smoke` finishes and its final JSON line holds its measurements."""

from __future__ import annotations

import math


def test_smoke_run_trains_one_epoch_and_prints_accuracy_and_success_rates(smoke) -> None:
    result = smoke("small_policy_sft.py", 180)
    assert (
        result["pretrain_tasks"] == 8
        and result["train_tasks"] == 2
        and result["heldout_tasks"] == 2
    )
    assert result["k"] == 2 and result["pretrain_steps"] > 0 and result["train_steps"] > 0
    [row] = result["rows"]
    assert row["epoch"] == 1 and math.isfinite(row["loss"]) and row["loss"] > 0
    assert 0 <= row["step_acc_pretrain"] <= 1 and 0 <= row["step_acc_train"] <= 1
    for split in ("train", "heldout"):
        assert 0 <= row[f"{split}_avg2"] <= row[f"{split}_pass2"] <= 1
        assert 0 <= row[f"{split}_greedy"] <= 1
