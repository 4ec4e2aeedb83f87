"""A configuration's bill: inheritance along the chain, demonstrations counted once per split."""

from __future__ import annotations

from adaroll.training.bill import BILL_KEYS, Bill

EXPERTS = {"pretrain": 700, "train": 120}


def test_the_total_is_every_kind_of_env_step_and_demos_are_counted_once_per_split() -> None:
    base = Bill(training_samples=400).with_demos("pretrain")
    action = base.with_demos("train").plus(
        Bill(selection_env_steps=300, policy_samples=900, scoring_samples=100, training_samples=50)
    )
    hybrid = action.with_demos("train").plus(
        Bill(env_steps=1000, replayed_steps=40, policy_samples=1200)
    )
    row = hybrid.row(EXPERTS)
    assert set(row) == set(BILL_KEYS)
    assert row["demo_env_steps"] == 820  # the train experts once, though two phases use them
    assert row["total_env_steps"] == 1000 + 40 + 820 + 300
    assert (row["policy_samples"], row["scoring_samples"], row["train_samples"]) == (2100, 100, 450)
    assert base.row(EXPERTS)["total_env_steps"] == 700


def test_a_phase_bill_reads_the_trainer_totals() -> None:
    totals = {
        "env_steps": 10,
        "replay_steps": 2,
        "selection_env_steps": 5,
        "phase_env_steps": 17,
        "policy_samples": 30,
        "train_samples": 8,
    }
    bill = Bill.of_phase(totals)
    assert bill.total_env_steps({}) == totals["phase_env_steps"]
    assert (bill.policy_samples, bill.training_samples, bill.demo_splits) == (30, 8, frozenset())
