"""`benchmarks/web_step_rate.py --smoke` finishes and its final JSON line holds its measurements:
expert replay in WebEnv and the Selenium env, and Root groups of an untrained policy through the
collector.

Under CI a missing Chromium fails this test (tests/components.py)."""

from __future__ import annotations

import pytest

from tests.components import require_chromium

pytestmark = pytest.mark.web

CONFIGS = {"adaroll", "adaroll+screenshot", "selenium", "selenium-dom"}


def test_smoke_run_prints_step_rates_of_webenv_and_selenium(smoke) -> None:
    require_chromium()
    result = smoke("web_step_rate.py", 180)
    assert result["tasks"] == ["click-button", "enter-text"] and result["seeds"] == 1
    collector = result["results"].pop("collector")
    assert set(result["results"]) == CONFIGS
    steps = result["results"]["adaroll"]["steps"]
    assert steps >= 2  # every recorded expert sequence replayed, each at least one step
    # the untrained-policy workload: Root groups of 2 on both templates through the collector
    assert collector["jobs"] == 2 and collector["episodes"] == 4 and collector["env_steps"] > 0
    assert result["collector_steps_per_s"] == collector["steps_per_s"] > 0
    assert collector["cpu_ms_per_step"] > 0  # the browsers' CPU is counted
    assert result["env_steps_per_s"] == result["results"]["adaroll"]["steps_per_s"]
    for figures in result["results"].values():
        assert figures["episodes"] == 2 and figures["steps"] == steps and figures["success"] == 1.0
        assert figures["steps_per_s"] > 0 and figures["episodes_per_s"] > 0
    for key in (
        "step_speedup_vs_selenium",
        "step_speedup_vs_selenium_dom",
        "screenshot_step_speedup_vs_selenium",
    ):
        assert result[key] > 0
