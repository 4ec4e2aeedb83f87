"""Finding an adapter: by name, import path or file path; a module that cannot be imported, a
held-out template that is no template and other bad env.options are errors naming env.options
and what to do; the Taxi example's success hook and state copies."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.actions import Action
from adaroll.config import ConfigError
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import TaskSpec
from adaroll.envs.gymnasium import TaxiAdapter, resolve_adapter

CLIFFS = Path(__file__).with_name("cliffs.py")


def test_an_adapter_loads_from_a_file_path_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(CLIFFS.parent)
    first = resolve_adapter("cliffs.py:NaiveCliffAdapter")
    again = resolve_adapter(f"{CLIFFS}:NaiveCliffAdapter")
    assert type(first) is type(again) and first.templates() == ["cliff"]
    env = make_env_factory(
        "gymnasium", id="CliffWalking-v1", adapter=f"{CLIFFS}:NaiveCliffAdapter"
    )()
    obs, _ = env.reset(options={"task": TaskSpec("gymnasium", "cliff", 0)})
    assert len(obs.elements) == 48


def test_a_module_that_cannot_be_imported_says_how_to_make_it_importable() -> None:
    with pytest.raises(ConfigError) as err:
        get_suite("gymnasium", {"id": "FrozenLake-v1", "adapter": "myenvs:Lake"})
    text = str(err.value)
    assert text.startswith(
        "gymnasium environment (env.options): adapter 'myenvs:Lake' cannot be imported"
    )
    assert "pip install -e" in text and "PYTHONPATH" in text and "path/to/file.py:Class" in text
    with pytest.raises(ConfigError, match=r"env.options\).*no file .*missing.py"):
        get_suite("gymnasium", {"id": "FrozenLake-v1", "adapter": "missing.py:Lake"})


def test_bad_adapter_options_and_held_out_templates_name_env_options() -> None:
    with pytest.raises(
        ConfigError,
        match=r"^gymnasium environment \(env.options\): adapter 'taxi': bad adapter_options",
    ):
        get_suite("gymnasium", {"id": "Taxi-v4", "adapter": "taxi", "adapter_options": {"size": 3}})
    with pytest.raises(
        ConfigError, match=r"held-out templates \['taxi-snowy'\] are not among its templates\(\)"
    ):
        get_suite(
            "gymnasium",
            {"id": "Taxi-v4", "adapter": "taxi", "adapter_options": {"heldout": ["taxi-snowy"]}},
        )
    with pytest.raises(
        ConfigError, match=r"unknown gymnasium task suite \(env.suite_options\) option\(s\) n_tasks"
    ):
        get_suite("gymnasium", {"id": "Taxi-v4", "adapter": "taxi"}, n_tasks=3)


def test_taxi_succeeds_only_by_delivering_and_copies_its_state() -> None:
    make = make_env_factory("gymnasium", id="Taxi-v4", adapter="taxi")
    suite = get_suite("gymnasium", {"id": "Taxi-v4", "adapter": "taxi"})
    assert suite.heldout_templates() == ["taxi-rainy"] and isinstance(suite.adapter, TaxiAdapter)
    env = make()
    task = TaskSpec("gymnasium", "taxi", 5)
    env.reset(options={"task": task})
    _, reward, terminated, _, info = env.step(Action.press("space"))  # a drop-off with no one: -10
    assert (reward, terminated, info["env_reward"]) == (0.0, False, -10.0)
    state = env.get_state()
    rewards = []
    while True:
        _, reward, terminated, truncated, info = env.step(suite.expert_action(env))
        rewards.append(info["env_reward"])
        if terminated or truncated:
            break
    assert info["success"] and reward == 1.0 and rewards[-1] == 20.0 and set(rewards[:-1]) == {-1.0}
    branch = env.branch(state)  # the memory backend's restore: back before the delivery
    assert branch.steps_taken == 1 and not branch.observe() == env.observe()
    assert branch.step(suite.expert_action(branch))[4]["env_reward"] == rewards[0]


def test_an_adapter_error_is_one_line_and_debug_shows_the_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    malformed = "{id: FrozenLake-v1, adapter: tests.envs.gymnasium.lakes:MalformedLakeAdapter}"
    cmd = [sys.executable, "-m", "adaroll", "experts", "collect", "--out", str(tmp_path / "r")]
    sets = ["--set", "env.name=gymnasium", "--set", f"env.options={malformed}"]
    root = Path(__file__).resolve().parents[3]
    done = subprocess.run([*cmd, *sets], capture_output=True, text=True, timeout=300, cwd=root)
    assert done.returncode == 2
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in done.stderr
    assert errors[0].startswith("error: gymnasium env FrozenLake-v1 (task gymnasium:lake-")
    assert "the adapter returned a malformed observation: elements[0].bounds" in errors[0]
    assert errors[0].endswith("(--debug shows the traceback)")
    debug = subprocess.run(
        [*cmd, *sets, "--debug"], capture_output=True, text=True, timeout=300, cwd=root
    )
    assert debug.returncode != 0 and "Traceback" in debug.stderr and "AdapterError" in debug.stderr
