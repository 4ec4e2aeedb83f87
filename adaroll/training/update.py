"""One GRPO policy update from collected groups (the math lives in :mod:`adaroll.algos.grpo`)."""

from __future__ import annotations

from collections.abc import Collection, Sequence
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
    optimizer_steps: int = 0
    """Optimizer steps taken (``ppo_epochs`` x the mini-batches the used groups filled; with
    ``decision_quota``, the mini-batches their decisions filled)."""


@dataclass
class _Rows:
    """The decisions of some groups, flattened: what one forward pass scores."""

    contexts: list[Context]
    samples: list[SampledAction]
    advantages: list[float]


def grpo_update(
    policy: Policy,
    optimizer: torch.optim.Optimizer,
    groups: Sequence[Group],
    cfg: GRPOConfig,
    reference: Policy | None = None,
    train_purposes: Collection[str] = ("train",),
) -> UpdateResult:
    """Group-normalise rewards, drop zero-variance groups, then ``ppo_epochs`` passes over the
    remaining groups, each split into ``mini_batches`` mini-batches of whole groups (one
    optimizer step each): clipped steps on every decision of every sample (each decision gets
    its sample's advantage). Groups whose job's purpose is not in ``train_purposes`` are left
    out (routing probes, unless they train). ``reference`` (the frozen start policy) is needed
    when ``cfg.kl_coef > 0``."""
    if cfg.kl_coef > 0 and reference is None:
        raise ValueError("grpo.kl_coef > 0 needs the reference policy (the phase's start policy)")
    used: dict[int, int] = {}
    batches: list[_Rows] = []
    skipped = 0
    for g, group in enumerate(groups):
        if group.job.purpose not in train_purposes:
            continue
        rewards = torch.tensor([group.rewards], dtype=torch.float32)
        if bool(grpo.zero_variance_groups(rewards)[0]):
            skipped += 1
            used[g] = 0
            continue
        adv = grpo.group_advantages(rewards, normalize_std=cfg.normalize_std)[0]
        rows = _Rows([], [], [])
        for decisions, a in zip(group.decisions, adv.tolist(), strict=True):
            for d in decisions:
                rows.contexts.append(d.context)
                rows.samples.append(d.sample)
                rows.advantages.append(a)
        used[g] = len(rows.samples)
        batches.append(rows)
    if not batches:
        return UpdateResult(used, 0.0, 0, skipped, {})

    mini_batches = [_concat(part) for part in _split(batches, _steps_per_pass(batches, cfg))]
    aggregation = grpo.LOSS_AGGREGATIONS.get(cfg.aggregation)
    # Samples were drawn by the current weights (nothing updated since), so a no-grad forward
    # gives the exact per-factor behaviour log-probs that the sampler summed; the reference's
    # are fixed too. Both are taken once, before the first step moves the weights.
    with torch.no_grad():
        old = [
            [policy.decision_log_probs(mb.contexts[c], mb.samples[c]) for c in _chunks(mb, cfg)]
            for mb in mini_batches
        ]
        ref = (
            [
                [
                    reference.decision_log_probs(mb.contexts[c], mb.samples[c])[0]
                    for c in _chunks(mb, cfg)
                ]
                for mb in mini_batches
            ]
            if reference is not None and cfg.kl_coef > 0
            else None
        )
    policy.train(True)
    parts: list[tuple[float, dict[str, float]]] = []
    steps, loss_sum, weight_sum = 0, 0.0, 0.0
    for _ in range(cfg.ppo_epochs):
        for m, mb in enumerate(mini_batches):
            # each micro-batch's mean loss is weighted by its share of the aggregation's
            # denominator, so accumulated gradients equal those of one pass over the mini-batch
            weights = [aggregation.weight(mask) for _, mask in old[m]]
            total = sum(weights) or 1.0
            adv_t = torch.tensor(mb.advantages, dtype=torch.float32)
            optimizer.zero_grad()
            for k, c in enumerate(_chunks(mb, cfg)):
                logp, mask = policy.decision_log_probs(mb.contexts[c], mb.samples[c])
                loss, stats = grpo.grpo_loss(
                    logp,
                    old[m][k][0],
                    adv_t[c],
                    mask,
                    clip_low=cfg.clip_eps,
                    kl_coef=cfg.kl_coef,
                    ref_log_probs=ref[m][k] if ref is not None else None,
                    aggregation=cfg.aggregation,
                )
                (loss * (weights[k] / total)).backward()
                parts.append((weights[k], stats))
                loss_sum += float(loss.detach()) * weights[k]
                weight_sum += weights[k]
            torch.nn.utils.clip_grad_norm_(list(policy.parameters()), cfg.max_grad_norm)
            optimizer.step()
            steps += 1
    stats = grpo.merge_stats(parts, passes=cfg.ppo_epochs)
    loss_value = loss_sum / (weight_sum or 1.0)
    stats["loss"] = loss_value
    return UpdateResult(used, loss_value, len(batches), skipped, stats, optimizer_steps=steps)


def _steps_per_pass(batches: Sequence[_Rows], cfg: GRPOConfig) -> int:
    """Mini-batches (optimizer steps) per pass: the recipe's ``mini_batches``, or with a
    ``decision_quota`` as many as the batch's decisions fill (at least one, at most
    ``mini_batches``)."""
    if cfg.decision_quota is None:
        return cfg.mini_batches
    decisions = sum(len(b.samples) for b in batches)
    return min(cfg.mini_batches, max(1, decisions // cfg.decision_quota))


def _split(batches: Sequence[_Rows], parts: int) -> list[list[_Rows]]:
    """``parts`` consecutive runs of whole groups, as equal in group count as can be (fewer
    when there are fewer groups)."""
    parts = min(parts, len(batches))
    size, extra = divmod(len(batches), parts)
    out, start = [], 0
    for p in range(parts):
        end = start + size + (1 if p < extra else 0)
        out.append(list(batches[start:end]))
        start = end
    return out


def _concat(groups: Sequence[_Rows]) -> _Rows:
    rows = _Rows([], [], [])
    for g in groups:
        rows.contexts += g.contexts
        rows.samples += g.samples
        rows.advantages += g.advantages
    return rows


def _chunks(rows: _Rows, cfg: GRPOConfig) -> list[slice]:
    """Micro-batches of at most ``cfg.micro_batch`` decisions (one forward/backward each)."""
    return [slice(i, i + cfg.micro_batch) for i in range(0, len(rows.samples), cfg.micro_batch)]
