"""`benchmarks/apps_snapshots.py --smoke` finishes and its final JSON line holds its figures: a
10-step prefix restored vs replayed (as ratios), PSS per live branch, restores with connections
kept against closed, and the env's step rate against a plain DevTools loop on the same apps.

Under CI a missing Chromium, CRIU or root fails this test (tests/components.py)."""

from __future__ import annotations

import pytest

from tests.components import require_criu_stack

pytestmark = [pytest.mark.web, pytest.mark.criu]


def test_smoke_run_prints_restore_vs_replay_memory_and_step_rate(smoke) -> None:
    require_criu_stack()
    result = smoke("apps_snapshots.py", 600)
    [task] = result["tasks"]
    assert task["task"].startswith("apps:calendar.two_events#") and task["prefix"] == 10
    assert task["expert_steps"] > 10
    assert task["replay_fresh_s"]["n"] == task["replay_warm_s"]["n"] == 1
    assert task["restore_s"]["n"] == 2 and task["restore_s"]["median"] > 0
    assert set(task["restore_parts_s"]) == {"criu", "connect", "verify"}
    assert task["ratio_vs_replay_fresh"] == round(
        task["replay_fresh_s"]["median"] / task["restore_s"]["median"], 1
    )
    assert task["ratio_vs_replay_warm"] > 0 and task["image_mb"] > 0 and task["save_s"] > 0
    assert task["live_branches"] == 2 and task["branch_pss_mb"] > 0
    connections = task["connections"]
    assert connections["restores_each"] == 1
    assert connections["established_s"]["n"] == connections["closed_s"]["n"] == 1
    assert connections["established_vs_closed"] == round(
        connections["established_s"]["median"] / connections["closed_s"]["median"], 2
    )
    rate = result["rate"]
    assert rate["steps"] > 10 and rate["env_steps_per_s"] > 0 and rate["plain_cdp_steps_per_s"] > 0
    assert set(result["goals"]) == {"restore_le_0.1s", "ratio_ge_20x_vs_fresh_replay"}
