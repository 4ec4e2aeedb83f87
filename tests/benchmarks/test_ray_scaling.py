"""`benchmarks/ray_scaling.py --smoke` finishes and its final JSON line holds its measurements
(mobile env only: the web env's smoke takes about a minute here).

Under CI a missing `ray` package fails this test (tests/components.py)."""

from __future__ import annotations

import importlib.util

from tests.components import require

CONFIGS = {"local_per_job", "local_batched", "ray_1", "ray_2"}


def test_smoke_run_prints_step_rates_of_local_and_ray_collectors(smoke) -> None:
    require(importlib.util.find_spec("ray") is not None, "needs the ray extra")
    result = smoke("ray_scaling.py", 240)
    assert result["env"] == "mobile" and result["jobs"] == 2 and result["group"] == 2
    assert set(result["results"]) == CONFIGS
    steps = result["results"]["local_per_job"]["env_steps"]
    assert steps >= 4  # 2 jobs x 2 episodes, each at least one step
    assert (
        result["results"]["ray_1"]["env_steps"] == result["results"]["ray_2"]["env_steps"] == steps
    )
    assert all(r["steps_per_s"] > 0 for r in result["results"].values())
    assert set(result["speedups"]) == {
        "per_job_vs_batched",
        "ray_1_vs_local",
        "ray_2_vs_local",
        "ray_2_vs_ray_1",
    }
    assert all(v > 0 for v in result["speedups"].values())
    assert all(p > 0 for p in result["parallelism_probe"])
