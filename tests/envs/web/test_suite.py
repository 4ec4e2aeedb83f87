"""The MiniWoB++ suite's splits: `val` (selection) is disjoint from every other split."""

from __future__ import annotations

import pytest

from adaroll.config import ConfigError
from adaroll.envs.web.suite import EXPERT_CHECK_SEED_BASE, MiniWoBSuite

SPLITS = ("pretrain", "train", "val", "heldout", "heldout-templates")


def test_val_holds_new_seeds_of_the_train_templates() -> None:
    suite = MiniWoBSuite(train_seeds=3, eval_seeds=2)
    val, train = suite.split("val"), suite.split("train")
    assert len(val) == 2 * len({t.template for t in train})  # val_seeds defaults to eval_seeds
    assert {t.template for t in val} == {t.template for t in train}
    everything = [t for name in SPLITS for t in suite.split(name)]
    assert len(everything) == len(set(everything))  # no instance in two splits
    assert len(MiniWoBSuite(eval_seeds=2, val_seeds=5).split("val")) == 5 * len(
        suite.train_templates()
    )
    with pytest.raises(ConfigError, match="val_seeds must be a non-negative int"):
        MiniWoBSuite(val_seeds=-1)


def test_expert_check_seeds_are_in_no_split() -> None:
    suite = MiniWoBSuite(train_seeds=64, eval_seeds=64, pretrain_seeds=64)
    seeds = {t.seed for name in SPLITS for t in suite.split(name)}
    assert max(seeds) < EXPERT_CHECK_SEED_BASE  # every split's seed range ends below it


def test_web_policy_hints_leave_out_what_a_page_rejects() -> None:
    from adaroll.config import PolicyConfig
    from adaroll.policies import make_policy

    policy = make_policy(PolicyConfig(), seed=0, hints=MiniWoBSuite().policy_hints())
    assert "open_app" not in policy.config.kinds and "hover" in policy.config.kinds
    assert {"back", "home"}.isdisjoint(policy.config.keys) and "ctrl+a" in policy.config.keys
