"""Profiles by horizon (issue 28): each bucket's templates measure inside it, over >= 5 apps,
under one budget rule; an empty bucket is a config error naming it; a profile's suite draws
only from its templates."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaroll.config import ConfigError, load_config
from adaroll.envs import get_suite
from adaroll.envs.mobile.suite import expert_length
from adaroll.envs.mobile.tasks import get_template
from adaroll.experiments.profiles import (
    HORIZON_BUCKETS,
    HORIZON_PILOT,
    HORIZON_SWEEP,
    HORIZON_TEMPLATES,
    PROFILES,
    horizon_budget,
    horizon_mark,
    horizon_profile,
)
from adaroll.experiments.runner import Unit, overrides_for

PILOTS = Path(__file__).parents[2] / "docs" / "results" / "pilots"

HORIZON = {f"mobile-{b}": b for b in HORIZON_BUCKETS}


@pytest.mark.parametrize("name", sorted(HORIZON))
def test_each_profiles_templates_fall_in_its_bucket(name: str) -> None:
    profile = PROFILES[name]
    lo, hi = HORIZON_BUCKETS[HORIZON[name]]
    assert profile.bucket == (lo, hi) and profile.templates == HORIZON_TEMPLATES[HORIZON[name]]
    lengths = {t: expert_length(t, "noisy") for t in profile.templates}
    assert all(lo < steps <= hi for steps in lengths.values()), lengths
    assert len({app for t in profile.templates for app in get_template(t).apps}) >= 5
    assert not any(get_template(t).heldout for t in profile.templates)


def test_buckets_are_disjoint_and_share_one_budget_rule() -> None:
    bounds = sorted(HORIZON_BUCKETS.values())
    assert all(
        a[1] == b[0] for a, b in zip(bounds, bounds[1:], strict=False)
    )  # contiguous, no overlap
    assert len({t for ts in HORIZON_TEMPLATES.values() for t in ts}) == sum(
        map(len, HORIZON_TEMPLATES.values())
    )
    for name, bucket in HORIZON.items():
        budget, mark = horizon_budget(bucket, max(HORIZON_SWEEP)), horizon_mark(bucket)
        assert (
            f"rl.budget={{env_steps: {budget}, policy_samples: {budget}}}"
            in PROFILES[name].overrides
        )
        assert f"rl.eval.every_env_steps={mark}" in PROFILES[name].overrides
        # every budget of the sweep ends on a mark, with at least three marks inside it
        assert all(horizon_budget(bucket, n) % mark == 0 for n in HORIZON_SWEEP)
        assert horizon_budget(bucket, min(HORIZON_SWEEP)) >= 3 * mark
    # N Vanilla iterations at the pilot's cost: 10 x 667 env steps on h6, in marks of 2.5
    assert horizon_mark("h6") == 1668 and horizon_budget("h6", 10) == 4 * 1668


@pytest.mark.parametrize("bucket", sorted(HORIZON_BUCKETS))
def test_the_budgets_and_predictions_are_the_committed_pilots(bucket: str) -> None:
    pilot = json.loads((PILOTS / f"mobile-{bucket}-seed0.json").read_text())
    per_iteration, predicted = HORIZON_PILOT[bucket]
    assert per_iteration == round(pilot["vanilla_per_iteration"])
    assert predicted == {int(n): round(s, 3) for n, s in pilot["predicted_saving"].items()}


def test_an_empty_bucket_is_a_config_error_naming_it() -> None:
    with pytest.raises(
        ConfigError, match=r"horizon bucket 'h24' \(12 < expert steps <= 24\) has no templates"
    ):
        horizon_profile("h24", ())
    with pytest.raises(
        ConfigError, match="unknown horizon bucket 'h99'; buckets: h6, h12, h24, h40"
    ):
        horizon_profile("h99", ("settings.wifi",))


@pytest.mark.parametrize("name", ["mobile-h6", "mobile-h40"])
def test_a_horizon_profiles_suite_draws_from_its_templates(name: str) -> None:
    profile = PROFILES[name]
    cfg = load_config(
        None, overrides_for(profile, True, Unit("default", 0, ("base", "base_vanilla")))
    )
    assert cfg.env.options["device"] == "noisy"
    suite = get_suite(cfg.env.name, dict(cfg.env.options), **cfg.env.suite_options)
    for split in ("pretrain", "train", "val", "heldout"):
        assert {t.template for t in suite.split(split)} <= set(profile.templates)
    assert suite.split("heldout-templates") == [] and suite.dropped == []
    full = load_config(None, overrides_for(profile, False, Unit("default", 0, ("base",))))
    assert full.env.suite_options["templates"] == list(profile.templates)
    bucket = name.removeprefix("mobile-")
    assert (full.env.suite_options["n_train"], full.rl.budget.env_steps) == (
        80,
        horizon_budget(bucket, max(HORIZON_SWEEP)),
    )


@pytest.mark.parametrize("bucket", ["h12", "h40"])
def test_the_options_predictions_are_the_committed_routing_pilots(bucket: str) -> None:
    """Issue 40: every option variant the horizon experiment trains has its S(30) from the
    routing pilot committed before the runs, and the pilot used the variants' estimate."""
    from adaroll.experiments.profiles import OPTION_PILOT
    from adaroll.experiments.specs import EXPERIMENTS
    from adaroll.experiments.variants import LEARNING_ESTIMATE

    pilot = json.loads((PILOTS / f"mobile-{bucket}-seed0-routing.json").read_text())
    predicted = {k: round(v["saving_30"], 3) for k, v in pilot["predictions"].items()}
    assert OPTION_PILOT[bucket] == predicted
    options = [v for v in EXPERIMENTS.get("horizon").variants if v.startswith(("learn", "tau_"))]
    assert set(options) | {"default"} == set(predicted)
    assert pilot["estimate"] == LEARNING_ESTIMATE
