"""Threshold sensitivity: each threshold variant against the default, paired by seed, and a
sentence per threshold that follows from the intervals (sensitive, insensitive, undetermined)."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.experiments.analyses import ANALYSES
from adaroll.experiments.inputs import Inputs
from adaroll.experiments.profiles import PROFILES
from adaroll.experiments.sensitivity import (
    COST_MARGIN,
    VAL_MARGIN,
    default_value,
    reading,
    sensitivity_section,
    threshold_of,
)
from adaroll.experiments.specs import EXPERIMENTS

SEEDS = list(range(10))


def test_thresholds_and_their_defaults_come_from_the_variants_and_the_config():
    assert threshold_of("tau_dis-0.3") == ("tau_dis", {"rl.pivots.tau_dis": 0.3})
    name, values = threshold_of("tau-0.35-0.65")
    assert name == "tau_low/tau_high" and list(values.values()) == [0.35, 0.65]
    assert default_value("rl.pivots.tau_dis") == 0.45
    assert default_value("rl.scheduler.tau_suffix") == 0.75


def _judged(interval: tuple[float, float, float]) -> dict:
    return {"interval": interval, "verdict": "-", "seeds": 10}


@pytest.mark.parametrize(
    ("val", "cost", "expected"),
    [
        ((0.03, 0.01, 0.05), (0.0, -10.0, 10.0), "sensitive"),  # Val interval excludes zero
        ((0.0, -0.01, 0.01), (-300.0, -500.0, -100.0), "sensitive"),  # a confident saving
        ((0.0, -0.01, 0.01), (0.0, -50.0, 50.0), "insensitive"),  # within both margins
        ((0.0, -0.04, 0.04), (0.0, -50.0, 50.0), "undetermined"),  # Val too wide to tell
        ((0.0, -0.01, 0.01), (0.0, -200.0, 150.0), "undetermined"),  # cost past 10% of 1,000
    ],
)
def test_a_variants_reading_follows_its_intervals(val, cost, expected):
    assert VAL_MARGIN == 0.025 and COST_MARGIN == 0.10
    assert reading(_judged(val), _judged(cost), cost_scale=1000.0) == expected


def _row(val: float, steps: int | None, total: int = 6000) -> dict:
    return {
        "val_avg4": val,
        "heldout_avg4": val,
        "total_env_steps": total,
        "policy_samples": total,
        "reached_target": steps is not None,
        "steps_to_target": steps,
        "samples_to_target": steps,
        "train_samples_to_target": steps,
    }


def _summary(row: dict) -> dict:
    return {"target_val_avg4": 0.5, "configurations": {"base_hybrid": row}, "curves": {}}


@pytest.fixture
def inputs(tmp_path: Path) -> Inputs:
    """Ten seeds: tau_suffix = 0.5 and tau_dis = 0.3 change nothing; tau_dis = 0.6 costs about
    800 more env steps to the target on every seed; tau_low/high = 0.35/0.65 moves Val by +-5
    points, seed by seed, with no direction."""
    noise = [(-1) ** s * 0.05 for s in SEEDS]
    summaries = {
        "default": {s: _summary(_row(0.5, 3000)) for s in SEEDS},
        "tau_suffix-0.5": {s: _summary(_row(0.5, 3000)) for s in SEEDS},
        "tau_dis-0.3": {s: _summary(_row(0.5, 3000)) for s in SEEDS},
        "tau_dis-0.6": {s: _summary(_row(0.5, 3800 + 10 * s)) for s in SEEDS},
        "tau-0.35-0.65": {s: _summary(_row(0.5 + noise[s], 3000)) for s in SEEDS},
    }
    return Inputs(
        EXPERIMENTS.get("sensitivity"), tmp_path, PROFILES["mobile"], summaries, SEEDS, tmp_path
    )


def test_one_generated_sentence_per_threshold(inputs: Inputs):
    section = sensitivity_section(inputs)
    data = section.data["thresholds"]
    assert set(data) == {"tau_suffix", "tau_dis", "tau_low/tau_high"}
    readings = {r["variant"]: r["reading"] for d in data.values() for r in d["variants"]}
    assert readings == {
        "tau_suffix-0.5": "insensitive",
        "tau_dis-0.3": "insensitive",
        "tau_dis-0.6": "sensitive",
        "tau-0.35-0.65": "undetermined",
    }
    assert data["tau_dis"]["sentence"].startswith(
        "The result is sensitive to tau_dis (default 0.45): at 0.6"
    )
    assert data["tau_suffix"]["sentence"].startswith(
        "The result is not sensitive to tau_suffix between 0.75 (default) and 0.5"
    )
    assert data["tau_low/tau_high"]["sentence"].startswith(
        "These seeds cannot tell whether the result is sensitive to tau_low/tau_high (default 0.25/0.75)"
    )
    cost = next(r for r in data["tau_dis"]["variants"] if r["variant"] == "tau_dis-0.6")["cost"]
    assert cost["differences"] == [800 + 10 * s for s in SEEDS]
    assert section.data["cost_scale"] == 3000
    assert "Only" not in section.markdown  # ten seeds: what the protocol asks on the phone


def test_the_experiment_gets_the_ablation_table_and_the_sentences(inputs: Inputs):
    section = ANALYSES["sensitivity"](inputs)
    assert "vs default: paired differences" in section.markdown  # the ablation's table
    assert "Is the result sensitive to the thresholds?" in section.markdown
    assert set(section.data["sensitivity"]["thresholds"]) == {
        "tau_suffix",
        "tau_dis",
        "tau_low/tau_high",
    }
    assert set(section.data["rows"]) == set(EXPERIMENTS.get("sensitivity").variants)


def test_too_few_seeds_are_said(inputs: Inputs):
    few = Inputs(inputs.exp, inputs.home, inputs.profile, inputs.summaries, SEEDS[:3], inputs.out)
    sentences = [d["sentence"] for d in sensitivity_section(few).data["thresholds"].values()]
    assert all(s.endswith("Only 3 paired seeds: the protocol asks for 10.") for s in sentences)
