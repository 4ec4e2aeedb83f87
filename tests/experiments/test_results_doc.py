"""The results page's side-by-side table: claims of the full and device experiments, per
profile, next to the paper's figure of the profile's environment."""

from __future__ import annotations

from pathlib import Path

from adaroll.experiments.results_doc import side_by_side


def claim(verdict: str) -> dict:
    return {
        "text": "Held-Out: Action->Hybrid vs Base",
        "key": "heldout_vs_base",
        "metric": "heldout_avg4",
        "interval": (0.05, 0.01, 0.09),
        "seeds": 10,
        "verdict": verdict,
    }


def test_device_claims_of_both_demonstration_conditions_are_listed_with_the_mobile_figure() -> None:
    found = {
        "mobile": {
            "device": (
                Path("."),
                {
                    "default": {"claims": [claim("held")]},
                    "clean-demos": {"claims": [claim("inconclusive")]},
                },
            )
        },
        "mobile-clean": {"full": (Path("."), {"claims": [claim("contradicted")]})},
        "mobile-quick": {"full": (Path("."), {"claims": [claim("held")]})},
    }
    rows = side_by_side(found).splitlines()
    assert any(r.startswith("| mobile (device) |") and r.endswith("| held |") for r in rows)
    assert any(
        r.startswith("| mobile, clean demos (device) |") and r.endswith("| inconclusive |")
        for r in rows
    )
    clean = next(r for r in rows if r.startswith("| mobile-clean |"))
    assert "+9.38 pts (50.20 vs 40.82)" in clean and "+5.00 pts [+1.00, +9.00]" in clean
    assert not any("mobile-quick" in r for r in rows)


def test_each_threshold_value_of_the_sensitivity_experiment_is_a_row_with_its_reading() -> None:
    judged = {
        "variant": "tau_dis-0.3",
        "value": "0.3",
        "val": {"interval": (-0.02, -0.05, 0.01), "seeds": 10},
        "cost": {"interval": (120.0, -300.0, 540.0), "seeds": 10},
        "reading": "undetermined",
    }
    thresholds = {"tau_dis": {"default": "0.45", "variants": [judged], "sentence": "..."}}
    found = {"mobile": {"sensitivity": (Path("."), {"sensitivity": {"thresholds": thresholds}})}}
    (row,) = [r for r in side_by_side(found).splitlines() if "Sensitivity" in r]
    assert row.startswith("| mobile | Sensitivity: tau_dis 0.45 -> 0.3 ")
    assert "-2.00 pts [-5.00, +1.00]" in row and "+120 env steps [-300, +540]" in row
    assert row.endswith("| 10 | undetermined |")


def test_a_horizon_cell_gives_the_paper_its_yardstick_beside_ours_at_each_budget() -> None:
    """Each budget of the sweep is two rows, the Val target (ours) and the Train target (the
    paper's); a cell trained without Train evaluations at the marks says so, and a file written
    before cells carried a verdict gets one from its interval."""
    with_train = {
        "iterations": 30,
        "saved": [27030.0, 11592.9, 42964.6],
        "saved_fraction": [0.411, 0.221, 0.550],
        "verdict": "held",
        "train": {
            "saved": [-520.0, -6612.0, 5391.0],
            "saved_fraction": [-0.017, -0.264, 0.152],
            "verdict": "inconclusive",
        },
    }
    older = {
        "iterations": 10,
        "saved": [-3301.0, -4918.7, -1845.5],
        "saved_fraction": [-0.45, -0.79, -0.23],
    }
    found = {
        "mobile-h40": {
            "horizon": (Path("."), {"seeds": list(range(10)), "cells": [older, with_train]})
        }
    }
    rows = [r for r in side_by_side(found).splitlines() if r.startswith("| mobile-h40 |")]
    assert len(rows) == 4
    val10, train10, val30, train30 = rows
    assert "Val target" in val10 and "(10 Vanilla iterations)" in val10
    assert val10.endswith("| 10 | contradicted |")  # from the interval: wholly below zero
    assert "no Train evaluations at the marks" in train10 and train10.endswith("| - |")
    assert "+27,030 env steps [+11,593, +42,965] (+41.10% [+22.10, +55.00])" in val30
    assert "65.0% fewer (25.0K vs 71.5K)" in train30  # the paper's figure, by its yardstick
    assert "-520 env steps [-6,612, +5,391]" in train30 and train30.endswith("| inconclusive |")
