"""`benchmarks/device_noise.py --smoke` finishes and its final JSON line holds its measurements."""

from __future__ import annotations


def test_smoke_run_prints_expert_success_rates_and_step_rates(smoke) -> None:
    result = smoke("device_noise.py", 120)
    assert result["episodes"] == 4 and result["expert_success"] == 1.0
    assert set(result["perturbations_by_kind"]) >= {"system_dialog", "ad", "banner", "loading"}
    assert 0 <= result["perturbed_episode_share"] <= 1
    assert result["steps_per_s"] > 0 and result["clean_steps_per_s"] > 0
    assert (
        abs(
            result["steps_per_s_ratio_vs_clean"]
            - result["steps_per_s"] / result["clean_steps_per_s"]
        )
        < 0.01
    )
