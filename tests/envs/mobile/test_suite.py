"""Registration, splits (sizes, determinism, disjointness), difficulty."""

from __future__ import annotations

import pytest

from adaroll.config import ConfigError
from adaroll.envs import get_suite, make_env, make_env_factory
from adaroll.envs.base import ENVS, SUITES, run_expert
from adaroll.envs.mobile import TEMPLATES, MobileEnv, MobileTaskSuite, difficulty
from adaroll.registry import UnknownNameError


def test_registered_by_name() -> None:
    assert isinstance(make_env("mobile", screenshot_size=(108, 240)), MobileEnv)
    assert isinstance(make_env_factory("mobile")(), MobileEnv)
    assert isinstance(get_suite("mobile", n_train=5), MobileTaskSuite)
    assert "mobile" in ENVS and "mobile" in SUITES
    with pytest.raises(UnknownNameError, match="valid names: .*mobile"):
        make_env("phone")
    with pytest.raises(
        ConfigError, match="unknown mobile environment .* screenshots; valid: screenshot"
    ):
        make_env("mobile", screenshots=True)


def test_default_splits() -> None:
    s = MobileTaskSuite()
    sizes = {
        name: len(s.split(name))
        for name in ("pretrain", "train", "val", "heldout", "heldout-templates")
    }
    assert sizes == {
        "pretrain": 200,
        "train": 40,
        "val": 40,
        "heldout": 40,
        "heldout-templates": 20,
    }
    train = s.split("train")
    assert len({t.template for t in train}) == 40  # spread over templates
    held = set(s.heldout_templates())
    assert 8 <= len(held) <= 12
    for name in ("pretrain", "train", "val", "heldout"):
        assert not held & {t.template for t in s.split(name)}
    assert {t.template for t in s.split("val")} <= {t.template for t in train}
    assert {t.template for t in s.split("heldout-templates")} == held
    assert {t.template for t in s.split("heldout")} <= {t.template for t in train}
    everything = [t for name in sizes for t in s.split(name)]
    assert len(everything) == len(set(everything))  # no instance in two splits
    with pytest.raises(KeyError, match="splits: pretrain"):
        s.split("test")


def test_splits_are_deterministic_and_configurable() -> None:
    a, b = MobileTaskSuite(seed=3), MobileTaskSuite(seed=3)
    assert a.split("train") == b.split("train") and a.split("pretrain") == b.split("pretrain")
    assert MobileTaskSuite(seed=4).split("train") != a.split("train")
    small = MobileTaskSuite(
        n_train=7,
        n_heldout=3,
        n_heldout_templates=2,
        n_pretrain=11,
        heldout_templates=("notes.pin", "files.move"),
    )
    assert [len(small.split(n)) for n in ("train", "heldout", "heldout-templates", "pretrain")] == [
        7,
        3,
        2,
        11,
    ]
    assert {t.template for t in small.split("heldout-templates")} == {"notes.pin", "files.move"}
    with pytest.raises(ValueError):
        MobileTaskSuite(n_train=-1)


def test_difficulty_signal() -> None:
    s = MobileTaskSuite()
    values = {name: difficulty(name) for name in TEMPLATES}
    assert min(values.values()) >= 2 and max(values.values()) <= 25
    assert values["shop.buy"] > values["settings.wifi"]
    info = s.template_info("shop.buy")
    assert info["difficulty"] == values["shop.buy"] and "Shop" in info["apps"]


def test_pools_of_two_hundred_tasks_per_split_are_disjoint_and_solvable() -> None:
    s = MobileTaskSuite(n_train=200, n_val=200, n_heldout=200)
    splits = {name: s.split(name) for name in ("train", "val", "heldout")}
    assert {name: len(set(tasks)) for name, tasks in splits.items()} == {
        "train": 200,
        "val": 200,
        "heldout": 200,
    }
    assert not set(splits["train"]) & set(splits["val"]) and not set(splits["val"]) & set(
        splits["heldout"]
    )
    assert not set(splits["train"]) & set(splits["heldout"])
    env = MobileEnv(device="noisy")
    solved = 0
    for task in splits["val"]:
        actions, ok = run_expert(env, s, task)
        solved += ok
    assert solved == 200
