"""Bad input and faults at the integration boundary (issue 30): an unknown checkpoint or one of
another device profile is a clear error naming both; an unsupported framework version fails
with the supported range; an env fault inside a TRL rollout is counted, its row re-queued and
never trained; starts open with AdaRoll's budgets and rewards on the real phone."""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import pytest

from adaroll.checkpoints import CheckpointStore
from adaroll.envs.base import EnvFault
from adaroll.envs.mobile.env import MobileEnv
from adaroll.integrations.rows import RowSession
from adaroll.integrations.trl import NOT_TRAINED, AdaRollTRL
from adaroll.integrations.versions import TRL_RANGE, VERL_RANGE, check_version
from adaroll.rollout.sessions import StartError, Starts
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.ledger import BILLED_PURPOSES, Ledger
from tests.integrations.scripted import (
    ScriptedPolicy,
    behaviour,
    configs,
    drive_like_grpo_trainer,
    scheduler,
)
from tests.real_mobile import HISTORY, MAKE_ENV, SUITE

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")


def make_starts(store: CheckpointStore, make_env=MAKE_ENV) -> Starts:
    return Starts(make_env, store, MemorySnapshots(), SUITE.split("train"), history_window=HISTORY)


def row(starts: Starts, kind: str, task_id: str, checkpoint_id: str | None = None) -> RowSession:
    """A framework sample of the named start, as the adapters open it."""
    job = starts.job(kind, task_id, checkpoint_id)
    return RowSession(job, starts.open(job), starts.history_window)


def test_unknown_checkpoint_names_the_row_task_and_the_checkpoint(mobile_store):
    starts = make_starts(mobile_store)
    task = mobile_store.task_ids()[0]
    with pytest.raises(
        StartError, match=rf"task '{task}'.*checkpoint '{task}@99'.*known: {task}@0"
    ):
        starts.job("suffix", task, f"{task}@99")
    with pytest.raises(StartError, match="start kind 'middle' is not one of onestep, suffix, root"):
        starts.job("middle", task, None)
    with pytest.raises(StartError, match="task 'mobile:nope:1'"):
        starts.job("root", "mobile:nope:1")
    starts.close()


def test_checkpoint_of_another_device_profile_names_both(mobile_store):
    noisy = CheckpointStore(dataclasses.replace(c, device="noisy") for c in mobile_store)
    starts = make_starts(noisy)
    checkpoint = next(iter(noisy))
    with pytest.raises(
        StartError, match=rf"{checkpoint.id}.*device profile 'noisy'.*runs device profile 'clean'"
    ):
        starts.job("suffix", checkpoint.task.id, checkpoint.id)
    starts.close()


def test_versions_outside_the_supported_range_fail_with_the_range():
    with pytest.raises(ImportError, match=r"trl>=1\.16,<2; trl 0\.29\.0 is installed"):
        check_version("trl", "0.29.0", TRL_RANGE)
    with pytest.raises(ImportError, match=r"verl>=0\.7\.1,<0\.8; verl 0\.9\.1 is installed"):
        check_version("verl", "0.9.1", VERL_RANGE)
    check_version("trl", "1.16.0", TRL_RANGE)
    check_version("verl", "0.7.1", VERL_RANGE)


def test_sessions_follow_the_start_kind(mobile_store):
    starts = make_starts(mobile_store)
    checkpoint = mobile_store.for_task(mobile_store.task_ids()[0])[1]
    local = row(starts, "onestep", checkpoint.task.id, checkpoint.id)
    assert local.steps_left == 1 and local.session.env is None
    local.act(checkpoint.expert_action.to_text())
    assert local.session.done and local.reward() == 1.0
    assert local.cost.env_steps == 0 and local.steps_left == 0
    suffix = row(starts, "suffix", checkpoint.task.id, checkpoint.id)
    assert suffix.cost.restores == 1 and suffix.session.history == list(checkpoint.history)
    observation = suffix.session.observation
    assert observation.element_tree_hash() == checkpoint.observation.element_tree_hash()
    for c in mobile_store.for_task(checkpoint.task.id)[1:]:  # the expert's remaining actions
        suffix.act(c.expert_action.to_text())
    assert suffix.session.done and suffix.session.success and suffix.reward() == 1.0
    assert suffix.cost.env_steps == checkpoint.trajectory_length - checkpoint.step
    root = row(starts, "root", checkpoint.task.id)
    assert root.steps_left > 1 and root.session.history == []
    root.act("not an action")
    assert root.session.done and root.reward() == 0.0 and root.cost.invalid_samples == 1
    assert starts.builds.take_overhead() == len(checkpoint.history)  # one snapshot, by replay
    starts.close()


class FlakyPhone(MobileEnv):
    """The real phone, whose next ``faults`` steps crash."""

    faults = 0

    def step(self, action):
        if FlakyPhone.faults > 0:
            FlakyPhone.faults -= 1
            raise EnvFault("simulated crash of the phone process")
        return super().step(action)


def test_env_fault_in_a_trl_rollout_is_counted_requeued_and_never_trained(
    tmp_path: Path, mobile_store
):
    cfg = configs(0.0)
    G = cfg.grpo.group_size
    starts = make_starts(mobile_store, make_env=FlakyPhone)
    hub = AdaRollTRL(
        scheduler(cfg, mobile_store), starts, Ledger(tmp_path / "l.jsonl"), num_generations=G
    )
    given: list[list[float]] = []
    reward = hub.reward
    hub.reward = lambda c, e, **kw: given.append(reward(c, e, **kw)) or given[-1]  # type: ignore[method-assign]
    FlakyPhone.faults = 1
    drive_like_grpo_trainer(
        hub, ScriptedPolicy(mobile_store, behaviour(mobile_store)), rows_per_batch=1, iterations=1
    )
    assert FlakyPhone.faults == 0 and hub.feed.faults == 1
    first = hub.feed.plans[0][0]
    # the first row (the first task's routing probes) faulted: constant rewards, then re-run
    assert given[0] == [NOT_TRAINED] * G and len(given) == len(hub.feed.plans[0]) + 1
    records = [r for r in hub.ledger if r.purpose == "routing"]
    assert [r.task_id for r in records] == [j.task.id for j in hub.feed.plans[0]]
    faulted = next(r for r in records if r.task_id == first.task.id)
    assert faulted.faults == 1 and faulted.training_samples == 0
    assert faulted.policy_samples > G  # the failed attempt's samples stay on the bill
    assert sum(r.faults for r in records) == 1
    assert hub.sessions_opened["root"] == (len(hub.feed.plans[0]) + 1) * G
    hub.close()


class PairedRestores(MemorySnapshots):
    """Memory snapshots whose first two restores each wait for the other: they pass only when
    two restores are in flight at once (serial restores break the barrier)."""

    def __init__(self) -> None:
        super().__init__()
        self.barrier = threading.Barrier(2, timeout=20)
        self.restores = 0

    def restore(self, ref):
        self.restores += 1
        if self.restores <= 2:
            self.barrier.wait()
        return super().restore(ref)


def test_suffix_branches_are_restored_ahead_and_in_parallel(tmp_path: Path, mobile_store):
    backend = PairedRestores()
    backend.max_restores = 2
    starts = Starts(MAKE_ENV, mobile_store, backend, SUITE.split("train"), history_window=HISTORY)
    checkpoint = mobile_store.for_task(mobile_store.task_ids()[0])[-1]
    job = starts.job("suffix", checkpoint.task.id, checkpoint.id, group_size=2)
    starts.prefetch(job)  # what the feed does as soon as a Suffix group is planned
    sessions = [starts.open(job) for _ in range(2)]
    assert not backend.barrier.broken and starts.prefetcher.taken == 2
    assert all(s.cost.restores == 1 and s.fault is None for s in sessions)
    starts.close()


def test_static_start_rows_are_validated_opened_and_billed(tmp_path: Path, mobile_store):
    starts = make_starts(mobile_store)
    hub = AdaRollTRL(None, starts, Ledger(tmp_path / "l.jsonl"), num_generations=2)
    checkpoint = mobile_store.for_task(mobile_store.task_ids()[0])[-1]
    row = {
        "prompt": [],
        "kind": "suffix",
        "task_id": checkpoint.task.id,
        "checkpoint_id": checkpoint.id,
    }
    envs = [hub.environment_factory() for _ in range(2)]
    assert all("Previous actions" in env.reset(**row) for env in envs)
    envs[0].act(checkpoint.expert_action.to_text())  # the last expert action: success
    envs[1].act("done()")
    assert hub.reward([[{"role": "assistant", "content": ""}]] * 2, envs) == [1.0, 0.0]
    # billed by the trainer's writer: the image built for the rows (overhead) and the group,
    # which pays for that build at the checkpoint's first use
    built, record = list(hub.ledger)
    prefix = len(checkpoint.history)
    assert (built.mode, built.purpose, built.replayed_steps) == ("suffix", "overhead", prefix)
    assert (record.mode, record.restores, record.env_steps, record.training_samples) == (
        "suffix",
        2,
        2,
        2,
    )
    assert record.replayed_steps == prefix and record.iteration is None
    with pytest.raises(StartError, match="neither 'adaroll_slot' nor a start"):
        envs[0].reset(prompt=[])
    hub.close()


def test_without_the_barrier_batches_are_full_and_every_group_is_billed(
    tmp_path: Path, mobile_store
):
    cfg = configs(0.0)
    G = cfg.grpo.group_size
    hub = AdaRollTRL(
        scheduler(cfg, mobile_store),
        make_starts(mobile_store),
        Ledger(tmp_path / "l.jsonl"),
        num_generations=G,
        barrier=False,
    )
    drive_like_grpo_trainer(
        hub, ScriptedPolicy(mobile_store, behaviour(mobile_store)), rows_per_batch=4, iterations=2
    )
    assert hub.feed.idle_rows == 0 and not [
        r for r in hub.ledger if r.purpose == "overhead" and r.policy_samples
    ]
    # iteration 2 was planned before iteration 1 was observed: all its tasks still probe routing
    assert [j.purpose for j in hub.feed.plans[1]] == ["routing"] * len(hub.feed.plans[1])
    billed = [r for r in hub.ledger if r.purpose in BILLED_PURPOSES]
    assert sorted({r.iteration for r in billed}) == list(range(1, hub.feed.finished + 1))
    hub.close()
