"""`benchmarks/browsergym_vs_webenv.py --smoke` finishes and its final JSON line reports, side
by side, the same MiniWoB++ instances through BrowserGym and through WebEnv.

Under CI a missing Chromium or BrowserGym fails this test (tests/components.py)."""

from __future__ import annotations

import pytest

from tests.components import require_browsergym

pytestmark = pytest.mark.web


def test_smoke_run_reports_both_envs_on_the_same_instances(smoke) -> None:
    require_browsergym()
    result = smoke("browsergym_vs_webenv.py", 300)
    assert result["templates"] == ["click-test-2", "enter-text"] and result["seeds"] == 1
    assert set(result["results"]) == {"webenv", "browsergym", "browsergym-fast"}
    assert result["same_instruction"] == result["episodes_per_config"] == 2
    for config, figures in result["results"].items():
        assert figures["episodes"] == 2 and figures["success"] == 1.0, config
        assert figures["steps"] >= 4  # click-test-2 takes one tap, enter-text three actions
        assert figures["steps_per_s"] > 0 and figures["reset_s_mean"] > 0
        assert set(result["per_template"][config]) == {"click-test-2", "enter-text"}
