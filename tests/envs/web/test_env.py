"""WebEnv behaviour: registration, seeding, episode semantics, actions, observations."""

from __future__ import annotations

import random

import numpy as np
import pytest

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import ENVS, SUITES, InvalidActionError, TaskSpec
from adaroll.envs.web import MiniWoBSuite, WebEnv
from adaroll.envs.web.miniwob import all_tasks, curated_tasks, task_url

pytestmark = pytest.mark.web


def _task(name: str, seed: int = 0) -> TaskSpec:
    return TaskSpec("web", name, seed)


def _button(obs, text):
    return next(e for e in obs.elements if e.role == "button" and e.text == text)


def test_registry_lists_every_package_task_and_a_curated_set():
    tasks = all_tasks()
    assert len(tasks) >= 100 and "click-button" in tasks and "book-flight" in tasks
    curated = curated_tasks()
    assert len(curated) >= 25
    for name in (
        "book-flight",
        "login-user",
        "search-engine",
        "click-tab-2",
        "social-media",
        "use-autocomplete",
        "choose-date",
        "navigate-tree",
        "click-checkboxes",
        "enter-text",
        "enter-date",
        "enter-time",
        "email-inbox",
        "form-sequence",
    ):
        assert name in curated
    assert all(tasks[n].max_steps >= 5 for n in curated)
    assert task_url("click-button").startswith("file://")
    with pytest.raises(KeyError, match="unknown MiniWoB"):
        task_url("no-such-task")


def test_registration_and_splits():
    assert "web" in ENVS and ENVS.get("web") is WebEnv
    suite = SUITES.get("web")()
    assert isinstance(suite, MiniWoBSuite)
    train, heldout = suite.split("train"), suite.split("heldout")
    held_templates = suite.split("heldout-templates")
    pretrain = suite.split("pretrain")
    assert train and heldout and held_templates and pretrain
    train_templates = {t.template for t in train}
    assert train_templates == {t.template for t in heldout}
    assert not train_templates & {t.template for t in held_templates}
    assert not {t.seed for t in train} & {t.seed for t in heldout}
    assert not {t.seed for t in train} & {t.seed for t in pretrain}
    with pytest.raises(KeyError, match="valid splits"):
        suite.split("nope")


def test_reset_is_deterministic_per_seed(web_env):
    obs_a, info_a = web_env.reset(options={"task": _task("click-button", 3)})
    obs_b, info_b = web_env.reset(options={"task": _task("click-button", 3)})
    assert info_a["instruction"] == info_b["instruction"]
    assert obs_a.element_tree_hash() == obs_b.element_tree_hash()
    hashes = {
        web_env.reset(options={"task": _task("click-button", s)})[0].element_tree_hash()
        for s in range(4)
    }
    assert len(hashes) > 1
    assert web_env.task == _task("click-button", 3)


def test_success_failure_and_terminal_info(web_env):
    obs, info = web_env.reset(options={"task": _task("click-button", 0)})
    assert web_env.instruction.startswith("Click on the") and web_env.steps_taken == 0
    assert info["instruction"] not in [e.text for e in obs.elements]  # the query is not listed
    label = web_env.instruction.split('"')[1]
    target = _button(obs, label)
    _, reward, terminated, truncated, info = web_env.step(Action.tap(*target.center))
    assert (reward, terminated, truncated, info["success"]) == (1.0, True, False, True)
    with pytest.raises(RuntimeError, match="episode is over"):
        web_env.step(Action.tap(0.5, 0.5))
    obs, _ = web_env.reset(options={"task": _task("click-button", 0)})
    wrong = next(e for e in obs.elements if e.role == "button" and e.text != label)
    _, reward, terminated, _, info = web_env.step(Action.tap(*wrong.center))
    assert (reward, terminated, info["success"]) == (0.0, True, False)


def test_collecting_garbage_changes_nothing_the_episode_sees(web_env):
    """What a CRIU dump does first (``CriuConfig.collect_garbage``): the page, its state and
    the episode go on as before."""
    web_env.reset(options={"task": _task("login-user", 0)})
    suite = MiniWoBSuite()
    web_env.step(suite.expert_action(web_env))  # the username typed
    before = web_env.observe()
    web_env.collect_garbage()
    assert web_env.observe().element_tree_hash() == before.element_tree_hash()
    assert web_env.steps_taken == 1
    terminated, info = False, {}
    while not terminated:
        _, _, terminated, _, info = web_env.step(suite.expert_action(web_env))
    assert info["success"]


def test_done_and_truncation(web_env):
    web_env.reset(options={"task": _task("enter-text", 1)})
    _, reward, terminated, truncated, info = web_env.step(Action.done())
    assert (reward, terminated, truncated, info["success"]) == (0.0, True, False, False)
    web_env.reset(options={"task": _task("enter-text", 1)})
    assert web_env.max_steps == all_tasks()["enter-text"].max_steps
    web_env.step(Action(ActionKind.WAIT))
    for i in range(1, web_env.max_steps):
        _, _, terminated, truncated, info = web_env.step(Action.press("tab"))
        assert not terminated
        assert truncated == (i == web_env.max_steps - 1)
    assert info["success"] is False


def test_invalid_actions_raise(web_env):
    web_env.reset(options={"task": _task("click-button", 0)})
    for action in (
        Action(ActionKind.OPEN_APP, app="Mail"),
        Action.press("back"),
        Action.press("home"),
        Action.press("volume_up"),
    ):
        with pytest.raises(InvalidActionError):
            web_env.step(action)
    with pytest.raises(InvalidActionError):
        web_env.step("tap(0.5, 0.5)")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="unknown MiniWoB"):
        web_env.reset(options={"task": _task("no-such-task")})


def test_typing_keys_and_focus_flags(web_env):
    obs, _ = web_env.reset(options={"task": _task("enter-text", 2)})
    box = next(e for e in obs.elements if e.role == "textbox")
    assert "editable" in box.flags and "focused" not in box.flags
    obs, *_ = web_env.step(Action.tap(*box.center))
    assert "focused" in next(e for e in obs.elements if e.role == "textbox").flags
    obs, *_ = web_env.step(Action.type_text("He"))
    obs, *_ = web_env.step(Action.press("backspace"))
    assert next(e for e in obs.elements if e.role == "textbox").text == "H"
    web_env.step(Action.press("backspace"))
    web_env.step(Action.type_text(web_env.instruction.split('"')[1]))
    obs, reward, terminated, *_ = web_env.step(Action.tap(*_button(obs, "Submit").center))
    assert reward == 1.0 and terminated


def test_observation_is_compact_and_screenshot_optional(web_env):
    obs, _ = web_env.reset(options={"task": _task("email-inbox", 0)})
    assert 0 < len(obs.elements) <= 60 and obs.screen_size == (160, 210) and obs.screenshot is None
    for e in obs.elements:
        left, top, right, bottom = e.bounds
        assert 0 <= left < right <= 1 and 0 <= top < bottom <= 1
    assert [e.id for e in obs.elements] == list(range(len(obs.elements)))
    img = web_env.screenshot()
    assert isinstance(img, np.ndarray) and img.shape == (210, 160, 3) and img.dtype == np.uint8
    assert img.std() > 0


def test_swipe_scrolls_a_scroll_container(web_env):
    obs, _ = web_env.reset(options={"task": _task("email-inbox", 0)})
    before = web_env.evaluate("document.getElementById('main').scrollTop")
    assert any(e.role == "scrollarea" and "scrollable" in e.flags for e in obs.elements)
    obs2, *_ = web_env.step(Action.swipe("up"))
    after = web_env.evaluate("document.getElementById('main').scrollTop")
    assert after > before
    assert obs2.element_tree_hash() != obs.element_tree_hash()
    web_env.step(Action.swipe("down"))
    assert web_env.evaluate("document.getElementById('main').scrollTop") == before


def test_a_coordinate_swipe_drags_a_text_selection(web_env):
    """A coordinate swipe is a drag (press, moves, release): across a two-line paragraph it
    selects the whole text, which highlight-text's own verifier accepts."""
    obs, _ = web_env.reset(options={"task": _task("highlight-text", 2)})
    paragraph = next(e for e in obs.elements if e.role == "text" and "Highlight" not in e.text)
    left, top, right, bottom = paragraph.bounds
    assert web_env.evaluate("window.getSelection().toString()") == ""
    web_env.step(Action(ActionKind.SWIPE, x=left, y=top, x2=right, y2=bottom))
    selected = web_env.evaluate("window.getSelection().toString()")
    assert selected.split() == paragraph.text.split() and len(selected.split()) > 4
    _, reward, terminated, _, info = web_env.step(Action.tap(*_button(obs, "Submit").center))
    assert reward == 1.0 and terminated and info["success"]


def test_screenshot_observations_when_configured(browser):
    env = WebEnv(browser=browser, screenshot=True)
    try:
        obs, _ = env.reset(options={"task": _task("click-button", 0)})
        assert obs.screenshot.shape == (210, 160, 3)
    finally:
        env.close()
    assert browser.alive()  # a borrowed browser survives the env


def test_select_is_operable_by_tap_and_type(web_env):
    obs, _ = web_env.reset(options={"task": _task("choose-list", 0)})
    item = web_env.instruction.split("Select ")[1].split(" from the list")[0]
    combo = next(e for e in obs.elements if e.role == "combobox")
    web_env.step(Action.tap(*combo.center))
    obs, *_ = web_env.step(Action.type_text(item))
    assert next(e for e in obs.elements if e.role == "combobox").text == item


def test_random_policy_mostly_fails(web_env):
    rng = random.Random(0)
    tasks = [
        "click-button",
        "click-link",
        "enter-text",
        "login-user",
        "click-checkboxes",
        "choose-date",
        "email-inbox",
        "social-media",
        "search-engine",
        "click-tab-2",
    ]
    wins = episodes = 0
    for name in tasks:
        for seed in range(2):
            web_env.reset(options={"task": _task(name, seed)})
            while True:
                u = rng.random()
                if u < 0.75:
                    action = Action.tap(round(rng.random(), 3), round(rng.random(), 3))
                elif u < 0.85:
                    action = Action.type_text(rng.choice(["a", "hello", "Submit", "42"]))
                elif u < 0.95:
                    action = Action.swipe(rng.choice(["up", "down"]))
                else:
                    action = Action.press(rng.choice(["enter", "tab", "backspace"]))
                _, _, terminated, truncated, info = web_env.step(action)
                if terminated or truncated:
                    break
            wins += info["success"]
            episodes += 1
    assert wins / episodes < 0.25, f"random policy solved {wins}/{episodes}"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"screenshot": "yes"}, "screenshot must be bool, got 'yes'"),
        (
            {"browser": {"startup_attempt": 2}},
            r"unknown browser option\(s\) startup_attempt; valid: .*startup_attempts",
        ),
        ({"reuse_pages": False}, r"unknown web env option\(s\) reuse_pages"),
    ],
)
def test_bad_env_options_are_config_errors_before_any_browser(options, message, monkeypatch):
    from adaroll.config import ConfigError
    from adaroll.envs import make_env_factory
    from adaroll.envs.web.browser import BrowserProcess

    monkeypatch.setattr(BrowserProcess, "launch", lambda *_: pytest.fail("a browser was started"))
    with pytest.raises(ConfigError, match=message):
        make_env_factory("web", **options)


def test_browser_options_from_yaml_reach_the_launch(browser):
    from adaroll.envs import make_env_factory

    env = make_env_factory("web", browser={"startup_attempts": 2, "extra_args": ["--mute-audio"]})()
    try:
        assert env.config.browser.startup_attempts == 2 and env.config.browser.extra_args == (
            "--mute-audio",
        )
        env.reset(options={"task": TaskSpec("web", "click-test", 1)})
    finally:
        env.close()
