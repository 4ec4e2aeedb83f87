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
