"""Behaviour cloning: learns a text-matching GUI task that generalises to unseen names."""

from __future__ import annotations

import math

import pytest
import torch

from adaroll.actions import Action
from adaroll.policies.small import SmallPolicy, SmallPolicyConfig
from adaroll.training.sft import step_accuracy, train_sft
from tests.policies.synthetic import TEMPLATES, make_examples, name_pool

KINDS = ("tap", "swipe", "type", "key", "done")


pytestmark = pytest.mark.usefixtures("one_torch_thread")


def policy(seed: int = 0, dim: int = 32) -> SmallPolicy:
    return SmallPolicy(
        SmallPolicyConfig(dim=dim, heads=4, hash_buckets=8192, kinds=KINDS, seed=seed)
    )


def test_sft_learns_and_generalises_to_held_out_names() -> None:
    train = make_examples(0, 600, name_pool(0))
    heldout = make_examples(1, 300, name_pool(1))  # names never seen in training
    assert not {c.instruction for c, _ in train} & {c.instruction for c, _ in heldout}
    p = policy()
    before = step_accuracy(p, heldout)
    stats = train_sft(
        p, train, epochs=3, batch_size=32, lr=3e-3, seed=0, progress=False, eval_examples=heldout
    )
    assert stats["examples"] == 600 and stats["skipped"] == 0
    assert stats["steps"] == 3 * math.ceil(600 / 32)
    assert stats["loss_last"] < 0.5 * stats["loss_first"]
    # chance is about 1/8 for the pointer alone; every template needs its own matching rule
    assert before <= 0.3  # e.g. always "swipe up" scores 1/5
    assert stats["eval_accuracy"] >= 0.85, stats
    for template in TEMPLATES:
        acc = step_accuracy(p, make_examples(2, 60, name_pool(1), (template,)))
        assert acc >= 0.7, (template, acc)


def test_sft_is_deterministic_for_a_seed() -> None:
    data = make_examples(0, 64, name_pool(0))
    results = []
    for _ in range(2):
        p = policy(seed=3, dim=16)
        stats = train_sft(p, data, epochs=2, batch_size=16, lr=1e-2, seed=11, progress=False)
        results.append((stats["epoch_loss"], [t.detach().clone() for t in p.parameters()]))
    assert results[0][0] == results[1][0]
    assert all(torch.equal(a, b) for a, b in zip(results[0][1], results[1][1], strict=True))
    p = policy(seed=3, dim=16)
    other = train_sft(p, data, epochs=2, batch_size=16, lr=1e-2, seed=12, progress=False)
    assert other["epoch_loss"] != results[0][0]  # another shuffle


def test_sft_skips_unrepresentable_examples_and_validates_arguments() -> None:
    data = make_examples(0, 10, name_pool(0))
    ctx = data[0][0]
    data = data + [(ctx, Action.press("volume_up")), (ctx, Action.press("back"))]
    p = policy(dim=16)
    stats = train_sft(p, data, epochs=1, batch_size=4, lr=1e-3, seed=0, progress=False)
    assert stats["skipped"] == 1 and stats["examples"] == 11  # back is a configured key
    assert 0.0 <= stats["train_accuracy"] <= 1.0
    seen: list[int] = []
    train_sft(
        p,
        data,
        epochs=2,
        batch_size=8,
        lr=1e-3,
        seed=0,
        progress=False,
        on_epoch=lambda epoch, stats: seen.append(len(stats["epoch_loss"]) * 10 + epoch),
    )
    assert seen == [11, 22]
    zero = train_sft(p, data, epochs=0, batch_size=4, lr=1e-3, seed=0, progress=False)
    assert zero["steps"] == 0 and math.isnan(zero["loss_last"])
    with pytest.raises(ValueError):
        train_sft(p, data, epochs=1, batch_size=0, lr=1e-3, seed=0, progress=False)
    assert math.isnan(step_accuracy(p, []))
