"""One GRPO policy update from collected groups (the math lives in :mod:`adaroll.algos.grpo`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from adaroll.algos import grpo
from adaroll.config import GRPOConfig
from adaroll.policies.base import Context, Policy, SampledAction
from adaroll.rollout.jobs import Group


@dataclass(frozen=True)
class UpdateResult:
    training_samples: dict[int, int]
    """Decisions that entered the update, per group index (0 for skipped groups)."""
    loss: float
    groups_used: int
    groups_skipped: int
    stats: dict[str, float]


def grpo_update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    groups: Sequence[Group],
    cfg: GRPOConfig,
    reference: Policy | None = None,
) -> UpdateResult:
    """Group-normalise rewards, drop zero-variance groups, take ``ppo_epochs`` clipped steps
    on every decision of every remaining sample (each decision gets its sample's advantage)."""
    contexts: list[Context] = []
    samples: list[SampledAction] = []
    advantages: list[float] = []
    used: dict[int, int] = {}
    skipped = 0
    for g, group in enumerate(groups):
        if group.job.purpose != "train":
            continue
        rewards = torch.tensor([group.rewards], dtype=torch.float32)
        if bool(grpo.zero_variance_groups(rewards)[0]):
            skipped += 1
            used[g] = 0
            continue
        adv = grpo.group_advantages(rewards, normalize_std=cfg.normalize_std)[0]
        count = 0
        for decisions, a in zip(group.decisions, adv.tolist(), strict=True):
            for d in decisions:
                contexts.append(d.context)
                samples.append(d.sample)
                advantages.append(a)
                count += 1
        used[g] = count
    if not samples:
        return UpdateResult(used, 0.0, 0, skipped, {})

    adv_t = torch.tensor(advantages, dtype=torch.float32)
    chunks = [slice(i, i + cfg.micro_batch) for i in range(0, len(samples), cfg.micro_batch)]
    # Samples were drawn by the current weights (nothing updated since), so a no-grad forward
    # gives the exact per-factor behaviour log-probs that the sampler summed.
    with torch.no_grad():
        old = [policy.decision_log_probs(contexts[c], samples[c]) for c in chunks]
        ref = ([reference.decision_log_probs(contexts[c], samples[c])[0] for c in chunks]
               if reference is not None and cfg.kl_coef > 0 else None)  # fmt: skip
    # Each micro-batch's mean loss is weighted by its share of the aggregation's denominator,
    # so accumulated gradients equal those of one pass over everything.
    weights = [grpo.LOSS_AGGREGATIONS.get(cfg.aggregation).weight(m) for _, m in old]
    total = sum(weights) or 1.0
    policy.train(True)
    loss_value, stats = 0.0, dict[str, float]()
    for _ in range(cfg.ppo_epochs):
        optimizer.zero_grad()
        loss_value = 0.0
        for k, c in enumerate(chunks):
            logp, mask = policy.decision_log_probs(contexts[c], samples[c])
            loss, stats = grpo.grpo_loss(
                logp, old[k][0], adv_t[c], mask, clip_low=cfg.clip_eps, kl_coef=cfg.kl_coef,
                ref_log_probs=ref[k] if ref is not None else None, aggregation=cfg.aggregation,
            )  # fmt: skip
            (loss * (weights[k] / total)).backward()
            loss_value += float(loss.detach()) * weights[k] / total
        torch.nn.utils.clip_grad_norm_(list(policy.parameters()), cfg.max_grad_norm)
        optimizer.step()
    stats["loss"] = loss_value
    return UpdateResult(used, loss_value, sum(1 for v in used.values() if v), skipped,
                        {k: float(v) for k, v in stats.items()})  # fmt: skip
