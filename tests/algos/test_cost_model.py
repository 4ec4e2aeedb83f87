"""The cost model against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from adaroll.algos import cost_model as cm


def test_episode_cost_mixes_lengths_by_outcome() -> None:
    assert cm.episode_cost(0.25, 6.0, 20.0) == pytest.approx(0.25 * 6 + 0.75 * 20)
    with pytest.raises(ValueError, match="success rate"):
        cm.episode_cost(1.5, 6.0, 20.0)


HYBRID = dict(
    tasks_per_iteration=8,
    group_size=8,
    routing_probes=4,
    root_probes=2,
    reeval_every=3,
    share_local=0.5,
    share_suffix=0.25,
    share_root=0.25,
    local_probe_episode=18.0,
    suffix_episode=5.0,
    root_episode=7.0,
)


def test_vanilla_and_hybrid_costs_per_iteration() -> None:
    assert cm.vanilla_cost(cm.VanillaInputs(8, 8, 12.0)) == 768.0
    x = cm.HybridInputs(**HYBRID)
    # 8 * (0.5 * 4 * 18 / 3 + 0.25 * 8 * 5 + 0.25 * 2 * 7) = 8 * (12 + 10 + 3.5) = 204
    assert cm.hybrid_cost(x) == pytest.approx(204.0)
    with pytest.raises(ValueError, match="sum to 1"):
        cm.HybridInputs(8, 8, 4, 2, 3, 0.5, 0.5, 0.5, 1.0, 1.0, 1.0)


def test_saving_matches_the_issue_form_when_episodes_are_alike() -> None:
    # S = 1 - C_H/C_V - (n/B)(R/G)/N when the routing pass's episodes cost Vanilla's
    B, G, R, n, E = 8, 8, 4, 80, 10.0
    c_v, c_h = cm.vanilla_cost(cm.VanillaInputs(B, G, E)), 0.34 * B * G * E
    fixed = cm.routing_pass_cost(n, R, E)
    for N in (10, 50, 80):
        assert cm.saving(c_v, c_h, N, fixed) == pytest.approx(0.66 - (n / B) * (R / G) / N)
    assert cm.saving(c_v, c_h, 10, fixed) == pytest.approx(0.16)
    assert cm.break_even_updates(c_v, c_h, fixed) == pytest.approx(5 / 0.66)
    assert cm.break_even_updates(c_v, c_v, fixed) == math.inf
    with pytest.raises(ValueError, match="updates"):
        cm.saving(c_v, c_h, 0, fixed)


def test_the_learning_options_enter_as_their_terms() -> None:
    """Issue 40: re-evaluating only some Local tasks scales the Local term, Root
    probe-then-expand adds (G - P) rollouts to the visits whose probes differ."""
    base = HYBRID
    assert cm.hybrid_cost(cm.HybridInputs(**base)) == pytest.approx(204.0)  # defaults: the paper
    # a quarter of the Local tasks near tau_low: the Local term 12 becomes 3
    assert cm.hybrid_cost(cm.HybridInputs(**base, reeval_share=0.25)) == pytest.approx(8 * 16.5)
    # half the Root visits grow by G - P = 6 rollouts: 0.25 * (2 + 3) * 7 per visit
    assert cm.hybrid_cost(cm.HybridInputs(**base, expand_share=0.5)) == pytest.approx(
        8 * (12 + 10 + 0.25 * 5 * 7)
    )
    assert cm.differ_chance(0.9) == pytest.approx(0.18) and cm.differ_chance(0.0) == 0.0
    with pytest.raises(ValueError, match="expand_share"):
        cm.HybridInputs(**base, expand_share=1.5)
