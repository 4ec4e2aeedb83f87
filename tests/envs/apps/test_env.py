"""The apps env with its real browser and servers: seeded resets, steps judged on the databases,
observations taken after the servers answered, links between apps, and a server that dies
mid-episode as an env fault."""

from __future__ import annotations

import os
import signal

import pytest

from adaroll.actions import Action, parse_action
from adaroll.envs import make_env
from adaroll.envs.apps.config import APP_NAMES
from adaroll.envs.apps.launch import server_processes
from adaroll.envs.apps.state import diff
from adaroll.envs.apps.suite import AppsSuite
from adaroll.envs.base import EnvFault, InvalidActionError, TaskSpec
from tests.envs.apps.conftest import require_apps_stack

pytestmark = pytest.mark.web

ARCHIVE = TaskSpec("apps", "mail.archive", 3)


def texts(obs) -> list[str]:
    return [e.text for e in obs.elements]


def tap(obs, text: str) -> Action:
    (el,) = [e for e in obs.elements if e.text == text]
    return Action.tap(*el.center)


def test_reset_seeds_every_app_and_observes_the_viewport(apps_env):
    obs, info = apps_env.reset(options={"task": ARCHIVE})
    assert info["instruction"].startswith("Archive the email") and obs.screen_size == (1280, 800)
    assert {"Mail", "Shop", "Calendar", "Tracker", "Notes", "Admin"} <= set(texts(obs))
    assert diff(apps_env.start_state(), apps_env.app_state()) == []
    servers = server_processes(apps_env.browser, APP_NAMES)
    assert set(servers) == set(APP_NAMES) and len(set(servers.values())) == 1  # shared


def test_the_expert_succeeds_by_the_database_and_sees_the_servers_answer(apps_env):
    obs, _ = apps_env.reset(options={"task": ARCHIVE})
    before = apps_env.state_checksum()
    suite = AppsSuite()
    obs, reward, terminated, _, info = apps_env.step(suite.expert_action(apps_env))  # open it
    assert not terminated and "Archive" in texts(obs)
    obs, reward, terminated, _, info = apps_env.step(suite.expert_action(apps_env))  # archive
    assert (reward, terminated, info["success"], info["judge"]) == (1.0, True, True, "success")
    # the observation came after the write's answer and the list's reload: the toast, no spinner
    assert "Conversation archived" in texts(obs) and "Loading…" not in texts(obs)
    assert apps_env.state_checksum() != before


def test_done_is_judged_on_the_database_and_open_app_is_not_an_action(apps_env):
    apps_env.reset(options={"task": ARCHIVE})
    with pytest.raises(InvalidActionError, match="open_app"):
        apps_env.step(parse_action('open_app("Shop")'))
    _, reward, terminated, _, info = apps_env.step(Action.done())
    assert (reward, terminated, info["success"]) == (0.0, True, False)
    assert "not done" in info["judge"]


def test_a_link_to_another_app_loads_its_page(apps_env):
    obs, _ = apps_env.reset(options={"task": ARCHIVE})
    obs, *_ = apps_env.step(tap(obs, "Shop"))
    assert apps_env.evaluate("window.__app.name") == "shop" and "All products" in texts(obs)
    obs, *_ = apps_env.step(tap(obs, "Kitchen"))
    assert "Kitchen" in texts(obs) and "Chef Knife" in " ".join(texts(obs))


def test_bad_tasks_are_refused(apps_env):
    with pytest.raises(ValueError, match="is not an apps task"):
        apps_env.reset(options={"task": TaskSpec("web", "click-button", 0)})
    with pytest.raises(ValueError, match="unknown apps task template 'mail.nope'"):
        apps_env.reset(options={"task": "apps:mail.nope#0"})


@pytest.mark.parametrize("mode", ["shared", "per-app"])
def test_a_server_that_dies_mid_episode_is_an_env_fault(mode):
    require_apps_stack()
    env = make_env("apps", latency_scale=0.0, server_mode=mode)
    try:
        obs, _ = env.reset(options={"task": ARCHIVE})
        servers = server_processes(env.browser, APP_NAMES)
        assert len(set(servers.values())) == (1 if mode == "shared" else 6)
        os.kill(servers["shop"], signal.SIGKILL)
        with pytest.raises(EnvFault, match=r"the server\(s\) of (.*, )?shop(, .*)? died"):
            env.step(tap(obs, "Notes"))
        assert env.fault is not None
        with pytest.raises(EnvFault):
            env.observe()
    finally:
        env.close()
