"""Experiment plans: every variant is valid config, runs are shared between experiments, and
only variants that leave Base untouched reuse its directory."""

from pathlib import Path

import pytest

from adaroll.actions import Action
from adaroll.config import ConfigError, load_config
from adaroll.experiments.profiles import PROFILES
from adaroll.experiments.runner import (
    SHARED_BASE,
    Unit,
    copy_base,
    overrides_for,
    plan_units,
    shares_base,
)
from adaroll.experiments.specs import EXPERIMENTS
from adaroll.experiments.variants import VARIANTS

QUICK_BUDGETS = {
    name: load_config(
        None, overrides_for(PROFILES[name], True, Unit("default", 0, ("base_vanilla",)))
    ).rl.budget
    for name in PROFILES
}
"""Each profile's RL budget under --quick (its default variant's)."""


@pytest.mark.parametrize("profile", sorted(PROFILES))
@pytest.mark.parametrize("quick", [False, True])
def test_every_variant_is_a_valid_config(profile, quick):
    for name in EXPERIMENTS.names():
        exp = EXPERIMENTS.get(name)
        for variant in exp.variants_for(PROFILES[profile]):
            cfg = load_config(
                None,
                overrides_for(
                    PROFILES[profile],
                    quick,
                    Unit(variant, 3, exp.configurations_of(variant, PROFILES[profile])),
                ),
            )
            assert cfg.seed == 3
            assert set(cfg.configurations) == set(exp.configurations_of(variant, PROFILES[profile]))
            if quick:  # a variant's own budget (the recipe sweep's) never outgrows a smoke test
                assert cfg.rl.budget == QUICK_BUDGETS[profile], (profile, variant)


def test_experiments_share_runs_and_union_their_configurations():
    units = plan_units(
        ["efficiency", "routing", "sensitivity"], seeds=[0, 1], profile=PROFILES["mobile"]
    )
    default = {u.seed: u for u in units if u.variant == "default"}
    assert set(default) == {0, 1}
    assert set(default[0].configurations) == {
        "base",
        "base_vanilla",
        "base_hybrid",
        "action_hybrid",
    }
    assert len(units) == 2 * len(EXPERIMENTS.get("sensitivity").variants)


def test_variants_leave_out_optional_variants_only_and_unknown_names_are_config_errors():
    h12 = PROFILES["mobile-h12"]
    every = {u.variant for u in plan_units(["horizon"], seeds=[0], profile=h12)}
    some = {u.variant for u in plan_units(["horizon"], seeds=[0], profile=h12, variants=["learn"])}
    assert some == {"default", "own-run", "learn"} < every
    assert {u.variant for u in plan_units(["horizon"], [0], h12, variants=[])} == {
        "default",
        "own-run",
    }
    for wrong in (["own-run"], ["learn", "no-such-variant"]):  # required, or no variant at all
        with pytest.raises(ConfigError, match="--variants: .*not an optional variant of horizon"):
            plan_units(["horizon"], seeds=[0], profile=h12, variants=wrong)
    with pytest.raises(ConfigError, match="optional: none"):
        plan_units(["sensitivity"], seeds=[0], profile=PROFILES["mobile"], variants=["learn"])


def test_only_stage_overrides_share_the_base():
    assert not shares_base("default")
    assert not shares_base("clean-demos")  # other demonstrations: another Base
    assert all(shares_base(v) for v in VARIANTS if v not in ("default", "clean-demos"))


def test_copy_base_copies_a_finished_base_only(tmp_path: Path):
    source, target = tmp_path / "default", tmp_path / "variant"
    copy_base(source, target)
    assert not target.exists()
    (source / "policies" / "base").mkdir(parents=True)
    (source / "policies" / "base" / "done").write_text("{}")
    (source / "experts" / "train").mkdir(parents=True)
    (source / "experts" / "train" / "experts.json").write_text("{}")
    (source / "evals").mkdir()
    (source / "evals" / "base.json").write_text('{"train_avg": 0.5}')
    (source / "evals" / "sft.json").write_text("{}")
    copy_base(source, target)
    assert all((target / rel).exists() for rel in SHARED_BASE)
    assert not (target / "evals" / "sft.json").exists()  # SFT on train experts is not Base
    assert not (target / "env.json").exists()  # a Base from before env settings were recorded
    (source / "env.json").write_text('{"device": "noisy"}')
    later = tmp_path / "later"
    copy_base(source, later)
    assert (later / "env.json").read_text() == '{"device": "noisy"}'  # the env the Base was made in


def test_a_profile_skips_its_variants():
    web = {u.variant for u in plan_units(["pivots"], seeds=[0], profile=PROFILES["web"])}
    mobile = {u.variant for u in plan_units(["pivots"], seeds=[0], profile=PROFILES["mobile"])}
    assert mobile - web == set(PROFILES["web"].skip) - {"clean-demos"} and "default" in web
    device = {
        p: {u.variant for u in plan_units(["device"], seeds=[0], profile=PROFILES[p])}
        for p in ("mobile", "mobile-clean", "web")
    }
    assert device == {
        "mobile": {"default", "clean-demos"},
        "mobile-clean": {"default"},
        "web": {"default"},
    }


def test_a_profile_skips_configurations_in_every_experiment():
    web = PROFILES["web"]
    trained = {
        c for u in plan_units(EXPERIMENTS.names(), seeds=[0], profile=web) for c in u.configurations
    }
    assert trained and not trained & set(web.skip_configurations)
    mobile = {
        c
        for u in plan_units(["full"], seeds=[0], profile=PROFILES["mobile"])
        for c in u.configurations
    }
    assert set(web.skip_configurations) <= mobile


@pytest.mark.parametrize("profile", ["web", "web-long", "web-long-tasks"])
@pytest.mark.parametrize(
    ("variant", "wrong_field"),
    [("default", 1.0), ("match-text-soft", 0.0), ("match-text-exact", 0.0)],
)
def test_web_text_match_variants_do_not_reward_the_wrong_fields_text(profile, variant, wrong_field):
    """login-user: the expert types the username; a sample that types the password (the other
    field's text) earns Stage I's and Local's one-step reward only under the paper's any-text
    match."""
    cfg = load_config(
        None, overrides_for(PROFILES[profile], False, Unit(variant, 0, ("action_hybrid",)))
    )
    expert = Action.type_text("kanesha")
    for phase in (cfg.stage1, cfg.rl):
        matcher = phase.match.build()
        assert matcher.reward(Action.type_text("UmE"), expert) == wrong_field
        assert matcher.reward(Action.type_text("kanesha"), expert) == 1.0
        assert matcher.reward(Action.tap(0.5, 0.5), expert) == 0.0


def test_the_text_match_variants_run_on_the_web_only():
    variants = {
        p: {u.variant for u in plan_units(["text-match"], seeds=[0], profile=PROFILES[p])}
        for p in ("mobile", "mobile-clean", "web", "web-long-tasks")
    }
    both = {"default", "match-text-soft", "match-text-exact"}
    assert variants == {
        "mobile": {"default"},
        "mobile-clean": {"default"},
        "web": both,
        "web-long-tasks": both,
    }


def test_every_experiment_has_an_analysis():
    from adaroll.experiments.analyses import ANALYSES

    assert set(EXPERIMENTS.names()) <= set(ANALYSES)
    assert EXPERIMENTS.get("text-match").configurations == (
        "action_hybrid",
    )  # one: an ablation table


@pytest.mark.parametrize("profile", ["mobile", "web", "web-apps"])
@pytest.mark.parametrize("quick", [False, True])
def test_all_pivots_at_its_own_budget_runs_the_papers_ratio_on_every_profile(profile, quick):
    """Table 2's All Pivots row runs 4.7 times (56 / 12) the Stage I iterations of the same
    profile's other rows, so the ratio holds on the web's 8 and in the quick runs' 2."""

    def stage1_iterations(variant: str) -> int:
        unit = Unit(variant, 0, ("action",))
        cfg = load_config(None, overrides_for(PROFILES[profile], quick, unit))
        assert cfg.stage1.budget.iterations is not None
        return cfg.stage1.budget.iterations

    default, long = stage1_iterations("default"), stage1_iterations("pivots-all-long")
    assert long == round(default * 56 / 12) and long > default
    if profile == "mobile" and not quick:  # the committed ten-seed runs' budget
        assert long == 56
