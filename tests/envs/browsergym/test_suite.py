"""The browsergym task suite: BrowserGym task names (with or without ``browsergym/``) as
AdaRoll tasks, the web suite's disjoint seed ranges, unknown names refused naming the option
and the task, experts only where the web env has one, and env options checked before any browser starts."""

from __future__ import annotations

import pytest

from adaroll.config import ConfigError
from adaroll.envs import get_suite
from adaroll.envs.base import TaskSpec
from tests.components import require_browsergym


@pytest.fixture(autouse=True)
def _needs_browsergym() -> None:
    require_browsergym()


def test_splits_use_browsergym_names_and_disjoint_seeds() -> None:
    suite = get_suite(
        "browsergym",
        templates=["browsergym/miniwob.click-test-2", "miniwob.enter-text"],
        heldout_templates=["miniwob.click-link"],
        train_seeds=2,
        eval_seeds=1,
        pretrain_seeds=3,
    )
    assert suite.templates() == ["miniwob.click-test-2", "miniwob.enter-text", "miniwob.click-link"]
    train = suite.split("train")
    assert train[0] == TaskSpec("browsergym", "miniwob.click-test-2", 0)
    assert train[0].id == "browsergym:miniwob.click-test-2#0" and len(train) == 4
    seeds = {
        name: {t.seed for t in suite.split(name)}
        for name in ("train", "val", "heldout", "pretrain")
    }
    names = list(seeds)
    assert all(not seeds[a] & seeds[b] for a in names for b in names if a < b)
    assert {t.template for t in suite.split("heldout-templates")} == {"miniwob.click-link"}
    with pytest.raises(KeyError, match="unknown split 'test'"):
        suite.split("test")


def test_unknown_templates_and_bad_sizes_are_config_errors() -> None:
    with pytest.raises(
        ConfigError, match="templates: browsergym environment: unknown task 'miniwob.clik-test-2'"
    ):
        get_suite("browsergym", templates=["miniwob.clik-test-2"])
    with pytest.raises(ConfigError, match="heldout_templates must be a list"):
        get_suite("browsergym", heldout_templates="miniwob.click-link")
    with pytest.raises(ConfigError, match="train_seeds must be a non-negative int"):
        get_suite("browsergym", train_seeds=-1)
    with pytest.raises(ConfigError, match="unknown browsergym task suite"):
        get_suite("browsergym", n_train=3)


def test_no_expert_outside_the_web_envs_miniwob_experts() -> None:
    class FakeEnv:  # expert_action reads only the task of the env
        task = TaskSpec("browsergym", "miniwob.bisect-angle", 0)

    with pytest.raises(
        KeyError, match="no scripted expert for BrowserGym task 'miniwob.bisect-angle'"
    ):
        get_suite("browsergym").expert_action(FakeEnv())  # type: ignore[arg-type]


def test_env_options_are_checked_before_a_browser_starts() -> None:
    from adaroll.envs import make_env_factory

    with pytest.raises(ConfigError, match="unknown option.*slowmo; valid: executable"):
        make_env_factory("browsergym", slowmo=0)
    with pytest.raises(ConfigError, match="slow_mo must be a non-negative int or null, got -5"):
        make_env_factory("browsergym", slow_mo=-5)
