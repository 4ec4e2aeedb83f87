"""GRPO math against hand-computed values and against plain loop implementations."""

from __future__ import annotations

import math
import statistics

import pytest
import torch

from adaroll.algos.grpo import (
    LOSS_AGGREGATIONS,
    aggregate_loss,
    clipped_surrogate,
    group_advantages,
    group_std,
    grpo_loss,
    kl_k3,
    masked_mean,
    zero_variance_groups,
)
from adaroll.registry import UnknownNameError

EPS = 1e-6
SQRT3 = math.sqrt(3.0)


# -- loop reference implementations ---------------------------------------------------------------


def loop_advantages(
    rewards: list[list[float]], normalize_std: bool, unbiased: bool, eps: float
) -> list[list[float]]:
    out = []
    for group in rewards:
        mean = sum(group) / len(group)
        if max(group) == min(group):
            out.append([0.0] * len(group))
            continue
        std = statistics.stdev(group) if unbiased else statistics.pstdev(group)
        out.append([(r - mean) / (std + eps) if normalize_std else r - mean for r in group])
    return out


def loop_loss(
    logp: torch.Tensor,
    old: torch.Tensor,
    adv: torch.Tensor,
    mask: torch.Tensor,
    ref: torch.Tensor | None,
    clip_low: float,
    clip_high: float,
    kl_coef: float,
    aggregation: str,
) -> torch.Tensor:
    """Element by element, with torch scalars so that gradients can be compared too."""
    rows: list[list[torch.Tensor]] = []
    for i in range(logp.shape[0]):
        row = []
        for t in range(logp.shape[1]):
            if mask[i, t] == 0:
                continue
            ratio = torch.exp(logp[i, t] - old[i, t])
            a = adv[i]
            term = -torch.minimum(ratio * a, torch.clamp(ratio, 1 - clip_low, 1 + clip_high) * a)
            if ref is not None and kl_coef > 0:
                d = ref[i, t] - logp[i, t]
                term = term + kl_coef * (torch.exp(d) - d - 1)
            row.append(term)
        rows.append(row)
    if aggregation == "token-mean":
        terms = [x for row in rows for x in row]
        return torch.stack(terms).sum() / len(terms)
    per_seq = [torch.stack(row).sum() / len(row) for row in rows if row]
    return torch.stack(per_seq).sum() / len(per_seq)


# -- advantages -----------------------------------------------------------------------------------


def test_advantages_hand_computed() -> None:
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 1.0]])
    adv = group_advantages(rewards)
    # group 0: mean 1/4, population std sqrt(3)/4 -> +sqrt(3), -1/sqrt(3)
    assert adv[0].tolist() == pytest.approx([SQRT3, -1 / SQRT3, -1 / SQRT3, -1 / SQRT3], rel=1e-5)
    # group 1: mean 1/2, population std 1/2 -> +-1
    assert adv[1].tolist() == pytest.approx([-1.0, 1.0, -1.0, 1.0], rel=1e-5)
    # zero-variance group: exactly zero
    assert adv[2].tolist() == [0.0, 0.0, 0.0, 0.0]
    # each non-degenerate group: mean 0, population variance 1 (up to eps)
    assert adv[:2].mean(dim=1).abs().max() < 1e-6
    assert adv[:2].var(dim=1, correction=0).tolist() == pytest.approx([1.0, 1.0], rel=1e-4)


def test_advantages_unbiased_and_no_std_variants() -> None:
    rewards = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
    # unbiased std: sqrt(0.75 / 3) = 0.5
    assert group_advantages(rewards, unbiased=True)[0].tolist() == pytest.approx(
        [1.5, -0.5, -0.5, -0.5], rel=1e-5
    )
    assert group_advantages(rewards, normalize_std=False)[0].tolist() == [0.75, -0.25, -0.25, -0.25]
    probe = torch.tensor([[0.0, 1.0]])  # Root probe whose two outcomes differ
    assert group_advantages(probe)[0].tolist() == pytest.approx([-1.0, 1.0], rel=1e-5)
    assert group_advantages(probe, unbiased=True)[0].tolist() == pytest.approx(
        [-1 / math.sqrt(2), 1 / math.sqrt(2)], rel=1e-5
    )
    assert group_std(torch.tensor([[0.0, 2.0]])).tolist() == [1.0]
    assert group_std(torch.tensor([[0.0, 2.0]]), unbiased=True).tolist() == pytest.approx(
        [math.sqrt(2)]
    )


def test_eps_and_integer_rewards() -> None:
    adv = group_advantages(torch.tensor([[0, 1]]), eps=0.5)  # ints are promoted
    assert adv.dtype == torch.get_default_dtype()
    assert adv[0].tolist() == pytest.approx([-0.5 / 1.0, 0.5 / 1.0])


def test_zero_variance_detection() -> None:
    rewards = torch.tensor(
        [[0.0] * 8, [1.0] * 8, [0.0] * 7 + [1.0], [0.1] * 8], dtype=torch.float64
    )
    assert zero_variance_groups(rewards).tolist() == [True, True, False, True]
    close = torch.tensor([[0.5, 0.5 + 1e-9]], dtype=torch.float64)
    assert zero_variance_groups(close).tolist() == [False]
    assert zero_variance_groups(close, atol=1e-6).tolist() == [True]
    # float residue of a constant non-dyadic group is not amplified by 1/eps
    assert group_advantages(rewards[3:4]).abs().max() == 0.0


@pytest.mark.parametrize("normalize_std", [True, False])
@pytest.mark.parametrize("unbiased", [True, False])
def test_advantages_vectorised_equal_loop(normalize_std: bool, unbiased: bool) -> None:
    g = torch.Generator().manual_seed(0)
    binary = torch.randint(0, 2, (64, 8), generator=g).double()
    real = torch.rand(32, 5, generator=g, dtype=torch.float64)
    for rewards in (binary, real):
        got = group_advantages(rewards, normalize_std=normalize_std, unbiased=unbiased, eps=EPS)
        want = loop_advantages(rewards.tolist(), normalize_std, unbiased, EPS)
        assert torch.allclose(got, torch.tensor(want, dtype=torch.float64), atol=1e-10)


def test_advantage_shape_errors() -> None:
    with pytest.raises(ValueError, match=r"\[B, G\]"):
        group_advantages(torch.zeros(8))
    with pytest.raises(ValueError, match=r"rewards must be \[B, G\], got shape \(8,\)"):
        group_std(torch.zeros(8))
    with pytest.raises(ValueError, match=r"rewards must be \[B, G\], got shape \(2, 2, 2\)"):
        zero_variance_groups(torch.zeros(2, 2, 2))
    with pytest.raises(ValueError, match="^the unbiased std needs groups of at least 2 samples$"):
        group_std(torch.zeros(3, 1), unbiased=True)


# -- loss -----------------------------------------------------------------------------------------


def _one_sample(ratios: list[float]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    logp = torch.tensor([[math.log(r) for r in ratios]], dtype=torch.float64, requires_grad=True)
    old = torch.zeros_like(logp)
    mask = torch.ones_like(logp)
    return logp, old, mask


def test_clipped_loss_positive_advantage_hand_computed() -> None:
    logp, old, mask = _one_sample([1.5, 0.5])
    loss, stats = grpo_loss(logp, old, torch.tensor([1.0], dtype=torch.float64), mask)
    # t0: min(1.5, 1.2) = 1.2 (clipped high); t1: min(0.5, 0.8) = 0.5 -> -(1.2 + 0.5) / 2
    assert loss.item() == pytest.approx(-0.85)
    loss.backward()
    assert logp.grad is not None
    # the clipped factor gets no gradient; d/dlogp of -ratio/2 at ratio 0.5 is -0.25
    assert logp.grad[0].tolist() == pytest.approx([0.0, -0.25])
    assert (
        stats["clip_frac"] == 0.5
        and stats["clip_frac_high"] == 0.5
        and stats["clip_frac_low"] == 0.0
    )
    assert stats["ratio_mean"] == pytest.approx(1.0) and stats["ratio_max"] == pytest.approx(1.5)
    assert stats["pg_loss"] == stats["loss"] == pytest.approx(-0.85) and stats["kl_loss"] == 0.0
    # approx KL(old || new) = mean((rho - 1) - log rho)
    assert stats["approx_kl"] == pytest.approx(((0.5 - math.log(1.5)) + (-0.5 - math.log(0.5))) / 2)
    assert stats["factors"] == 2.0 and stats["samples"] == 1.0


def test_clipped_loss_negative_advantage_hand_computed() -> None:
    logp, old, mask = _one_sample([1.5, 0.5])
    loss, stats = grpo_loss(logp, old, torch.tensor([-1.0], dtype=torch.float64), mask)
    # t0: -min(-1.5, -1.2) = 1.5 (unclipped: a too-likely bad action keeps its gradient);
    # t1: -min(-0.5, -0.8) = 0.8 (clipped low)
    assert loss.item() == pytest.approx((1.5 + 0.8) / 2)
    loss.backward()
    assert logp.grad is not None
    assert logp.grad[0].tolist() == pytest.approx([0.75, 0.0])
    assert (
        stats["clip_frac"] == 0.5
        and stats["clip_frac_low"] == 0.5
        and stats["clip_frac_high"] == 0.0
    )


def test_asymmetric_clip() -> None:
    logp, old, mask = _one_sample([1.5, 0.5])
    adv = torch.tensor([1.0], dtype=torch.float64)
    loss, _ = grpo_loss(logp, old, adv, mask, clip_low=0.2, clip_high=0.28)
    assert loss.item() == pytest.approx(-(1.28 + 0.5) / 2)
    loss, _ = grpo_loss(logp, old, -adv, mask, clip_low=0.1, clip_high=0.28)
    assert loss.item() == pytest.approx((1.5 + 0.9) / 2)


def test_first_epoch_is_the_plain_policy_gradient() -> None:
    # ratio == 1 everywhere: loss = -mean(A) and grad = -A / n_factors (nothing clipped)
    logp = torch.tensor([[-1.0, -2.0], [-0.5, -0.1]], dtype=torch.float64, requires_grad=True)
    adv = torch.tensor([2.0, -1.0], dtype=torch.float64)
    loss, stats = grpo_loss(logp, logp.detach(), adv, torch.ones_like(logp))
    assert loss.item() == pytest.approx(-(2 + 2 - 1 - 1) / 4)
    loss.backward()
    assert logp.grad is not None
    assert logp.grad.view(-1).tolist() == pytest.approx([-0.5, -0.5, 0.25, 0.25])
    assert stats["clip_frac"] == 0.0 and stats["approx_kl"] == 0.0


def test_kl_k3_hand_computed() -> None:
    logp = torch.tensor([[math.log(1.5), math.log(0.5), 0.0]])
    ref = torch.zeros_like(logp)
    want = [1 / 1.5 + math.log(1.5) - 1, 2 - math.log(2) - 1, 0.0]
    assert kl_k3(logp, ref)[0].tolist() == pytest.approx(want, abs=1e-6)
    assert (kl_k3(torch.randn(50, 7), torch.randn(50, 7)) >= 0).all()


def test_kl_penalty_adds_to_the_loss() -> None:
    logp, old, mask = _one_sample([1.5, 0.5])
    adv = torch.tensor([1.0], dtype=torch.float64)
    ref = torch.zeros_like(logp)
    kl = ((1 / 1.5 + math.log(1.5) - 1) + (2 - math.log(2) - 1)) / 2
    loss, stats = grpo_loss(logp, old, adv, mask, ref_log_probs=ref, kl_coef=0.1)
    assert loss.item() == pytest.approx(-0.85 + 0.1 * kl)
    assert stats["kl_loss"] == pytest.approx(kl) and stats["pg_loss"] == pytest.approx(-0.85)
    loss0, stats0 = grpo_loss(logp, old, adv, mask, ref_log_probs=ref, kl_coef=0.0)
    assert loss0.item() == pytest.approx(-0.85) and stats0["kl_loss"] == pytest.approx(kl)
    with pytest.raises(ValueError, match="ref_log_probs"):
        grpo_loss(logp, old, adv, mask, kl_coef=0.1)


def test_aggregations_hand_computed() -> None:
    loss = torch.tensor([[1.0, 9.0, 9.0, 9.0], [2.0, 3.0, 4.0, 9.0], [9.0, 9.0, 9.0, 9.0]])
    mask = torch.tensor([[1, 0, 0, 0], [1, 1, 1, 0], [0, 0, 0, 0]])
    assert float(aggregate_loss(loss, mask, "token-mean")) == pytest.approx((1 + 2 + 3 + 4) / 4)
    # per sample: 1 and 3; the empty third row is left out
    assert float(aggregate_loss(loss, mask, "sequence-mean")) == pytest.approx((1 + 3) / 2)
    assert float(aggregate_loss(loss, torch.zeros_like(mask), "token-mean")) == 0.0
    assert float(aggregate_loss(loss, torch.zeros_like(mask), "sequence-mean")) == 0.0
    assert LOSS_AGGREGATIONS.names() == ["sequence-mean", "token-mean"]
    with pytest.raises(UnknownNameError, match="valid names: sequence-mean, token-mean"):
        aggregate_loss(loss, mask, "sum")


@pytest.mark.parametrize("mode", ["token-mean", "sequence-mean"])
def test_micro_batches_weighted_by_their_aggregation_give_the_whole_batch_loss(mode: str) -> None:
    generator = torch.Generator().manual_seed(3)
    loss = torch.randn(7, 5, generator=generator)
    mask = (torch.rand(7, 5, generator=generator) > 0.4).to(torch.int64)
    mask[2] = 0  # a sample without a real factor
    aggregation = LOSS_AGGREGATIONS.get(mode)
    chunks = [slice(0, 3), slice(3, 5), slice(5, 7)]
    weights = [aggregation.weight(mask[c]) for c in chunks]
    parts = sum(
        float(aggregation(loss[c], mask[c])) * w for c, w in zip(chunks, weights, strict=True)
    )
    assert parts / sum(weights) == pytest.approx(float(aggregate_loss(loss, mask, mode)), abs=1e-6)


def test_masked_factors_do_not_count() -> None:
    logp, old, _ = _one_sample([1.5, 0.5])
    mask = torch.tensor([[0.0, 1.0]], dtype=torch.float64)
    loss, stats = grpo_loss(logp, old, torch.tensor([1.0], dtype=torch.float64), mask)
    assert loss.item() == pytest.approx(-0.5)
    assert stats["clip_frac"] == 0.0 and stats["ratio_max"] == pytest.approx(0.5)
    loss.backward()
    assert logp.grad is not None and logp.grad[0, 0] == 0.0


def test_surrogate_defaults_to_a_symmetric_0_2_clip_and_keeps_the_log_prob_dtype() -> None:
    logp = torch.tensor([[math.log(1.5), math.log(0.5)]])
    loss, _, clipped = clipped_surrogate(
        logp, torch.zeros_like(logp), torch.ones(1, dtype=torch.float64)
    )
    assert loss[0].tolist() == pytest.approx([-1.2, -0.5]) and clipped.tolist() == [[True, False]]
    assert loss.dtype == torch.float32  # float64 advantages do not promote the loss


def test_clip_ranges_may_be_zero_but_not_negative() -> None:
    logp = torch.tensor([[math.log(1.5)]])
    loss, _, _ = clipped_surrogate(logp, torch.zeros_like(logp), torch.ones(1), clip_low=0.0)
    assert loss.item() == pytest.approx(-1.0)  # no trust region: the ratio is clamped to 1
    loss, _, _ = clipped_surrogate(logp, torch.zeros_like(logp), torch.ones(1), clip_high=0.0)
    assert loss.item() == pytest.approx(-1.0)
    for low, high in ((-0.1, 0.2), (0.2, -0.1)):
        with pytest.raises(ValueError, match="^clip ranges must be non-negative$"):
            clipped_surrogate(logp, logp, torch.ones(1), clip_low=low, clip_high=high)


def test_clip_statistics_with_per_factor_advantages() -> None:
    """A factor clipped above with a small positive advantage counts as clipped high; factors
    with their own advantages ([S, T]) are counted one by one."""
    logp, old, mask = _one_sample([1.5, 1.5, 0.5])
    adv = torch.tensor([[0.5, 0.0, -2.0]], dtype=torch.float64)
    loss, stats = grpo_loss(logp, old, adv, mask)
    assert loss.item() == pytest.approx((-0.5 * 1.2 + 0.0 + 2.0 * 0.8) / 3)
    assert stats["clip_frac"] == pytest.approx(2 / 3)  # a zero advantage is never clipped
    assert stats["clip_frac_high"] == pytest.approx(1 / 3)
    assert stats["clip_frac_low"] == pytest.approx(1 / 3)


def test_a_batch_without_real_factors_reports_neutral_statistics() -> None:
    logp, old, _ = _one_sample([1.5, 0.5])
    loss, stats = grpo_loss(logp, old, torch.ones(1, dtype=torch.float64), torch.zeros_like(logp))
    assert loss.item() == 0.0
    assert stats["ratio_max"] == 1.0 and stats["ratio_mean"] == 0.0
    assert stats["factors"] == 0.0 and stats["samples"] == 0.0 and stats["clip_frac"] == 0.0


def test_default_aggregation_is_the_token_mean_and_a_single_factor_is_its_own_mean() -> None:
    loss = torch.tensor([[3.0, 5.0], [7.0, 9.0]])
    one = torch.tensor([[1, 0], [0, 0]])
    assert float(aggregate_loss(loss, one)) == 3.0
    assert float(aggregate_loss(loss, torch.ones(2, 2))) == 6.0
    assert float(masked_mean(loss, one)) == 3.0


def test_loss_argument_errors_say_what_is_wrong() -> None:
    logp = torch.zeros(2, 3)
    with pytest.raises(ValueError, match=r"log_probs \(2, 3\) != old_log_probs \(2, 4\)"):
        clipped_surrogate(logp, torch.zeros(2, 4), torch.zeros(2))
    with pytest.raises(ValueError, match=r"mask \(2, 4\) != log_probs \(2, 3\)"):
        grpo_loss(logp, logp, torch.zeros(2), torch.ones(2, 4))
    with pytest.raises(ValueError, match="kl_coef must be non-negative, got -0.1"):
        grpo_loss(logp, logp, torch.zeros(2), torch.ones(2, 3), kl_coef=-0.1)
    with pytest.raises(ValueError, match="^kl_coef > 0 needs ref_log_probs$"):
        grpo_loss(logp, logp, torch.zeros(2), torch.ones(2, 3), kl_coef=0.1)


def test_per_factor_advantages_and_surrogate_shapes() -> None:
    logp = torch.zeros(3, 4)
    loss, ratio, clipped = clipped_surrogate(logp, logp, torch.arange(12.0).view(3, 4))
    assert loss.shape == ratio.shape == clipped.shape == (3, 4)
    assert loss.tolist() == (-torch.arange(12.0).view(3, 4)).tolist()
    with pytest.raises(ValueError):
        clipped_surrogate(logp, torch.zeros(3, 5), torch.zeros(3))
    with pytest.raises(ValueError):
        grpo_loss(logp, logp, torch.zeros(3), torch.ones(3, 5))


@pytest.mark.parametrize("aggregation", ["token-mean", "sequence-mean"])
@pytest.mark.parametrize(
    ("clip_low", "clip_high", "kl_coef"), [(0.2, 0.2, 0.0), (0.1, 0.28, 0.0), (0.2, 0.2, 0.05)]
)
@pytest.mark.parametrize("seed", range(3))
def test_loss_vectorised_equal_loop(
    aggregation: str, clip_low: float, clip_high: float, kl_coef: float, seed: int
) -> None:
    g = torch.Generator().manual_seed(seed)
    s, t = 12, 6
    base = -torch.rand(s, t, generator=g, dtype=torch.float64) * 3
    old = base + torch.randn(s, t, generator=g, dtype=torch.float64) * 0.3  # ratios off 1: clipping
    ref = base + torch.randn(s, t, generator=g, dtype=torch.float64) * 0.3
    lengths = torch.randint(1, t + 1, (s,), generator=g)
    lengths[0] = 0  # one empty row
    mask = (torch.arange(t).unsqueeze(0) < lengths.unsqueeze(1)).double()
    rewards = torch.randint(0, 2, (s // 4, 4), generator=g).double()
    adv = group_advantages(rewards).reshape(-1)

    lp_vec = base.clone().requires_grad_(True)
    got, stats = grpo_loss(
        lp_vec,
        old,
        adv,
        mask,
        clip_low=clip_low,
        clip_high=clip_high,
        ref_log_probs=ref,
        kl_coef=kl_coef,
        aggregation=aggregation,
    )
    got.backward()
    lp_loop = base.clone().requires_grad_(True)
    want = loop_loss(lp_loop, old, adv, mask, ref, clip_low, clip_high, kl_coef, aggregation)
    want.backward()
    assert got.item() == pytest.approx(want.item(), rel=1e-12, abs=1e-12)
    assert lp_vec.grad is not None and lp_loop.grad is not None
    assert torch.allclose(lp_vec.grad, lp_loop.grad, atol=1e-12)
    assert 0.0 <= stats["clip_frac"] <= 1.0
    assert stats["clip_frac"] == pytest.approx(stats["clip_frac_low"] + stats["clip_frac_high"])
    assert stats["factors"] == float(mask.sum()) and stats["samples"] == float(s - 1)


def test_aggregations_carry_their_micro_batch_weight() -> None:
    from adaroll.algos.grpo import LOSS_AGGREGATIONS

    mask = torch.tensor([[1.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    assert LOSS_AGGREGATIONS.get("token-mean").weight(mask) == 3.0
    assert LOSS_AGGREGATIONS.get("sequence-mean").weight(mask) == 2.0


def test_merge_stats_weights_means_takes_max_and_counts_one_pass() -> None:
    from adaroll.algos.grpo import merge_stats

    parts = [
        (3.0, {"clip_frac": 0.0, "ratio_max": 1.1, "factors": 3.0}),
        (1.0, {"clip_frac": 1.0, "ratio_max": 1.5, "factors": 1.0}),
        (3.0, {"clip_frac": 0.0, "ratio_max": 1.2, "factors": 3.0}),
        (1.0, {"clip_frac": 1.0, "ratio_max": 1.3, "factors": 1.0}),
    ]
    merged = merge_stats(parts, passes=2)
    assert merged == {"clip_frac": 0.25, "ratio_max": 1.5, "factors": 4.0}
    assert merge_stats([]) == {}
