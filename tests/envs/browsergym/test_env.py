"""The browsergym env on real BrowserGym MiniWoB++ tasks in Debian's Chromium: the web env's
experts solve them with BrowserGym's reward, a wrong click ends the episode unrewarded,
``done()`` terminates and the step limit truncates, unknown tasks are refused naming the env
and the task, and a browser killed mid-episode is an EnvFault that poisons the env."""

from __future__ import annotations

import os
import signal
import subprocess

import pytest

from adaroll.actions import parse_action
from adaroll.envs.base import EnvFault, TaskSpec, run_expert
from adaroll.envs.browsergym import BrowserGymEnv, BrowserGymSuite
from tests.envs.browsergym.conftest import FAST
from tests.processes import left_behind, live_processes

pytestmark = pytest.mark.web

CLICK_TEST_2 = TaskSpec("browsergym", "miniwob.click-test-2", 0)


def test_runs_debian_chromium_without_a_playwright_download(bg_env) -> None:
    from adaroll.envs.browsergym import launch
    from adaroll.envs.web.browser import find_chromium

    bg_env.reset(options={"task": CLICK_TEST_2})
    assert launch._installed.chromium.executable == find_chromium()
    version = subprocess.run([find_chromium(), "--version"], capture_output=True, text=True).stdout
    assert bg_env._gym.unwrapped.browser.version in version


@pytest.mark.parametrize("template", ["miniwob.click-test-2", "miniwob.enter-text"])
def test_web_experts_solve_browsergym_tasks_with_browsergym_reward(bg_env, template: str) -> None:
    task = TaskSpec("browsergym", template, 5)
    actions, success = run_expert(bg_env, BrowserGymSuite(templates=[template]), task)
    assert success and bg_env.steps_taken == len(actions) >= 1
    status = bg_env.page_status()
    assert status["done"] and status["raw_reward"] > 0  # the page's own verdict


def test_wrong_button_ends_the_episode_unrewarded(bg_env) -> None:
    obs, info = bg_env.reset(options={"task": "browsergym/miniwob.click-test-2"}, seed=0)
    assert bg_env.task == CLICK_TEST_2
    wanted = info["instruction"].split("button ")[1].rstrip(".")
    wrong = next(e for e in obs.elements if e.role == "button" and e.text != wanted)
    x, y = wrong.center
    _, reward, terminated, truncated, step_info = bg_env.step(
        parse_action(f"tap({x:.4f}, {y:.4f})")
    )
    assert (reward, terminated, truncated, step_info["success"]) == (0.0, True, False, False)
    assert step_info["browsergym_reward"] == 0.0 and step_info["browsergym_action"].startswith(
        "mouse_click("
    )
    with pytest.raises(RuntimeError, match="episode is over"):
        bg_env.step(parse_action("wait()"))


def test_done_terminates_and_the_step_limit_truncates(bg_env) -> None:
    bg_env.reset(options={"task": TaskSpec("browsergym", "miniwob.enter-text", 1)})
    _, reward, terminated, truncated, info = bg_env.step(parse_action("done()"))
    assert (reward, terminated, truncated, info["success"]) == (0.0, True, False, False)
    with BrowserGymEnv(max_steps=2, wait_seconds=0.0, **FAST) as env:
        env.reset(options={"task": TaskSpec("browsergym", "miniwob.enter-text", 1)})
        assert env.max_steps == 2
        assert env.step(parse_action("wait()"))[2:4] == (False, False)
        _, reward, terminated, truncated, info = env.step(parse_action("wait()"))
        assert (reward, terminated, truncated, info["success"]) == (0.0, False, True, False)


@pytest.mark.parametrize(
    "task,words",
    [
        ("browsergym/miniwob.no-such-task", ["browsergym", "miniwob.no-such-task", "registers"]),
        (
            "miniwob.click-tset-2",
            ["browsergym", "miniwob.click-tset-2", "did you mean miniwob.click-test-2"],
        ),
        ("browsergym:nobench.task#0", ["browsergym", "nobench.task", "miniwob"]),
        ("web:click-test-2#0", ["web:click-test-2#0", "not a browsergym task"]),
    ],
)
def test_unknown_tasks_are_refused_naming_env_and_task(bg_env, task: str, words: list[str]) -> None:
    with pytest.raises(ValueError) as caught:
        bg_env.reset(options={"task": task})
    assert all(w in str(caught.value) for w in words), str(caught.value)


def _task_browser(before: dict[int, str]) -> int:
    """The pid of the task page's Chromium that BrowserGym launched since ``before`` (its chat
    window's browser is launched with a --window-size and without this flag)."""
    pids = [
        pid
        for pid, cmd in live_processes().items()
        if pid not in before and "OverlayScrollbars" in cmd and "--type=" not in cmd
    ]
    assert len(pids) == 1, pids
    return pids[0]


def _profiles(before: dict[int, str]) -> set[str]:
    """The profile folders of the browsers Playwright launched since ``before`` (every process
    of such a browser names it; other jobs' browsers on the machine do not)."""
    return {
        arg
        for pid, cmd in live_processes().items()
        if pid not in before
        for arg in cmd.split()
        if "playwright_chromiumdev_profile" in arg
    }


def test_browser_killed_mid_episode_is_an_env_fault() -> None:
    with BrowserGymEnv(**FAST) as env:
        before = live_processes()
        env.reset(options={"task": TaskSpec("browsergym", "miniwob.click-checkboxes", 2)})
        profiles = _profiles(before)
        assert len(profiles) == 2  # the task page's browser and the chat window's
        os.kill(_task_browser(before), signal.SIGKILL)
        with pytest.raises(
            EnvFault, match="browsergym env step of browsergym:miniwob.click-checkboxes#2"
        ):
            env.step(parse_action("tap(0.5, 0.5)"))
        assert env.fault is not None
        with pytest.raises(EnvFault, match="unusable after an earlier fault"):
            env.reset(options={"task": CLICK_TEST_2})
    assert left_behind(before, *profiles) == {}  # the chat window's browser closed too
