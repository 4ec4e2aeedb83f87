"""One GRPO step on verl's agent-loop outputs, standing in for verl's actor update on CPU: the
advantages and the clipped loss are AdaRoll's (:mod:`adaroll.algos.grpo`), the samples verl's
(``AgentLoopOutput``: prompt ids, response ids with their mask - 1 on the model's tokens, 0 on
the env's turns - and the log-probs they were sampled with)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput

from adaroll.algos.grpo import group_advantages, grpo_loss, zero_variance_groups


def grpo_step(
    model: Any,
    optimizer: torch.optim.Optimizer,
    groups: Sequence[Sequence[AgentLoopOutput]],
    *,
    temperature: float,
    pad_id: int,
    max_grad_norm: float = 1.0,
) -> dict[str, float] | None:
    """One optimizer step on the groups whose rewards (``reward_score``: 0 for every sample of
    a routing probe or an idle row) differ; their statistics (:func:`grpo_loss`), or None when
    no group has a signal.

    As verl's actor does: log-probs of the response tokens under ``logits / temperature``,
    the sampling log-probs as the old policy's, group-normalised advantages per sample, the
    token-mean loss over the model's tokens only, the gradient norm clipped."""
    rewards = torch.tensor([[o.reward_score or 0.0 for o in g] for g in groups])
    advantages = group_advantages(rewards)
    signal = ~zero_variance_groups(rewards)
    samples = [
        (o, float(a))
        for g, adv, keep in zip(groups, advantages, signal.tolist(), strict=True)
        if keep
        for o, a in zip(g, adv, strict=True)
    ]
    if not samples:
        return None
    width = max(len(o.prompt_ids) + len(o.response_ids) for o, _ in samples)
    ids = torch.full((len(samples), width), pad_id)
    attention = torch.zeros((len(samples), width), dtype=torch.long)
    # targets are shifted by one: position t predicts token t + 1
    mask = torch.zeros((len(samples), width - 1))
    old = torch.zeros((len(samples), width - 1))
    for s, (o, _) in enumerate(samples):
        p, r = len(o.prompt_ids), len(o.response_ids)
        ids[s, : p + r] = torch.tensor(o.prompt_ids + o.response_ids)
        attention[s, : p + r] = 1
        mask[s, p - 1 : p + r - 1] = torch.tensor(o.response_mask, dtype=torch.float)
        old[s, p - 1 : p + r - 1] = torch.tensor(o.response_logprobs or [0.0] * r)
    model.train()
    logits = model(input_ids=ids, attention_mask=attention).logits[:, :-1] / temperature
    log_probs = logits.log_softmax(-1).gather(-1, ids[:, 1:].unsqueeze(-1)).squeeze(-1)
    loss, stats = grpo_loss(
        log_probs, old, torch.tensor([a for _, a in samples]), mask, clip_low=0.2
    )
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    optimizer.zero_grad()
    return stats
