"""`benchmarks/soak.py --smoke`: memory per live CRIU branch and the controller's memory stay
flat across many restores (the CI half of the soak in docs/RELIABILITY.md), and the check fails
on growth. Under CI a missing Chromium, CRIU or root fails this test (tests/components.py)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.benchmarks.conftest import BENCHMARKS
from tests.components import require_criu_stack


def _soak():
    spec = importlib.util.spec_from_file_location("soak", BENCHMARKS / "soak.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.web
@pytest.mark.criu
def test_memory_per_live_branch_stays_flat_across_restores(smoke) -> None:
    require_criu_stack()
    result = smoke("soak.py", 300)  # fails on a non-zero exit: growth past the bounds
    assert result["branches"] == 24 and result["rounds"] == 8
    assert result["branch_ok"] and result["controller_ok"]
    assert 5 < result["branch_pss_mb_first"] < 400  # a real browser was measured, not nothing
    assert 1 < result["branch_private_mb_first"] <= result["branch_pss_mb_first"]
    assert result["controller_pss_mb_first"] > 5


def test_the_verdict_fails_on_growth() -> None:
    verdict = _soak().verdict
    flat = [(50.0, 40.0, 30.0)] * 10
    assert verdict(flat, 0.15, 10)["branch_ok"] and verdict(flat, 0.15, 10)["controller_ok"]
    leaking_branches = [(50.0 + 3 * i, 40.0, 30.0 + 3 * i) for i in range(10)]  # 30 -> 57 MB
    assert not verdict(leaking_branches, 0.15, 10)["branch_ok"]
    # PSS alone moves when other processes sharing the branches' pages exit: not a leak
    others_exit = [(50.0 + 3 * i, 40.0, 30.0) for i in range(10)]
    assert verdict(others_exit, 0.15, 10)["branch_ok"]
    leaking_controller = [(50.0, 40.0 + 2 * i, 30.0) for i in range(10)]  # +18 MB
    result = verdict(leaking_controller, 0.15, 10)
    assert result["branch_ok"] and not result["controller_ok"]
