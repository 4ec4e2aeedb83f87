"""The feed behind a framework's rows (adaroll/integrations/feed.py), driven directly: slots bind
lazily to the scheduler's jobs, idle rows fill a batch at the iteration barrier, a faulted group
is re-queued under AdaRoll's retry rule (and fails the run past it), and a finished iteration is
billed by the one bill writer, failed attempts included."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.checkpoints import CheckpointStore
from adaroll.config import GRPOConfig, SchedulerConfig
from adaroll.experts import collect_experts
from adaroll.integrations.feed import ScheduleFeed
from adaroll.rollout.jobs import Cost, RolloutFailed
from adaroll.rollout.sessions import Starts
from adaroll.routes import StartKind
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import VanillaScheduler
from tests.fakes import LineEnv, LineSuite

SUITE = LineSuite()


@pytest.fixture(scope="module")
def line_store() -> CheckpointStore:
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def feed(store, path: Path, *, max_retries: int = 3) -> ScheduleFeed:
    tasks = SUITE.split("train")[:1]
    scheduler = VanillaScheduler(
        tasks, SchedulerConfig(tasks_per_iteration=1), GRPOConfig(group_size=2)
    )
    starts = Starts(LineEnv, store, MemorySnapshots(), tasks)
    return ScheduleFeed(scheduler, Ledger(path), starts, group_size=2, max_retries=max_retries)


def test_rows_bind_lazily_idle_at_the_barrier_and_bill_failed_attempts(line_store, tmp_path):
    f = feed(line_store, tmp_path / "ledger.jsonl")
    first = f.bind(0)
    assert first.job is not None and first.job.kind is StartKind.ROOT and f.iteration == 1
    assert f.bind(0) is first  # a slot keeps its job
    idle = f.bind(1)  # iteration 1 is all handed out and not reported: an idle row
    assert idle.job is None and f.idle_rows == 1
    f.report(1, [0.0, 0.0], Cost(policy_samples=2), [0, 0])
    f.report(0, [0.0, 0.0], Cost(policy_samples=2, env_steps=3, faults=1), [1, 1], faulted=True)
    again = f.bind(2)  # the faulted job comes back first
    assert again.job == first.job and f.faults == 1
    f.report(2, [1.0, 0.0], Cost(policy_samples=2, env_steps=4), [2, 1])
    assert f.finished == 1
    overhead, group = f.ledger.records
    assert (overhead.mode, overhead.purpose, overhead.policy_samples) == ("onestep", "overhead", 2)
    assert (group.mode, group.purpose, group.iteration) == ("vanilla", "train", 1)
    assert (group.policy_samples, group.env_steps, group.faults) == (4, 7, 1)
    assert group.training_samples == 3  # the decisions of a group whose rewards differ


def test_a_group_that_keeps_faulting_fails_under_the_retry_rule(line_store, tmp_path):
    f = feed(line_store, tmp_path / "ledger.jsonl", max_retries=1)
    f.bind(0)
    f.report(0, [0.0, 0.0], Cost(faults=1), [1, 1], faulted=True)
    f.bind(1)
    with pytest.raises(RolloutFailed, match=r"failed on 2 attempt\(s\)"):
        f.report(1, [0.0, 0.0], Cost(faults=1), [1, 1], faulted=True)
