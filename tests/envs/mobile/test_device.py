"""The noisy device: profiles and their errors, each interruption's mechanics, drift, experts
through every perturbation, exact replays and branches, and states that stay on their device."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from collections import Counter

import pytest

from adaroll.actions import Action, ActionKind
from adaroll.checkpoints import CheckpointStore
from adaroll.config import ConfigError
from adaroll.envs import make_env_factory
from adaroll.envs.base import TaskSpec
from adaroll.envs.mobile import MobileEnv, MobileTaskSuite
from adaroll.envs.mobile.device import KINDS, PROFILES, DeviceProfile, resolve_profile
from adaroll.envs.mobile.interruptions import BANNER_BOX, Interruption, clear_action, dismiss_box
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.snapshots.base import SnapshotError
from adaroll.snapshots.memory import MemorySnapshots
from tests.fakes import GoPolicy

from .conftest import spec


def expert_episode(
    env: MobileEnv, suite: MobileTaskSuite, task: TaskSpec
) -> tuple[list[Action], list, dict]:
    obs, _ = env.reset(options={"task": task})
    actions, trace = [], [obs]
    while True:
        action = suite.expert_action(env)
        actions.append(action)
        obs, reward, terminated, truncated, info = env.step(action)
        trace.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            return actions, trace, info


@pytest.fixture(scope="module")
def noisy_episodes() -> list[tuple[TaskSpec, list[Action], list, dict]]:
    suite, env = MobileTaskSuite(), MobileEnv(device="noisy")
    out = []
    for template in suite.trainable_templates():
        for seed in range(3):
            task = spec(template, seed)
            out.append((task, *expert_episode(env, suite, task)))
    return out


# -- profiles ---------------------------------------------------------------------------------------


def test_profiles_by_name_or_mapping_and_bad_values_name_their_field() -> None:
    assert resolve_profile("noisy") is PROFILES["noisy"] and resolve_profile("clean").clean
    custom = resolve_profile({"base": "noisy", "ad": 0.5})
    assert (
        custom.ad == 0.5
        and custom.banner == PROFILES["noisy"].banner
        and custom.name == "noisy+custom"
    )
    with pytest.raises(ValueError, match="unknown profile 'loud'"):
        resolve_profile("loud")
    with pytest.raises(ValueError, match=r"device\.banner must be a rate in \[0, 1\], got 1.5"):
        DeviceProfile("x", banner=1.5)
    with pytest.raises(ValueError, match=r"device\.ad must be a rate"):
        resolve_profile({"ad": -0.1})
    with pytest.raises(ValueError, match=r"unknown field\(s\) \['popups'\]"):
        resolve_profile({"base": "noisy", "popups": 0.1})
    with pytest.raises(
        ConfigError, match=r"mobile environment \(env\.options\): device\.loading must be a rate"
    ):
        make_env_factory("mobile", device={"loading": 2})
    with pytest.raises(ConfigError, match="unknown profile"):
        make_env_factory("mobile", device="noisier")


def test_the_clean_device_is_the_stock_phone(suite) -> None:  # type: ignore[no-untyped-def]
    stock, clean = MobileEnv(), MobileEnv(device="clean")
    for task in (spec("notes.create", 1), spec("shop.buy", 2), spec("mail.reply", 0)):
        actions, trace, info = expert_episode(clean, suite, task)
        assert info["success"] and "perturbations" not in info and clean.perturbations() == {}
        stock.reset(options={"task": task})
        assert [stock.step(a)[0] for a in actions] == [t[0] for t in trace[1:]]


# -- interruptions ----------------------------------------------------------------------------------


def interrupted(env: MobileEnv, intr: Interruption) -> MobileEnv:
    """``env`` with ``intr`` on screen (the rest of the state unchanged)."""
    st = env.get_state()
    assert st.device is not None
    env.set_state(dataclasses.replace(st, device=dataclasses.replace(st.device, interruption=intr)))
    return env


def a_quiet_notes_env() -> MobileEnv:
    """A noisy-device env on the Notes list with nothing on screen and no drift."""
    env = MobileEnv(device=DeviceProfile("quiet", max_interruptions=0, banner=1e-12))
    env.reset(options={"task": spec("notes.create", 0)})
    env.step(Action(ActionKind.OPEN_APP, app="Notes"))
    assert env.interruption is None
    return env


def fab_tap(env: MobileEnv) -> Action:
    fab = next(e for e in env.observe().elements if e.text == "New note")
    return Action.tap(*fab.center)


@pytest.mark.parametrize(
    "kind,variant",
    [("system_dialog", 0), ("system_dialog", 2), ("session_expiry", 0), ("ad", 0), ("ad", 3)],
)
def test_a_modal_interruption_takes_every_action_until_its_control_dismisses_it(
    kind, variant
) -> None:  # type: ignore[no-untyped-def]
    env = a_quiet_notes_env()
    tap_fab = fab_tap(env)
    screen = env.view.obs
    env = interrupted(env, Interruption(kind, variant, 0, "Notes"))
    covered = env.observe()
    assert covered != screen and any(
        e.role == "button" and "clickable" in e.flags for e in covered.elements
    )
    for blocked in (
        tap_fab,
        Action.press("home"),
        Action(ActionKind.OPEN_APP, app="Mail"),
        Action.type_text("x"),
    ):
        env.step(blocked)
        assert env.interruption is not None and env.phone.top.screen == "list"  # type: ignore[union-attr]
    env.step(clear_action(env.interruption, None))  # type: ignore[arg-type]
    assert env.interruption is None and env.observe() == screen
    env.step(tap_fab)
    assert env.phone.top.screen != "list"  # type: ignore[union-attr]


def test_back_dismisses_a_system_dialog_and_a_ready_ad_but_not_a_sign_in_screen() -> None:
    for kind, gone in (("system_dialog", True), ("ad", True), ("session_expiry", False)):
        env = interrupted(a_quiet_notes_env(), Interruption(kind, 1, 0, "Notes"))
        env.step(Action.press("back"))
        assert (env.interruption is None) is gone, kind
        assert env.phone.top is not None  # back never reached the app


def test_an_ad_close_control_works_only_after_its_countdown() -> None:
    env = interrupted(a_quiet_notes_env(), Interruption("ad", 1, 2, "Notes"))
    close = dismiss_box(Interruption("ad", 1, 0))
    assert dismiss_box(env.interruption) is None  # type: ignore[arg-type]
    assert clear_action(env.interruption, None).kind is ActionKind.WAIT  # type: ignore[arg-type]
    tap_close = Action.tap((close[0] + close[2]) / 2160, (close[1] + close[3]) / 4800)  # type: ignore[index]
    env.step(tap_close)
    assert env.interruption == Interruption("ad", 1, 1, "Notes")
    assert any(
        e.text == "Close in 1" and "clickable" not in e.flags for e in env.observe().elements
    )
    env.step(Action(ActionKind.WAIT))
    env.step(tap_close)
    assert env.interruption is None


def test_a_banner_takes_taps_on_itself_passes_the_rest_and_times_out() -> None:
    env = interrupted(a_quiet_notes_env(), Interruption("banner", 0, 3, "Notes"))
    on_banner = Action.tap(0.5, round((BANNER_BOX[1] + BANNER_BOX[3]) / 2 / 2400, 4))
    assert clear_action(env.interruption, on_banner) == on_banner  # type: ignore[arg-type]
    elsewhere = Action.swipe("up")
    assert clear_action(env.interruption, elsewhere) is elsewhere  # type: ignore[arg-type]
    env.step(Action(ActionKind.WAIT))
    env.step(Action(ActionKind.WAIT))
    assert env.interruption is not None
    env.step(Action(ActionKind.WAIT))
    assert env.interruption is None  # on screen for 3 steps
    env = interrupted(env, Interruption("banner", 1, 3, "Notes"))
    env.step(fab_tap(env))  # the FAB is not under the banner: the app answers
    assert env.phone.top.screen != "list" and env.interruption is not None  # type: ignore[union-attr]
    env.step(on_banner)
    assert env.interruption is None and env.phone.top.screen != "list"  # type: ignore[union-attr]


def test_a_loading_screen_ignores_taps_and_goes_away_with_time() -> None:
    env = a_quiet_notes_env()
    tap_fab = fab_tap(env)
    env = interrupted(env, Interruption("loading", 0, 2, "Notes"))
    assert [e.role for e in env.observe().elements] == ["status_bar", "progress"]
    env.step(tap_fab)
    assert env.interruption is not None and env.phone.top.screen == "list"  # type: ignore[union-attr]
    env.step(tap_fab)
    assert env.interruption is None and env.phone.top.screen == "list"  # type: ignore[union-attr]


# -- drift -------------------------------------------------------------------------------------------


def test_drift_moves_launcher_icons_keyboard_and_labels_and_experts_still_succeed(suite) -> None:  # type: ignore[no-untyped-def]
    drifted = MobileEnv(
        device=DeviceProfile("drift", list_order=1, keyboard=1, control_variant=1, scroll_offset=1)
    )
    stock = MobileEnv()
    task = spec("notes.create", 3)
    icons = [e.text for e in drifted.reset(options={"task": task})[0].elements if e.role == "icon"]
    assert sorted(icons) == sorted(
        e.text for e in stock.reset(options={"task": task})[0].elements if e.role == "icon"
    )
    assert icons != [e.text for e in stock.observe().elements if e.role == "icon"]
    _, trace, info = expert_episode(drifted, suite, task)
    assert info["success"] and info["perturbations"]["keyboard"] == 1
    buttons = {
        e.text
        for obs in [trace[0]] + [t[0] for t in trace[1:]]
        for e in obs.elements
        if e.role == "button"
    }
    assert "Add note" in buttons and "New note" not in buttons  # the B label variant
    keyboards = {e.bounds[1] for t in trace[1:] for e in t[0].elements if e.role == "keyboard"}
    assert keyboards == {round(1260 / 2400, 4)}
    scrolled = 0
    for template in (
        "contacts.favorite",
        "files.delete",
        "shop.buy",
        "mail.star",
        "messages.reply",
    ):
        _, _, info = expert_episode(drifted, suite, spec(template, 1))
        assert info["success"], template
        scrolled += info["perturbations"]["scroll_offset"]
    assert scrolled > 0


# -- experts and rates -----------------------------------------------------------------------------


def test_experts_succeed_through_every_kind_of_perturbation_at_realistic_rates(
    noisy_episodes,
) -> None:  # type: ignore[no-untyped-def]
    failed = [task.id for task, _, _, info in noisy_episodes if not info["success"]]
    assert not failed
    counts: Counter[str] = Counter()
    for *_, info in noisy_episodes:
        counts.update(info["perturbations"])
    assert all(counts[kind] > 0 for kind in KINDS), counts
    share = sum(any(info["perturbations"].values()) for *_, info in noisy_episodes) / len(
        noisy_episodes
    )
    assert 0.5 <= share <= 0.95
    # Interruptions are capped per episode, so every step limit holds room to dismiss them.
    assert (
        max(
            info["perturbations"]["banner"] + info["perturbations"]["ad"]
            for *_, info in noisy_episodes
        )
        <= 2
    )


def test_checkpoints_are_taken_at_perturbed_states_and_record_their_device(suite) -> None:  # type: ignore[no-untyped-def]
    tasks = [spec(t, s) for t in suite.trainable_templates()[:12] for s in range(3)]
    collection = collect_experts(lambda: MobileEnv(device="noisy"), suite, tasks, progress=False)
    assert collection.verified_rate == 1
    kinds = {"dialog", "image", "notification", "progress"}
    covered = [c for c in collection.store if {e.role for e in c.observation.elements} & kinds]
    assert covered and {c.device for c in collection.store} == {"noisy"}


# -- determinism: replays, branches, processes -------------------------------------------------------


def test_replaying_a_noisy_episodes_actions_reproduces_it_exactly(noisy_episodes) -> None:  # type: ignore[no-untyped-def]
    env = MobileEnv(device="noisy")
    perturbed = [
        e
        for e in noisy_episodes
        if any(
            v
            for k, v in e[3]["perturbations"].items()
            if k not in ("list_order", "keyboard", "control_variant")
        )
    ]
    assert len(perturbed) >= 20
    for task, actions, trace, info in perturbed:
        obs, _ = env.reset(options={"task": task})
        replayed = [obs] + [tuple(env.step(a)[:4]) for a in actions]
        assert replayed == trace and env.perturbations() == info["perturbations"], task.id


def test_a_branch_from_a_perturbed_state_continues_as_the_original(noisy_episodes) -> None:  # type: ignore[no-untyped-def]
    env, backend, checked = MobileEnv(device="noisy"), MemorySnapshots(), 0
    for task, actions, trace, _ in noisy_episodes:
        env.reset(options={"task": task})
        for t, action in enumerate(actions):
            if env.interruption is not None and t + 1 < len(actions):
                ref = backend.save(env, tuple(actions[:t]))
                for copy in (env.branch(env.get_state()), backend.restore(ref)):
                    assert [tuple(copy.step(a)[:4]) for a in actions[t:]] == trace[t + 1 :]
                checked += 1
                break
            env.step(action)
    assert checked >= 20


def test_draws_do_not_depend_on_the_process(noisy_episodes) -> None:  # type: ignore[no-untyped-def]
    code = (
        "import json; from adaroll.envs.mobile import MobileEnv, MobileTaskSuite; from adaroll.envs.base "
        "import TaskSpec, run_expert; e, s = MobileEnv(device='noisy'), MobileTaskSuite(); "
        "print(json.dumps([run_expert(e, s, TaskSpec('mobile', t, 0)) and e.perturbations() "
        "for t in s.trainable_templates()[:15]]))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
        env={**os.environ, "PYTHONHASHSEED": "12345"},
    )
    here = [info["perturbations"] for task, _, _, info in noisy_episodes if task.seed == 0][:15]
    assert json.loads(out.stdout) == here


# -- states stay on their device ----------------------------------------------------------------------


def test_states_and_checkpoints_do_not_move_between_devices(suite, tmp_path) -> None:  # type: ignore[no-untyped-def]
    noisy, clean = MobileEnv(device="noisy"), MobileEnv()
    noisy.reset(options={"task": spec("notes.create", 0)})
    clean.reset(options={"task": spec("notes.create", 0)})
    with pytest.raises(ValueError, match="made on device profile 'noisy'; this env runs 'clean'"):
        clean.set_state(noisy.get_state())
    with pytest.raises(ValueError, match="made on device profile 'clean'; this env runs 'noisy'"):
        noisy.branch(clean.get_state())
    store = collect_experts(MobileEnv, suite, [spec("notes.create", 0)], progress=False).store
    assert {c.device for c in store} == {"clean"}
    store.save(tmp_path / "c.jsonl")
    store = CheckpointStore.load(tmp_path / "c.jsonl")
    assert {c.device for c in store} == {"clean"}
    collector = Collector(
        GoPolicy(0.0), lambda: MobileEnv(device="noisy"), store, MemorySnapshots(), history_window=2
    )
    with pytest.raises(
        SnapshotError, match="recorded on device profile 'clean', this env runs 'noisy'"
    ):
        collector.cache.ref(store.for_task(spec("notes.create", 0).id)[1])
