"""The real mobile env at test size, shared by the tests that drive real components through a
loop (trainer, Ray workers): a tiny suite, and (as fixtures in tests/conftest.py) its verified
expert checkpoints and a small policy behaviour-cloned on them."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from adaroll.actions import Action
from adaroll.checkpoints import CheckpointStore
from adaroll.config import PolicyConfig
from adaroll.envs import get_suite, make_env_factory
from adaroll.experts import collect_experts
from adaroll.policies import make_policy
from adaroll.policies.base import Context, Policy
from adaroll.training.pipeline import sft_examples
from adaroll.training.sft import train_sft

SUITE = get_suite("mobile", n_train=3, n_val=2, n_heldout=0, n_heldout_templates=0, n_pretrain=0)
"""Three train tasks (three templates), two val tasks, no other split."""
MAKE_ENV = make_env_factory("mobile")
HISTORY = 2
"""Actions of history the policies see."""


def verified_store() -> CheckpointStore:
    """The checkpoints of the scripted experts on the train split (every run verified)."""
    collection = collect_experts(MAKE_ENV, SUITE, SUITE.split("train"), progress=False)
    assert collection.verified_rate == 1.0
    return collection.store


def small_policy(seed: int) -> Policy:
    return make_policy(PolicyConfig(history=HISTORY), seed=seed, hints=SUITE.policy_hints())


def examples(store: CheckpointStore) -> list[tuple[Context, Action]]:
    """(context, expert action) of every checkpoint, as the pipeline's SFT sees them."""
    return sft_examples(store, HISTORY)


def saved_clone(
    policy: Policy, demos: Sequence[tuple[Context, Action]], path: Path, **sft: Any
) -> Path:
    """``policy`` behaviour-cloned on ``demos`` (``sft``: epochs, batch_size, lr), saved at
    ``path``: a start policy that every run of a test loads afresh."""
    train_sft(policy, demos, seed=0, progress=False, **sft)
    policy.save(path)
    return path
