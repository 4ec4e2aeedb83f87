"""The ablation tables cost a variant run against its seed's target even though the variant
trains no Base->Vanilla of its own (they share the default run's Base)."""

from __future__ import annotations

from pathlib import Path

from adaroll.experiments.analyses import Inputs
from adaroll.experiments.specs import EXPERIMENTS, PROFILES


def _summary(target: float | None, curve: list[dict], reached: bool | None) -> dict:
    row = {
        "total_env_steps": curve[-1]["total_env_steps"],
        "val_avg4": curve[-1]["val_avg"],
        "reached_target": reached,
        "steps_to_target": None,
    }
    return {
        "target_val_avg4": target,
        "configurations": {"base_hybrid": row},
        "curves": {"base_hybrid": curve},
    }


def _point(steps: int, val: float) -> dict:
    return {
        "total_env_steps": steps,
        "policy_samples": 2 * steps,
        "train_samples": 3 * steps,
        "val_avg": val,
    }


def test_a_variant_without_its_own_target_is_costed_against_the_default_runs_target() -> None:
    slow = [_point(1000, 0.30), _point(2000, 0.45), _point(3000, 0.52)]
    never = [_point(1000, 0.30), _point(3500, 0.40)]
    summaries = {
        "default": {0: _summary(0.50, slow, True)},
        "bandit": {0: _summary(None, slow, None)},
        "demotion": {0: _summary(None, never, None)},
    }
    x = Inputs(EXPERIMENTS.get("options"), Path("."), PROFILES["mobile"], summaries, [0], Path("."))
    row = x.row("bandit", 0, "base_hybrid")
    assert (
        row["reached_target"] is True
        and row["steps_to_target"] == 3000
        and row["samples_to_target"] == 6000
    )
    (cost,) = x.to_target("demotion", "base_hybrid")
    assert cost.censored and cost.budget == 3500  # never reached: censored at its whole bill
    (reached,) = x.to_target("bandit", "base_hybrid")
    assert not reached.censored and reached.observed == 3000
    # without a default run there is no target to borrow: left as the run says
    alone = Inputs(
        EXPERIMENTS.get("options"),
        Path("."),
        PROFILES["mobile"],
        {"bandit": summaries["bandit"]},
        [0],
        Path("."),
    )
    assert alone.row("bandit", 0, "base_hybrid")["reached_target"] is None
