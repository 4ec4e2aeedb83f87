"""`benchmarks/env_throughput.py --smoke` finishes and its final JSON line holds its measurements."""

from __future__ import annotations


def test_smoke_run_prints_step_rates_snapshot_times_and_screenshot_times(smoke) -> None:
    result = smoke("env_throughput.py", 120)
    assert result["templates"] == 4 and result["tasks"] == 4
    assert result["expert_steps"] > 0 and result["random_steps"] > 0
    assert result["reset"]["n"] == 4  # 4 tasks x 1 pass
    for key in (
        "snapshot_get_state",
        "restore_branch",
        "restore_first_observe",
        "memory_backend_save",
        "memory_backend_restore",
    ):
        assert result[key]["n"] == 3 * result["expert_steps"]  # 3 samples at every expert state
        assert 0 < result[key]["median_us"] <= result[key]["p95_us"]
    for key in ("expert_best", "expert_mean", "random_best", "random_mean"):
        assert result[f"steps_per_s_{key}"] > 0
    assert set(result["screenshot"]) == {"540x1200", "270x600"}
    assert all(0 < shot["median_ms"] <= shot["p95_ms"] for shot in result["screenshot"].values())
    assert 0 < result["elements_per_screen"]["median"] <= result["elements_per_screen"]["max"]
