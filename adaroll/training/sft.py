"""Behaviour cloning (SFT) on expert steps.

``train_sft`` minimises the mean cross-entropy ``-log pi(a_expert | context)`` over shuffled
minibatches with AdamW. It works with any :class:`~adaroll.policies.base.Policy` whose
``decision_log_probs`` accepts the expert's actions; when the policy has a
``represents(context, action)`` method (the small policy does), examples it cannot express are
skipped and counted instead of failing the run. The example order is drawn from ``seed`` alone,
so for the same starting policy and seed two runs produce the same parameters.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from typing import Any

import torch

from adaroll.actions import Action, ActionMatcher
from adaroll.policies.base import Context, Policy, SampledAction
from adaroll.progress_bar import progress_bar

STEP_MATCHER = ActionMatcher(text_mode="exact")
"""Step accuracy uses the paper's point/swipe/key rules but requires the exact typed text."""


def step_accuracy(
    policy: Policy,
    examples: Sequence[tuple[Context, Action]],
    *,
    matcher: ActionMatcher = STEP_MATCHER,
    batch_size: int = 256,
) -> float:
    """Share of examples where the policy's greedy action matches the expert's under
    ``matcher`` (NaN without examples)."""
    if not examples:
        return math.nan
    hits = 0
    for start in range(0, len(examples), batch_size):
        chunk = examples[start : start + batch_size]
        samples = policy.sample([c for c, _ in chunk], 1, greedy=True)
        for (_, expert), row in zip(chunk, samples, strict=True):
            got = row[0].action
            hits += int(got is not None and matcher(got, expert))
    return hits / len(examples)


def as_samples(actions: Sequence[Action]) -> list[SampledAction]:
    """Actions as samples the policy can score (log-prob placeholder 0, text from the action)."""
    return [SampledAction(a, 0.0, a.to_text()) for a in actions]


def train_sft(
    policy: Policy,
    examples: Sequence[tuple[Context, Action]],
    *,
    epochs: int,
    batch_size: int,
    lr: float,
    seed: int,
    progress: bool = True,
    weight_decay: float = 0.0,
    max_grad_norm: float | None = 1.0,
    eval_examples: Sequence[tuple[Context, Action]] | None = None,
    accuracy_sample: int = 2000,
    on_epoch: Callable[[int, dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Behaviour-clone ``policy`` in place on ``(context, expert action)`` pairs.

    Returns statistics: ``examples`` (used), ``skipped`` (not representable), ``steps``,
    ``epochs``, ``epoch_loss`` (mean NLL per epoch), ``loss_first``/``loss_last`` (first and
    last epoch), ``train_accuracy`` (greedy step accuracy on up to ``accuracy_sample`` training
    examples, a fixed subset), ``eval_accuracy`` (on ``eval_examples`` when given) and
    ``seconds``. ``on_epoch(epoch, stats)`` is called after every epoch (1-based), e.g. to
    evaluate intermediate policies; it must not consume the training's randomness (it cannot:
    the example order comes from a private generator).
    """
    if epochs < 0 or batch_size < 1 or lr <= 0:
        raise ValueError("need epochs >= 0, batch_size >= 1 and lr > 0")
    t0 = time.perf_counter()
    usable = [ex for ex in examples if policy.represents(ex[0], ex[1])]
    skipped = len(examples) - len(usable)
    stats: dict[str, Any] = {
        "examples": len(usable),
        "skipped": skipped,
        "epochs": epochs,
        "steps": 0,
        "epoch_loss": [],
    }
    gen = torch.Generator().manual_seed(seed)
    policy.train(True)
    if usable and epochs > 0:
        optimizer = torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=weight_decay)
        n_batches = math.ceil(len(usable) / batch_size)
        bar = progress_bar(total=epochs * n_batches, desc="sft", disable=not progress, leave=False)
        try:
            for _ in range(epochs):
                order = torch.randperm(len(usable), generator=gen).tolist()
                total, count = 0.0, 0
                for b in range(n_batches):
                    batch = [usable[i] for i in order[b * batch_size : (b + 1) * batch_size]]
                    contexts = [c for c, _ in batch]
                    lp = policy.log_prob(contexts, as_samples([a for _, a in batch]))
                    loss = -lp.mean()
                    optimizer.zero_grad(set_to_none=True)
                    loss.backward()
                    if max_grad_norm is not None:
                        torch.nn.utils.clip_grad_norm_(policy.parameters(), max_grad_norm)
                    optimizer.step()
                    total += float(loss.detach()) * len(batch)
                    count += len(batch)
                    stats["steps"] += 1
                    bar.update(1)
                    bar.set_postfix(loss=f"{total / count:.3f}")
                stats["epoch_loss"].append(total / max(count, 1))
                if on_epoch is not None:
                    policy.train(False)
                    on_epoch(len(stats["epoch_loss"]), stats)
                    policy.train(True)
        finally:
            bar.close()
    policy.train(False)
    losses = stats["epoch_loss"]
    stats["loss_first"] = losses[0] if losses else math.nan
    stats["loss_last"] = losses[-1] if losses else math.nan
    with torch.no_grad():
        stride = max(1, len(usable) // max(accuracy_sample, 1))
        stats["train_accuracy"] = step_accuracy(policy, usable[::stride][:accuracy_sample])
        if eval_examples is not None:
            stats["eval_accuracy"] = step_accuracy(policy, list(eval_examples))
    stats["seconds"] = time.perf_counter() - t0
    return stats
