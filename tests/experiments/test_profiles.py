"""Environment profiles: budgets from their committed pilots, and profiles that differ only where
they say they do (the horizon profiles: test_horizon_profiles.py)."""

import json
from pathlib import Path

from adaroll.config import load_config
from adaroll.experiments.profiles import APPS_PILOT, PROFILES


def test_web_long_differs_from_web_only_in_the_rl_budget_and_its_evaluations():
    web, long = PROFILES["web"], PROFILES["web-long"]
    differ = {o.split("=")[0] for o in set(web.overrides) ^ set(long.overrides)}
    assert differ == {"rl.budget", "rl.eval.every_env_steps", "rl.eval.every_policy_samples"}
    assert "rl.budget={env_steps: 12000, policy_samples: 12000}" in long.overrides
    assert (web.quick, web.skip, web.skip_configurations) == (
        long.quick,
        long.skip,
        long.skip_configurations,
    )


def test_web_apps_budget_and_predictions_are_its_committed_pilot() -> None:
    """30 Base->Vanilla iterations at the pilot's cost (827 env steps each), Val marked every
    2.5 of them as on the horizon profiles; the predictions are the file's."""
    pilot = json.loads(
        (Path(__file__).parents[2] / "docs/results/pilots/web-apps-seed0.json").read_text()
    )
    per_iteration, predicted = APPS_PILOT
    assert per_iteration == round(pilot["vanilla_per_iteration"])
    assert predicted == {int(n): round(s, 3) for n, s in pilot["predicted_saving"].items()}
    cfg = load_config(None, [*PROFILES["web-apps"].overrides, "configurations=[base_vanilla]"])
    assert cfg.rl.eval.every_env_steps == 2068  # 827 / 0.4
    assert cfg.rl.budget.env_steps == 12 * 2068  # 30 iterations, a whole number of marks
    assert abs(cfg.rl.budget.env_steps / per_iteration - 30) < 0.1
