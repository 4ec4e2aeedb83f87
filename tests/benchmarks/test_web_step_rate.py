"""`benchmarks/web_step_rate.py --smoke` finishes and its final JSON line holds its measurements.

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
    assert set(result["results"]) == CONFIGS
    steps = result["results"]["adaroll"]["steps"]
    assert steps >= 2  # every recorded expert sequence replayed, each at least one step
    for figures in result["results"].values():
        assert figures["episodes"] == 2 and figures["steps"] == steps and figures["success"] == 1.0
        assert figures["steps_per_s"] > 0 and figures["episodes_per_s"] > 0
    for key in ("step_speedup_vs_selenium", "step_speedup_vs_selenium_dom", "screenshot_step_speedup_vs_selenium"):
        assert result[key] > 0
