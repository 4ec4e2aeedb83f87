"""AdaRoll's envs as Gymnasium envs: registered on import, Gymnasium's own env checker passes
for both (the web one in Chromium), strict action text, task choice and its errors."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import pytest
from gymnasium.utils.env_checker import check_env

import adaroll.envs  # noqa: F401 - registers the ids
from adaroll.actions import ActionParseError, parse_action
from adaroll.envs.as_gymnasium import ActionText
from tests.components import require_chromium


def checked(gym_id: str, **kwargs) -> None:
    """Gymnasium's checker, with every warning it raises made an error."""
    env = gymnasium.make(gym_id, **kwargs)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            check_env(env.unwrapped)
    finally:
        env.close()


def test_importing_adaroll_envs_registers_the_ids_without_torch_or_the_browser() -> None:
    code = (
        "import sys, gymnasium, adaroll.envs; "
        "print(sorted(i for i in gymnasium.registry if i.startswith('adaroll/'))); "
        "print([m for m in ('torch', 'adaroll.envs.web', 'adaroll.envs.mobile') if m in sys.modules])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.splitlines() == ["['adaroll/MiniWoB-v0', 'adaroll/Mobile-v0']", "[]"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"task": "mobile:notes.create#3"},
        {},  # a train-split task drawn at every reset
        {
            "task": "settings.wifi",
            "screenshot": True,
            "screenshot_size": (108, 240),
            "device": "noisy",
        },
    ],
)
def test_check_env_passes_for_the_phone(kwargs) -> None:
    checked("adaroll/Mobile-v0", **kwargs)


@pytest.mark.web
def test_check_env_passes_for_miniwob_in_chromium() -> None:
    require_chromium()
    checked("adaroll/MiniWoB-v0", task="web:click-button#0", screenshot=True)


def test_an_episode_through_the_gymnasium_api() -> None:
    env = gymnasium.make(
        "adaroll/Mobile-v0",
        task="mobile:settings.wifi#0",
        screenshot=True,
        screenshot_size=(108, 240),
    )
    obs, info = env.reset(seed=5)
    assert info["task"] == "mobile:settings.wifi#0" and obs["instruction"] == info["instruction"]
    assert obs in env.observation_space and obs["screenshot"].shape == (240, 108, 3)
    assert obs["screen_size"].tolist() == [1080, 2400]
    suite = env.unwrapped.suite
    while True:  # the scripted expert, speaking action text
        action = suite.expert_action(env.unwrapped.adaroll_env).to_text()
        obs, reward, terminated, truncated, info = env.step(action)
        assert obs in env.observation_space
        if terminated or truncated:
            break
    assert (reward, terminated, info["success"]) == (1.0, True, True)
    with pytest.raises(RuntimeError, match="call reset"):
        env.step("wait()")
    env.reset(options={"task": "mobile:notes.create#1"})
    with pytest.raises(
        ActionParseError, match=r"not an action call like tap\(0.5, 0.5\): 'tap\(1.5'"
    ):
        env.step("tap(1.5")
    with pytest.raises(TypeError, match="AdaRoll action text"):
        env.step(3)
    _, reward, terminated, _, info = env.step(
        'open_app("NoSuchApp")'
    )  # well-formed, not executable
    assert (reward, terminated, info["success"]) == (0.0, True, False) and "NoSuchApp" in info[
        "invalid_action"
    ]


def test_tasks_are_fixed_drawn_by_template_or_drawn_from_a_split() -> None:
    by_template = gymnasium.make("adaroll/Mobile-v0", task="notes.create")
    seeds = {by_template.reset(seed=s)[1]["task"] for s in (1, 2, 1)}
    assert len(seeds) == 2 and all(t.startswith("mobile:notes.create#") for t in seeds)
    drawn = gymnasium.make("adaroll/Mobile-v0", split="heldout-templates")
    heldout = {t.id for t in drawn.unwrapped.suite.split("heldout-templates")}
    assert {drawn.reset(seed=s)[1]["task"] for s in range(5)} <= heldout


def test_an_unknown_task_lists_the_valid_templates() -> None:
    with pytest.raises(
        ValueError,
        match=r"unknown mobile task 'mobile:nope#1'; valid templates: calendar.add_event, ",
    ):
        gymnasium.make("adaroll/Mobile-v0", task="mobile:nope#1")
    with pytest.raises(ValueError, match=r"task 'web:click-button#0' is not a mobile task"):
        gymnasium.make("adaroll/Mobile-v0", task="web:click-button#0")
    env = gymnasium.make("adaroll/Mobile-v0")
    with pytest.raises(ValueError, match=r"unknown mobile task 'notes.crate'; valid templates: "):
        env.reset(options={"task": "notes.crate"})
    with pytest.raises(KeyError, match="unknown split 'tain'"):
        gymnasium.make("adaroll/Mobile-v0", split="tain")


def test_the_action_space_is_the_strict_parser_and_samples_valid_actions() -> None:
    space = ActionText()
    space.seed(0)
    samples = [space.sample() for _ in range(200)]
    assert all(s in space and parse_action(s).to_text() == s for s in samples)
    assert {parse_action(s).kind.value for s in samples} == {"tap", "swipe", "wait"}
    for bad in ("tap(0.5)", "tap(1.5, 0.5)", "tap(0.5, 0.5); wait()", "rm -rf /", "", 7, None):
        assert bad not in space
