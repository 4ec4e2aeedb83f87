"""The ``hf`` policy (a tiny Qwen2 built in-process: no download) driven by the real collector
and trainer on the embedded mobile env: OneStep and Root groups for two iterations change its
weights, the ledger bills exactly the groups collected, and a run killed after iteration 1
resumes to the uninterrupted run's weights, bill and metrics.

These tests import transformers unconditionally: without the ``llm`` extra they fail, they do
not skip."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
import transformers  # noqa: F401 - a missing `llm` extra must fail this module, not skip it

from adaroll.checkpoints import Checkpoint, CheckpointStore
from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, TrainConfig
from adaroll.policies.hf import HFPolicy
from adaroll.rollout.jobs import Job
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.trainer import Trainer
from tests.real_mobile import HISTORY, MAKE_ENV, SUITE, examples, saved_clone
from tests.training import runs

ITERATIONS = 2
# Full fine-tuning: the tiny model's LoRA adapter cannot make its (frozen, random) output layer
# peak on any token, so a LoRA policy never emits a valid action and its groups never differ.
OPTIONS = {
    "tiny": True,
    "lora": False,
    "max_new_tokens": 16,
    "history_len": HISTORY,
    "max_elements": 20,
}

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")


def first(store: CheckpointStore) -> Checkpoint:
    """The store's first checkpoint (the start of its first expert run)."""
    return next(iter(store))


@pytest.fixture(scope="module")
def start(tmp_path_factory: pytest.TempPathFactory, mobile_store) -> Path:
    """The random tiny model taught the expert's action at the first checkpoint, 30 SFT steps:
    half way to imitating it, the model emits it on about half its samples, so the rewards of
    a OneStep group there (a match with the expert's action) differ."""
    return saved_clone(
        HFPolicy(seed=0, **OPTIONS),
        examples(CheckpointStore([first(mobile_store)])),
        tmp_path_factory.mktemp("hf-start"),
        epochs=30,
        batch_size=1,
        lr=5e-3,
    )


def make_trainer(directory: Path, store, policy: HFPolicy) -> Trainer:
    start = first(store)
    jobs = [Job("onestep", start.task, 8, checkpoint_id=start.id), Job("root", start.task, 4)]
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=ITERATIONS),
        grpo=GRPOConfig(lr=1e-3),
        eval=EvalConfig(k=1, every=None, final_splits=("val",)),
    )
    collector = runs.RecordingCollector(
        policy, MAKE_ENV, store, MemorySnapshots(), history_window=HISTORY
    )
    return Trainer(
        "hf",
        directory,
        cfg,
        policy,
        runs.FixedJobs(jobs),
        collector,
        MAKE_ENV,
        {"val": SUITE.split("val")},
        seed=2,
        history_window=HISTORY,
        progress=False,
    )


@pytest.fixture(scope="module")
def straight(tmp_path_factory: pytest.TempPathFactory, mobile_store, start: Path) -> Trainer:
    trainer = make_trainer(
        tmp_path_factory.mktemp("hf-straight"), mobile_store, HFPolicy.load(start)
    )
    trainer.train()
    return trainer


def test_hf_policy_trains_on_onestep_and_root_groups(straight: Trainer, start: Path) -> None:
    groups = runs.recorded(straight)
    assert [g.job.kind for g in groups] == ["onestep", "root"] * ITERATIONS
    runs.assert_ledger_matches_groups(straight, groups)
    assert any(len(set(g.rewards)) > 1 for g in groups if g.job.kind == "onestep")
    assert sum(g.cost.env_steps for g in groups if g.job.kind == "root") > 0
    assert straight.ledger.totals(mode="root").records == ITERATIONS
    assert straight.ledger.training_cost().training_samples > 0
    before, after = HFPolicy.load(start).state_dict(), straight.policy.state_dict()
    assert any(not torch.equal(before[k], after[k]) for k in before)


def test_hf_run_killed_after_iteration_1_resumes_to_the_uninterrupted_run(
    straight: Trainer, mobile_store, start: Path, tmp_path: Path
) -> None:
    runs.killed_at(make_trainer(tmp_path, mobile_store, HFPolicy.load(start)), 2)
    resumed = make_trainer(
        tmp_path, mobile_store, HFPolicy(seed=7, **OPTIONS)
    )  # other weights, replaced on resume
    resumed.train(resume=True)
    assert [g.job.kind for g in runs.recorded(resumed)] == ["onestep", "root"]  # iteration 2 only
    runs.assert_same_run(resumed, straight)
