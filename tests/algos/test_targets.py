"""The two yardsticks (issue 40, item 2): the Val target (ours) and the Train target (the
paper's), each the mean of Base->Vanilla's last three evaluations on its split, and the cost at
which a curve first reaches it. A curve without Train at every mark has no Train target."""

from __future__ import annotations

import pytest

from adaroll.algos.targets import target_costs, target_keys, vanilla_target


def curve(val: list[float], train: list[float | None]) -> list[dict]:
    return [
        {
            "val_avg": v,
            "train_avg": t,
            "total_env_steps": 100 * i,
            "policy_samples": 10 * i,
            "train_samples": i,
        }
        for i, (v, t) in enumerate(zip(val, train, strict=True))
    ]


def test_the_train_target_is_built_like_the_val_target_and_costed_alike() -> None:
    vanilla = curve([0.1, 0.2, 0.3, 0.4], [0.2, 0.5, 0.6, 0.7])
    assert vanilla_target(vanilla) == pytest.approx(0.3)
    assert vanilla_target(vanilla, "train") == pytest.approx(0.6)
    hybrid = curve([0.1, 0.1, 0.1, 0.5], [0.2, 0.7, 0.7, 0.7])
    costs = target_costs({}, hybrid, 0.6, "train") | target_costs({}, hybrid, 0.3)
    assert costs["reached_train_target"] and costs["steps_to_train_target"] == 100
    assert costs["samples_to_train_target"] == 10 and costs["train_samples_to_train_target"] == 1
    assert costs["reached_target"] and costs["steps_to_target"] == 300
    never = target_costs({}, curve([0.1] * 4, [0.1] * 4), 0.6, "train")
    assert never["reached_train_target"] is False and never["steps_to_train_target"] is None


def test_runs_without_train_at_the_marks_have_no_train_target() -> None:
    """Train evaluated only at the end (the default ``eval.splits``) is one point, not a
    learning curve: no target, and no cost to one ("-" in the tables), rather than a failure."""
    end_only = curve([0.1, 0.2, 0.3, 0.4], [None, None, None, 0.7])
    assert vanilla_target(end_only, "train") is None
    assert vanilla_target(end_only) == pytest.approx(0.3)
    assert set(target_costs({}, end_only, 0.5, "train").values()) == {None}
    assert set(target_costs({}, end_only, None, "train").values()) == {None}
    assert target_keys("train")["steps"] == "steps_to_train_target"
    with pytest.raises(ValueError, match="val or train"):
        target_keys("heldout")
