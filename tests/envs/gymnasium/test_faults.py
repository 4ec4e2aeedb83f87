"""Bad input on the gymnasium env: a Gymnasium env that raises mid-episode and an adapter that
returns a malformed observation become env faults naming env and task; the local collector
counts them and re-runs the group (a faulted group never reaches an update)."""

from __future__ import annotations

import pytest

from adaroll.actions import Action
from adaroll.config import PolicyConfig
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import EnvFault, Observation, TaskSpec, UIElement
from adaroll.envs.gymnasium.adapter import AdapterError, check_observation
from adaroll.experts import collect_experts
from adaroll.policies import make_policy
from adaroll.rollout.collector import Collector
from adaroll.rollout.jobs import Group, Job, RolloutFailed
from adaroll.snapshots.memory import MemorySnapshots
from tests.envs.gymnasium.lakes import FLAKY_ID, FlakyLake

FLAKY = {"id": FLAKY_ID, "adapter": "frozen_lake"}
MALFORMED = {"id": "FrozenLake-v1", "adapter": "tests.envs.gymnasium.lakes:MalformedLakeAdapter"}
TASK = TaskSpec("gymnasium", "lake-5x5", 1)
WHERE = r"gymnasium env tests/FlakyLake-v0 \(task gymnasium:lake-5x5#1, adapter frozen_lake\)"


def test_an_env_that_raises_mid_episode_is_an_env_fault_naming_env_and_task() -> None:
    env = make_env_factory("gymnasium", **FLAKY)()
    FlakyLake.arm(2)
    env.reset(options={"task": TASK})
    env.step(Action.press("up"))  # bumps into the edge: the episode goes on
    with pytest.raises(
        EnvFault, match=WHERE + r": step raised ConnectionError: lake server went away"
    ):
        env.step(Action.press("left"))
    assert env.fault is not None
    with pytest.raises(EnvFault, match="lake server went away"):  # broken for good: replace it
        env.reset(options={"task": TASK})


def test_a_malformed_observation_is_an_adapter_fault_naming_env_task_and_field() -> None:
    env = make_env_factory("gymnasium", **MALFORMED)()
    env.reset(options={"task": TASK})  # well-formed at the start
    with pytest.raises(
        AdapterError,
        match=r"gymnasium env FrozenLake-v1 \(task gymnasium:lake-5x5#1, adapter "
        r"tests.envs.gymnasium.lakes:MalformedLakeAdapter\): the adapter returned a malformed "
        r"observation: elements\[0\].bounds must be",
    ):
        for move in ("right", "down", "right", "down"):
            env.step(Action.press(move))


def el(i: int = 0, **kw) -> UIElement:
    fields = {
        "id": i,
        "role": "tile",
        "text": "ice",
        "bounds": (0.0, 0.0, 0.5, 0.5),
        "flags": frozenset(),
    } | kw
    return UIElement(**fields)


@pytest.mark.parametrize(
    ("obs", "what"),
    [
        ("tiles", "expected an adaroll Observation, got str"),
        (Observation([el()], (64, 64)), "elements must be a tuple"),  # type: ignore[arg-type]
        (Observation((el(), el()), (64, 64)), r"elements\[1\].id must be a unique"),
        (
            Observation((el(id=-1),), (64, 64)),
            r"elements\[0\].id must be a unique non-negative int",
        ),
        (Observation((el(text=3),), (64, 64)), r"elements\[0\].text must be a str"),
        (Observation((el(bounds=(0.6, 0.0, 0.5, 0.5)),), (64, 64)), r"elements\[0\].bounds"),
        (
            Observation((el(bounds=(0.0, 0.0, float("nan"), 0.5)),), (64, 64)),
            r"elements\[0\].bounds",
        ),
        (Observation((el(flags=frozenset({"agent"})),), (64, 64)), r"elements\[0\].flags"),
        (Observation((el(),), (64, 0)), "screen_size must be two positive ints"),
    ],
)
def test_check_observation_names_what_is_malformed(obs, what: str) -> None:
    with pytest.raises(
        AdapterError,
        match=r"^env X \(task T\): the adapter returned a malformed observation: " + what,
    ):
        check_observation(obs, "env X (task T)")


@pytest.fixture(scope="module")
def flaky_setup():
    make_env = make_env_factory("gymnasium", **FLAKY)
    suite = get_suite("gymnasium", FLAKY, n_train=2)
    FlakyLake.arm()
    store = collect_experts(make_env, suite, suite.split("train"), progress=False).store
    policy = make_policy(PolicyConfig(), seed=0, hints=suite.policy_hints())
    return make_env, suite, store, policy


def jobs(suite, store) -> list[Job]:
    out = []
    for t in suite.split("train"):
        out += [Job("root", t, 3), Job("suffix", t, 3, checkpoint_id=store.for_task(t.id)[1].id)]
    return out


def outcome(group: Group) -> tuple:
    return (
        group.job,
        tuple(tuple(d.sample.action for d in s) for s in group.decisions),
        tuple(group.rewards),
    )


def test_the_collector_counts_a_mid_episode_fault_and_reruns_its_group(
    flaky_setup, one_torch_thread
) -> None:
    make_env, suite, store, policy = flaky_setup
    work = jobs(suite, store)
    FlakyLake.arm()
    clean = Collector(policy, make_env, store, MemorySnapshots(), history_window=2).collect(
        work, seed=7
    )
    assert FlakyLake.steps > 6
    FlakyLake.arm(3, FlakyLake.steps // 2)  # two faults: early and mid-collection
    faulty = Collector(policy, make_env, store, MemorySnapshots(), history_window=2)
    groups = faulty.collect(work, seed=7)
    assert [outcome(g) for g in groups] == [outcome(g) for g in clean]
    assert sum(g.cost.faults for g in groups) == faulty.stats["faults"] == 2
    assert faulty.stats["replaced_envs"] == 2


def test_a_malformed_observation_mid_rollout_fails_the_group_after_its_retries(
    flaky_setup, one_torch_thread
) -> None:
    _, suite, store, policy = flaky_setup
    make_env = make_env_factory("gymnasium", **MALFORMED)
    job = Job("root", TaskSpec("gymnasium", "lake-4x4", 0), 2)  # each episode leaves the start
    collector = Collector(
        policy, make_env, store, MemorySnapshots(), history_window=2, max_retries=1
    )
    with pytest.raises(
        RolloutFailed, match=r"failed on 2 attempt\(s\); last: .*malformed observation"
    ):
        collector.collect([job], seed=0)
    assert collector.stats["faults"] == 2
