"""GRPO math: group-normalised advantages and the clipped policy-gradient loss (pure torch).

Conventions (verl ``core_algos`` style): small pure functions, shapes in docstrings.

* ``B`` groups of ``G`` samples share a start; rewards are ``[B, G]``.
* The loss works on a flat batch of ``S`` samples (``S = B * G`` once groups are flattened),
  each a sequence of ``T`` *decision factors* (tokens of a language-model policy, or the
  factors of a small policy's action; padded, with ``mask [S, T]`` = 1 on real factors). A
  multi-step Suffix/Root sample contributes one row per decision, all with the sample's
  advantage.

Advantages: ``A_i = (r_i - mean(r)) / (std(r) + eps)`` per group. We use the **population**
standard deviation (``1/G``, ``unbiased=False``) by default: the normalised advantages of a
group then have unit (population) variance, and a 2-sample probe whose outcomes differ gets
``A = +-1`` (the unbiased ``1/(G-1)`` estimate, as in TRL/verl, is available with
``unbiased=True``; it shrinks advantages by ``sqrt((G-1)/G)``). ``normalize_std=False`` gives the
mean-baseline-only variant (Dr. GRPO). Zero-variance groups (all rewards equal) get exactly zero
advantages and are reported by :func:`zero_variance_groups` so the trainer can skip them.

Loss per factor: ``-min(rho * A, clip(rho, 1 - clip_low, 1 + clip_high) * A)`` with
``rho = exp(logp - old_logp)`` (per factor), plus ``kl_coef * k3(logp, ref_logp)`` where
``k3 = exp(ref - logp) - (ref - logp) - 1`` (Schulman's unbiased, non-negative KL estimator of
``KL(pi || pi_ref)``), aggregated by a registered mode (:data:`LOSS_AGGREGATIONS`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from adaroll.registry import Registry

Tensor = torch.Tensor

DEFAULT_EPS = 1e-6


# -- advantages -----------------------------------------------------------------------------------


def group_std(rewards: Tensor, *, unbiased: bool = False) -> Tensor:
    """Per-group standard deviation. ``rewards [B, G]`` -> ``[B]``.

    ``unbiased=False``: population std (divide by G); ``True``: sample std (divide by G - 1,
    needs G >= 2).
    """
    if rewards.dim() != 2:
        raise ValueError(f"rewards must be [B, G], got shape {tuple(rewards.shape)}")
    if unbiased and rewards.shape[1] < 2:
        raise ValueError("the unbiased std needs groups of at least 2 samples")
    return rewards.std(dim=1, correction=1 if unbiased else 0)


def zero_variance_groups(rewards: Tensor, atol: float = 0.0) -> Tensor:
    """Groups whose rewards are all equal (``max - min <= atol``): no gradient signal.

    ``rewards [B, G]`` -> bool ``[B]``.
    """
    if rewards.dim() != 2:
        raise ValueError(f"rewards must be [B, G], got shape {tuple(rewards.shape)}")
    return (rewards.amax(dim=1) - rewards.amin(dim=1)) <= atol


def group_advantages(
    rewards: Tensor,
    *,
    normalize_std: bool = True,
    unbiased: bool = False,
    eps: float = DEFAULT_EPS,
) -> Tensor:
    """Group-normalised advantages ``(r - mean) / (std + eps)`` (or ``r - mean``).

    ``rewards [B, G]`` (float) -> advantages ``[B, G]``, same dtype. Groups whose rewards are all
    equal get exactly 0 (no float residue amplified by ``1 / eps``).
    """
    if rewards.dim() != 2:
        raise ValueError(f"rewards must be [B, G], got shape {tuple(rewards.shape)}")
    rewards = rewards.to(torch.get_default_dtype()) if not rewards.is_floating_point() else rewards
    centred = rewards - rewards.mean(dim=1, keepdim=True)
    if normalize_std:
        centred = centred / (group_std(rewards, unbiased=unbiased).unsqueeze(1) + eps)
    flat = zero_variance_groups(rewards).unsqueeze(1)
    return torch.where(flat, torch.zeros_like(centred), centred)


# -- per-factor loss terms ------------------------------------------------------------------------


def kl_k3(log_probs: Tensor, ref_log_probs: Tensor) -> Tensor:
    """k3 estimate of ``KL(pi || pi_ref)`` per factor: ``exp(d) - d - 1`` with ``d = ref - logp``.

    ``[S, T], [S, T]`` -> ``[S, T]`` (>= 0; gradients flow through ``log_probs``).
    """
    d = ref_log_probs - log_probs
    return torch.exp(d) - d - 1.0


def clipped_surrogate(
    log_probs: Tensor,
    old_log_probs: Tensor,
    advantages: Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float | None = None,
) -> tuple[Tensor, Tensor, Tensor]:
    """PPO clipped surrogate per factor.

    ``log_probs [S, T]`` (with grad), ``old_log_probs [S, T]`` (behaviour policy, no grad),
    ``advantages [S]`` (broadcast over T) or ``[S, T]`` -> ``(loss [S, T], ratio [S, T],
    clipped [S, T] bool)``, where ``loss = -min(rho A, clip(rho, 1 - clip_low, 1 + clip_high) A)``
    and ``clipped`` marks factors where the clipped term is the active (strictly smaller) one,
    i.e. whose gradient is zeroed. ``clip_high=None`` means symmetric (``= clip_low``).
    """
    if log_probs.shape != old_log_probs.shape:
        raise ValueError(
            f"log_probs {tuple(log_probs.shape)} != old_log_probs {tuple(old_log_probs.shape)}"
        )
    high = clip_low if clip_high is None else clip_high
    if clip_low < 0 or high < 0:
        raise ValueError("clip ranges must be non-negative")
    if advantages.dim() == 1:
        advantages = advantages.unsqueeze(-1)
    advantages = advantages.to(log_probs.dtype).expand_as(log_probs)
    ratio = torch.exp(log_probs - old_log_probs.detach())
    unclipped = -advantages * ratio
    clipped_loss = -advantages * torch.clamp(ratio, 1.0 - clip_low, 1.0 + high)
    loss = torch.maximum(unclipped, clipped_loss)
    return loss, ratio, clipped_loss > unclipped


# -- aggregation ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Aggregation:
    """How per-factor losses become one scalar, and how much of that scalar's denominator a
    batch holds (so losses of micro-batches, weighted by their share of the summed weights,
    accumulate to the gradient of one pass over all of them)."""

    reduce: Callable[[Tensor, Tensor], Tensor]
    """``(loss [S, T], mask [S, T]) -> scalar``."""
    weight: Callable[[Tensor], float]
    """``mask [S, T] -> float``: the batch's part of the denominator of ``reduce``."""

    def __call__(self, loss: Tensor, mask: Tensor) -> Tensor:
        return self.reduce(loss, mask)


LOSS_AGGREGATIONS: Registry[Aggregation] = Registry("loss aggregation")


def token_mean(loss: Tensor, mask: Tensor) -> Tensor:
    """Mean over all real factors of the batch: ``sum(loss * mask) / sum(mask)``.

    ``[S, T], [S, T]`` -> scalar. Long samples weigh in proportion to their factor count. An
    empty mask gives 0 (still attached to the graph).
    """
    mask = mask.to(loss.dtype)
    return (loss * mask).sum() / mask.sum().clamp_min(1.0)


def sequence_mean(loss: Tensor, mask: Tensor) -> Tensor:
    """Mean over samples of each sample's mean over its real factors (every sample weighs the
    same). ``[S, T], [S, T]`` -> scalar. Rows with no real factor are left out of the mean."""
    mask = mask.to(loss.dtype)
    counts = mask.sum(dim=1)
    per_seq = (loss * mask).sum(dim=1) / counts.clamp_min(1.0)
    nonempty = (counts > 0).to(loss.dtype)
    return (per_seq * nonempty).sum() / nonempty.sum().clamp_min(1.0)


LOSS_AGGREGATIONS.register("token-mean")(
    Aggregation(token_mean, weight=lambda mask: float(mask.sum()))  # real factors
)
LOSS_AGGREGATIONS.register("sequence-mean")(
    Aggregation(sequence_mean, weight=lambda mask: float((mask.sum(-1) > 0).sum()))  # samples
)


def aggregate_loss(loss: Tensor, mask: Tensor, mode: str = "token-mean") -> Tensor:
    """Aggregate a per-factor loss ``[S, T]`` with ``mask [S, T]`` by the registered ``mode``."""
    return LOSS_AGGREGATIONS.get(mode)(loss, mask)


def masked_mean(values: Tensor, mask: Tensor) -> Tensor:
    """``sum(values * mask) / max(sum(mask), 1)``; ``[S, T], [S, T]`` -> scalar."""
    mask = mask.to(values.dtype)
    return (values * mask).sum() / mask.sum().clamp_min(1.0)


# -- the GRPO loss --------------------------------------------------------------------------------


def grpo_loss(
    log_probs: Tensor,
    old_log_probs: Tensor,
    advantages: Tensor,
    mask: Tensor,
    *,
    clip_low: float = 0.2,
    clip_high: float | None = None,
    ref_log_probs: Tensor | None = None,
    kl_coef: float = 0.0,
    aggregation: str = "token-mean",
) -> tuple[Tensor, dict[str, float]]:
    """Clipped policy-gradient loss with an optional KL penalty, and its statistics.

    Shapes: ``log_probs [S, T]`` (current policy, with grad), ``old_log_probs [S, T]`` (the
    policy that drew the samples), ``advantages [S]`` or ``[S, T]``, ``mask [S, T]`` (1 on real
    factors), ``ref_log_probs [S, T]`` (reference policy; needed when ``kl_coef > 0``).
    Returns ``(loss, stats)``: a scalar loss to minimise and floats ``loss``, ``pg_loss``,
    ``kl_loss`` (aggregated k3 to the reference, 0 without one), ``clip_frac`` (share of real
    factors whose ratio was clipped), ``clip_frac_low``/``clip_frac_high`` (clipped below /
    above), ``approx_kl`` (mean k3 estimate of ``KL(pi_old || pi)``: ``(rho - 1) - log rho``), ``ratio_mean``,
    ``ratio_max``, ``factors`` (number of real factors), ``samples`` (rows with a real factor).
    """
    if mask.shape != log_probs.shape:
        raise ValueError(f"mask {tuple(mask.shape)} != log_probs {tuple(log_probs.shape)}")
    if kl_coef < 0:
        raise ValueError(f"kl_coef must be non-negative, got {kl_coef}")
    aggregate = LOSS_AGGREGATIONS.get(aggregation)
    pg_mat, ratio, clipped = clipped_surrogate(
        log_probs, old_log_probs, advantages, clip_low=clip_low, clip_high=clip_high
    )
    pg_loss = aggregate(pg_mat, mask)
    loss = pg_loss
    kl_loss = torch.zeros((), dtype=pg_loss.dtype, device=pg_loss.device)
    if ref_log_probs is not None:
        kl_loss = aggregate(kl_k3(log_probs, ref_log_probs.detach()), mask)
        if kl_coef > 0:
            loss = loss + kl_coef * kl_loss
    elif kl_coef > 0:
        raise ValueError("kl_coef > 0 needs ref_log_probs")

    with torch.no_grad():
        real = mask.to(torch.bool)
        adv = advantages if advantages.dim() == 2 else advantages.unsqueeze(-1).expand_as(ratio)
        n_real = int(real.sum())
        low = clipped & (adv < 0)  # ratio pushed under 1 - clip_low for a negative advantage
        stats = {
            "loss": float(loss.detach()),
            "pg_loss": float(pg_loss.detach()),
            "kl_loss": float(kl_loss.detach()),
            "clip_frac": float(masked_mean(clipped.to(ratio.dtype), mask)),
            "clip_frac_low": float(masked_mean(low.to(ratio.dtype), mask)),
            "clip_frac_high": float(masked_mean((clipped & ~low).to(ratio.dtype), mask)),
            "approx_kl": float(
                masked_mean(kl_k3(old_log_probs.detach(), log_probs.detach()), mask)
            ),
            "ratio_mean": float(masked_mean(ratio.detach(), mask)),
            "ratio_max": float(ratio.detach()[real].max()) if n_real else 1.0,
            "factors": float(n_real),
            "samples": float(int(real.any(dim=1).sum())),
        }
    return loss, stats


MAX_STATS = ("ratio_max",)
"""Statistics merged by their maximum; the others are weighted means."""
COUNT_STATS = ("factors", "samples")
"""Statistics that count what a pass saw: merged by their mean over passes (each pass over the
batch sees it all), i.e. summed within one pass over the batch's micro-batches."""


def merge_stats(
    parts: Sequence[tuple[float, dict[str, float]]], passes: int = 1
) -> dict[str, float]:
    """Statistics of a whole update from those of its micro-batches.

    ``parts``: one ``(weight, stats)`` per micro-batch forward of every optimizer step, where
    ``weight`` is the micro-batch's aggregation weight (its real factors for token-mean) and
    ``stats`` what :func:`grpo_loss` returned for it; ``passes``: how many times the update went
    over the batch (PPO epochs). Fractions, means and losses become weight-averages over every
    micro-batch (so ``clip_frac`` is the share of all trained factors that were clipped, not the
    last micro-batch's), ``ratio_max`` the maximum, ``factors``/``samples`` the count of one pass.
    """
    if not parts:
        return {}
    total = sum(w for w, _ in parts) or 1.0
    out: dict[str, float] = {}
    for key in parts[0][1]:
        values = [(w, s[key]) for w, s in parts]
        if key in MAX_STATS:
            out[key] = max(v for _, v in values)
        elif key in COUNT_STATS:
            out[key] = sum(v for _, v in values) / max(passes, 1)
        else:
            out[key] = sum(w * v for w, v in values) / total
    return out
