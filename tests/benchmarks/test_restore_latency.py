"""`benchmarks/restore_latency.py --smoke` finishes and its final JSON line holds its measurements.

Under CI a missing Chromium, CRIU or root fails this test (tests/components.py)."""

from __future__ import annotations

import pytest

from tests.components import require_criu_stack

pytestmark = [pytest.mark.web, pytest.mark.criu]


def test_smoke_run_prints_replay_snapshot_and_restore_figures(smoke) -> None:
    require_criu_stack()
    result = smoke("restore_latency.py", 240)
    [task] = result["tasks"]
    assert task["task"] == "web:book-flight#0" and task["prefix"] == 2
    assert task["expert_steps"] >= 10  # a long task: the 10x goal is judged on it
    assert task["replay_fresh_s"]["n"] == task["replay_warm_s"]["n"] == task["restore_s"]["n"] == 1
    assert all(part["n"] == 1 for part in task["restore_parts_s"].values())
    assert task["save_s"] > 0 and task["dump_s"] > 0 and task["restore_s"]["median"] > 0
    assert task["image_mb"] > 0 and task["state_copy_mb"] > 0  # read from the image's manifest
    assert set(task["concurrent"]) == {"1", "2"}
    assert all(c["wall_s"] > 0 and c["pss_mb_per_branch"] > 0 for c in task["concurrent"].values())
    assert task["branch_pss_mb"] == task["concurrent"]["2"]["pss_mb_per_branch"]
    # the prefetch workload: 2 Suffix groups of 2 through the collector, one wait per start
    assert task["prefetched_wait_s"]["n"] == 4 and task["prefetch_branches"] == 2
    assert task["env_steps"] > 0
    assert task["speedup_vs_replay_fresh"] > 0 and task["speedup_vs_replay_warm"] > 0
    assert set(result["flatness"]) == {"1", "2"}
    assert all(f["restore_median_s"] > 0 and f["image_mb"] > 0 for f in result["flatness"].values())
    assert set(result["goals"]) == {
        "restore_le_0.1s",
        "prefetched_wait_le_0.02s",
        "speedup_ge_10x_vs_fresh_replay",
        "speedup_ge_5x_vs_warm_replay",
    }
    assert result["goals"]["speedup_ge_10x_vs_fresh_replay"] == (
        task["speedup_vs_replay_fresh"] >= 10
    )
