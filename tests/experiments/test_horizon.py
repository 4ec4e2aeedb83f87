"""The horizon sweep (issue 28): a budget read from a longer run is the run with that budget;
the analysis cuts each run where that budget ends, sets the target inside it and pairs the
costs by seed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from adaroll.config import ConfigError, load_config
from adaroll.experiments.horizon import (
    HYBRID_RUN,
    SFT_RUN,
    budget_cell,
    cut_at_budget,
    horizon,
    noise_level_target,
)
from adaroll.experiments.inputs import Inputs
from adaroll.experiments.profiles import PROFILES, horizon_budget
from adaroll.experiments.runner import Unit, copy_base, overrides_for, run_experiments
from adaroll.experiments.specs import EXPERIMENTS
from adaroll.experiments.variants import VARIANTS
from adaroll.training.pipeline import Pipeline


def _point(phase: int, val: float, *, samples: int | None = None, before: int = 500) -> dict:
    return {
        "iteration": phase // 100,
        "phase_env_steps": phase,
        "policy_samples": phase if samples is None else samples,
        "total_env_steps": before + phase,
        "train_samples": phase,
        "val_avg": val,
    }


def test_a_cut_ends_at_the_evaluation_where_that_budget_would_have_stopped() -> None:
    curve = [_point(0, 0.1), _point(210, 0.2), _point(405, 0.3), _point(800, 0.4)]
    assert cut_at_budget(curve, 400) == curve[:3]
    assert cut_at_budget(curve, 800) == curve
    # policy samples count against the budget as env steps do (one-step groups step no env)
    sampled = [_point(0, 0.1), _point(100, 0.2, samples=420), _point(405, 0.3)]
    assert cut_at_budget(sampled, 400) == sampled[:2]
    with pytest.raises(ValueError, match="stopped at 800 phase env steps, before the budget"):
        cut_at_budget(curve, 1200)


def _summary(configuration: str, curve: list[dict[str, Any]]) -> dict[str, Any]:
    return {"configurations": {configuration: {}}, "curves": {configuration: curve}}


def test_the_saving_is_paired_by_seed_with_the_target_inside_each_budget(tmp_path: Path) -> None:
    profile = PROFILES["mobile-h6"]
    short, long = horizon_budget("h6", 10), horizon_budget("h6", 30)
    mark = short // 4

    def curve(vals: list[float], before: int) -> list[dict[str, Any]]:
        return [_point(i * mark, v, before=before) for i, v in enumerate(vals)]

    vanilla = [0.2, 0.2, 0.3, 0.4, 0.4, 0.4, 0.5, 0.5, 0.5, 0.6, 0.6, 0.6, 0.6]
    hybrid = [0.2, 0.4, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]
    summaries = {
        "default": {s: _summary("base_vanilla", curve(vanilla, 500)) for s in (0, 1)},
        HYBRID_RUN: {s: _summary("base_hybrid", curve(hybrid, 900)) for s in (0, 1)},
    }
    x = Inputs(EXPERIMENTS.get("horizon"), tmp_path, profile, summaries, (0, 1), tmp_path)
    small = budget_cell(x, 10, short)
    # within 10 iterations the target is the mean of marks 2-4 (0.3, 0.4, 0.4): Vanilla reaches
    # it at mark 3, Hybrid at mark 1 (its own bill: 400 more demo env steps before the phase)
    seed = small["seeds"][0]
    assert seed["target"] == pytest.approx(1.1 / 3)
    assert seed["vanilla"]["value"] == 500 + 3 * mark and seed["hybrid"]["value"] == 900 + mark
    assert seed["saved"] == 2 * mark - 400 and small["saved"][0] == seed["saved"]
    assert small["saved_fraction"][0] == pytest.approx(seed["saved"] / (500 + 3 * mark))
    assert small["budget"] == short and small["predicted_saving"] == 0.087
    big = budget_cell(x, 30, long)
    # within 30 the target is 0.6, which Vanilla first reaches at mark 9 and Hybrid at mark 2
    assert big["seeds"][0]["vanilla"]["value"] == 500 + 9 * mark and big["budget"] == long
    assert big["seeds"][0]["hybrid"]["value"] == 900 + 2 * mark
    section = horizon(x)
    assert small["imitation"] is None and "SFT->Vanilla: not trained" in section.markdown
    # imitation first: SFT alone is above the 10-iteration target (0.5), so its cost is its bill
    sft_runs = {
        s: {
            "configurations": {"sft": {"val_avg4": 0.5, "total_env_steps": 900}, "sft_vanilla": {}},
            "curves": {"sft_vanilla": curve([0.5] + [0.55] * 12, 900)},
        }
        for s in (0, 1)
    }
    x = Inputs(x.exp, tmp_path, profile, {**summaries, SFT_RUN: sft_runs}, (0, 1), tmp_path)
    imitation = budget_cell(x, 10, short)["imitation"]
    assert imitation["seeds"][0]["sft"] == {"value": 900, "budget": 900, "val": 0.5}
    assert imitation["seeds"][0]["saved"] == 500 + 3 * mark - 900
    assert budget_cell(x, 30, long)["imitation"]["seeds"][0]["sft"]["value"] is None  # 0.5 < 0.6
    section = horizon(x)
    assert "saved by SFT->Vanilla vs Base->Vanilla" in section.markdown
    assert (tmp_path / "saving.png").exists() and "| 10 (" in section.markdown
    assert (tmp_path / "saving_by_horizon.png").exists()
    # a Hybrid that never reaches the target is counted at the larger bill of the pair
    flat = {s: _summary("base_hybrid", curve([0.1] * 13, 900)) for s in (0, 1)}
    x = Inputs(x.exp, tmp_path, profile, {**summaries, HYBRID_RUN: flat}, (0, 1), tmp_path)
    censored = budget_cell(x, 10, short)["seeds"][0]
    assert censored["hybrid"]["value"] is None
    assert censored["saved"] == 500 + 3 * mark - (900 + 4 * mark)


def test_each_cell_says_what_an_optimizer_step_teaches(tmp_path: Path) -> None:
    """Optimizer steps at the cut come from the phase's metrics (the last iteration inside it);
    the Val gain is from the phase's own iteration-0 evaluation to the cut."""
    short = horizon_budget("h6", 10)
    mark = short // 4

    def curve(vals: list[float], before: int) -> list[dict[str, Any]]:
        return [_point(i * mark, v, before=before) for i, v in enumerate(vals)]

    summaries = {
        "default": {0: _summary("base_vanilla", curve([0.2, 0.3, 0.3, 0.4, 0.4] * 3, 500))},
        HYBRID_RUN: {0: _summary("base_hybrid", curve([0.2, 0.4, 0.5, 0.6, 0.6] * 3, 900))},
    }
    x = Inputs(
        EXPERIMENTS.get("horizon"), tmp_path, PROFILES["mobile-h6"], summaries, (0,), tmp_path
    )
    assert "What an update teaches" not in horizon(x).markdown  # no metrics: no table
    for variant, phase, per_iteration in (
        ("default", "base_vanilla", 2),
        (HYBRID_RUN, "base_hybrid", 3),
    ):
        metrics = x.run_dir(variant, 0) / phase / "metrics.jsonl"
        metrics.parent.mkdir(parents=True)
        records = [{"kind": "eval", "iteration": 0}] + [
            {"kind": "iteration", "iteration": i, "optimizer_steps": per_iteration * i}
            for i in range(1, 400)
        ]
        metrics.write_text("".join(json.dumps(r) + "\n" for r in records))
    seed = budget_cell(x, 10, short)["seeds"][0]
    last = (4 * mark) // 100  # the iteration of the cut's evaluation
    assert seed["optimizer_steps"] == {"vanilla": 2 * last, "hybrid": 3 * last}
    row = next(line for line in horizon(x).markdown.splitlines() if line.startswith("| 10 ("))
    teaching = horizon(x).markdown.split("What an update teaches")[1]
    gains = next(line for line in teaching.splitlines() if line.startswith("| 10 ("))
    assert f"| +20.00 | {2 * last} | {100 * 20 / (2 * last):+.2f} |" in gains
    assert f"| +40.00 | {3 * last} | {100 * 40 / (3 * last):+.2f} |" in gains
    assert f"| {2 * last} ± 0 | {3 * last} ± 0 |" in row


def test_a_target_within_the_noise_of_vanillas_start_is_flagged(tmp_path: Path) -> None:
    """A cell whose target is not clearly above Base->Vanilla's own iteration-0 evaluation
    (paired over seeds) is marked: reaching it reads evaluation noise. One that Vanilla
    clearly climbs to is not."""
    short = horizon_budget("h6", 10)
    mark = short // 4

    def cell(starts: list[float], rise: list[float]) -> tuple[dict[str, Any], str]:
        summaries: dict[str, dict[int, Any]] = {"default": {}, HYBRID_RUN: {}}
        for seed, (start, up) in enumerate(zip(starts, rise, strict=True)):
            vals = [start] + [start + up] * 12
            points = [_point(i * mark, v) for i, v in enumerate(vals)]
            summaries["default"][seed] = _summary("base_vanilla", points)
            summaries[HYBRID_RUN][seed] = _summary("base_hybrid", points)
        seeds = tuple(range(len(starts)))
        x = Inputs(
            EXPERIMENTS.get("horizon"), tmp_path, PROFILES["mobile-h6"], summaries, seeds, tmp_path
        )
        return budget_cell(x, 10, short), horizon(x).markdown

    starts = [0.3, 0.5, 0.4, 0.6, 0.35]
    learned, text = cell(starts, [0.1, 0.12, 0.08, 0.1, 0.11])
    assert learned["target_margin"][1] > 0 and not noise_level_target(learned)
    assert "not clearly above" not in text
    noise, text = cell(starts, [0.05, -0.06, 0.04, -0.03, 0.0])  # the same policy, re-evaluated
    assert noise["target_margin"][1] <= 0 <= noise["target_margin"][2]
    assert noise_level_target(noise)
    assert "| 10 (6,672) * |" in text and "not clearly above" in text


def test_a_phase_read_at_a_smaller_budget_is_the_phase_trained_with_it(tmp_path: Path) -> None:
    """The premise of reading every budget from one run: the quick sweep (budget 800, marks
    every 400) cut at 400 makes the evaluations that the same seed trained with budget 200 makes, for
    Vanilla and Hybrid alike. Of the optional variants only the one asked for trains and is
    reported (the combined option first, as issue 40 allows when compute is short)."""
    (results,) = run_experiments(
        ["horizon"],
        profile="mobile-h6",
        seeds=[0],
        quick=True,
        root=tmp_path,
        variants=["learn"],
        say=print,
    )
    cells = json.loads((results / "results.json").read_text())["cells"]
    assert [c["budget"] for c in cells] == [400, 800] and len(cells[0]["seeds"]) == 1
    text = (results / "results.md").read_text()
    assert "What an update teaches" in text and VARIANTS["learn"].label in text
    assert VARIANTS["learn-quota"].label not in text
    runs = results.parent / "runs"
    assert sorted(p.name for p in runs.iterdir()) == sorted(["default", HYBRID_RUN, "learn"])
    unit = Unit("default", 0, ("base", "base_vanilla", "base_hybrid"))
    overrides = [
        *overrides_for(PROFILES["mobile-h6"], True, unit),
        "rl.budget={env_steps: 400, policy_samples: 400}",
    ]
    short_dir = tmp_path / "short"
    short_dir.mkdir()
    copy_base(runs / "default" / "seed0", short_dir)
    Pipeline(load_config(None, overrides), short_dir, progress=False, say=print).run()
    short = json.loads((short_dir / "summary.json").read_text())["curves"]
    keys = ("iteration", "total_env_steps", "policy_samples", "train_samples", "val_avg")
    for name, variant in (("base_vanilla", "default"), ("base_hybrid", HYBRID_RUN)):
        whole = json.loads((runs / variant / "seed0" / "summary.json").read_text())["curves"][name]
        cut = cut_at_budget(whole, 400)
        assert [{k: p[k] for k in keys} for p in cut] == [
            {k: p[k] for k in keys} for p in short[name]
        ], name
        assert len(whole) > len(cut)  # the whole run went on past the cut
    # the optimizer steps a cut reports (from the long run's metrics) are the short run's own
    made = json.loads((short_dir / "summary.json").read_text())["configurations"]
    assert cells[0]["seeds"][0]["optimizer_steps"] == {
        "vanilla": made["base_vanilla"]["optimizer_steps"],
        "hybrid": made["base_hybrid"]["optimizer_steps"],
    }
    assert made["base_vanilla"]["optimizer_steps"] > 0


def test_the_sweep_runs_on_the_horizon_profiles_only(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match="'horizon' runs on the profiles mobile-h6, .*not 'mobile'"
    ):
        run_experiments(["horizon"], profile="mobile", seeds=[0], quick=True, root=tmp_path)
    assert not any(tmp_path.iterdir())  # refused before anything was trained


def test_the_train_target_stands_beside_the_val_target_in_every_cell(tmp_path: Path) -> None:
    """The paper's yardstick: each cell's Train target is the mean of Vanilla's last three Train
    Avg@4 inside the cut, with both sides' costs to it, the paired saving and its verdict; runs
    without Train at the marks show "-" there instead of failing."""
    short = horizon_budget("h6", 10)
    mark = short // 4

    def curve(vals: list[float], train: list[float] | None, before: int) -> list[dict[str, Any]]:
        points = [_point(i * mark, v, before=before) for i, v in enumerate(vals)]
        for i, p in enumerate(points):
            p["train_avg"] = None if train is None else train[i]
        return points

    val = [0.2] + [0.3] * 12
    summaries = {
        "default": {
            s: _summary("base_vanilla", curve(val, [0.2, 0.3, 0.4, 0.5, 0.5] + [0.5] * 8, 500))
            for s in (0, 1, 2)
        },
        HYBRID_RUN: {
            s: _summary("base_hybrid", curve(val, [0.2, 0.6] + [0.6] * 11, 900)) for s in (0, 1, 2)
        },
    }
    x = Inputs(
        EXPERIMENTS.get("horizon"), tmp_path, PROFILES["mobile-h6"], summaries, (0, 1, 2), tmp_path
    )
    cell = budget_cell(x, 10, short)
    seed = cell["seeds"][0]["train"]
    # within the cut (marks 0-4) the Train target is (0.4 + 0.5 + 0.5) / 3; Vanilla reaches it
    # at mark 3, Hybrid at mark 1
    assert seed["target"] == pytest.approx(1.4 / 3)
    assert seed["vanilla"]["value"] == 500 + 3 * mark and seed["hybrid"]["value"] == 900 + mark
    assert seed["saved"] == 2 * mark - 400
    assert cell["train"]["saved"][0] == seed["saved"] and cell["train"]["verdict"] == "held"
    assert cell["verdict"] in ("held", "contradicted", "inconclusive")
    row = next(line for line in horizon(x).markdown.splitlines() if line.startswith("| 10 ("))
    assert f"| {500 + 3 * mark:,} | {900 + mark:,} |" in row and "| held |" in row
    # Val-only runs (before the horizon profiles evaluated train at the marks)
    for variant in summaries:
        for s in summaries[variant].values():
            for p in next(iter(s["curves"].values())):
                p["train_avg"] = None
    assert budget_cell(x, 10, short)["train"] is None
    row = next(line for line in horizon(x).markdown.splitlines() if line.startswith("| 10 ("))
    assert "| - | - | - | - | - |" in row


def test_horizon_profiles_evaluate_train_at_the_marks_and_the_others_do_not() -> None:
    """The paper's yardstick is on the horizon profiles only (report only: training and Val
    unchanged); the mobile and web profiles keep their overrides (runs of them are under way)."""
    for name, profile in PROFILES.items():
        cfg = load_config(None, list(profile.overrides))
        horizon_profile = name.startswith("mobile-h")
        assert ("train" in cfg.rl.eval.splits) == horizon_profile, name
        assert cfg.rl.eval.select_on == "val", name


def test_each_option_is_paired_with_the_same_vanilla_and_default_hybrid(tmp_path: Path) -> None:
    """Issue 40: an option's Base->Hybrid is cut at each budget and costed against the cell's
    targets; its saving against Vanilla and against the default Hybrid are paired by seed, the
    promotion rule needs ten seeds, and the probes' share comes from its runs' purposes."""
    from adaroll.experiments.horizon_options import option_cell, options_section

    short = horizon_budget("h6", 10)
    mark = short // 4

    def curve(vals: list[float], before: int) -> list[dict[str, Any]]:
        return [_point(i * mark, v, before=before) for i, v in enumerate(vals)]

    seeds = tuple(range(10))
    vanilla = [0.2, 0.2, 0.3, 0.4, 0.4] + [0.4] * 8
    default = [0.2, 0.2, 0.2, 0.2, 0.4] + [0.4] * 8
    faster = [0.2, 0.4] + [0.4] * 11
    purposes = {
        "base_hybrid": {"root/routing": {"env_steps": 30}, "suffix/train": {"env_steps": 70}}
    }
    only_probes = {"base_hybrid": {"root/routing": {"env_steps": 30}}}
    summaries = {
        "default": {s: _summary("base_vanilla", curve(vanilla, 500)) for s in seeds},
        HYBRID_RUN: {s: _summary("base_hybrid", curve(default, 900)) for s in seeds},
        "learn": {
            s: {
                **_summary("base_hybrid", curve(faster, 900)),
                "purposes": purposes if s else only_probes,
            }
            for s in seeds
        },
    }
    x = Inputs(
        EXPERIMENTS.get("horizon"), tmp_path, PROFILES["mobile-h6"], summaries, seeds, tmp_path
    )
    cell = budget_cell(x, 10, short)
    from adaroll.experiments.horizon import to_target

    option = option_cell(x, cell, "learn", cut_at_budget, to_target)
    # target (0.3 + 0.4 + 0.4) / 3: Vanilla at mark 3, the default Hybrid at mark 4, the option at 1
    assert option["val"]["costs"][0] == {"value": 900 + mark, "budget": 900 + 4 * mark}
    assert option["val"]["saved"][0] == (500 + 3 * mark) - (900 + mark)
    assert (
        option["val"]["vs_default"][0] == 3 * mark and option["val"]["vs_default_verdict"] == "held"
    )
    assert option["promotion"] == "promote" and option["train"] is None
    text, data = options_section(x, [cell], cut_at_budget, to_target, "h6")
    assert len(data["options"]["learn"]) == 1
    row = next(line for line in text.splitlines() if "| all four options |" in line)
    # pooled over seeds, as the purpose table: 300 of 930 env steps (a mean of the seeds' own
    # shares would say 37%)
    assert "| promote |" in row and row.endswith("| 32% |")
    # fewer than ten seeds: never promoted, whatever the saving
    few = Inputs(x.exp, tmp_path, x.profile, summaries, seeds[:3], tmp_path)
    assert (
        option_cell(few, budget_cell(few, 10, short), "learn", cut_at_budget, to_target)[
            "promotion"
        ]
        == "keep the default: too few seeds"
    )
    assert "| all four options |" in horizon(x).markdown


def test_a_wrong_variants_filter_is_refused_before_anything_trains(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from adaroll.cli import app

    args = ["experiment", "horizon", "--env", "mobile-h12", "--root", str(tmp_path / "r")]
    result = CliRunner().invoke(app, [*args, "--variants", "learn,lern"])
    assert isinstance(result.exception, ConfigError)
    assert "'lern' not an optional variant of horizon" in str(result.exception)
    assert "learn-quota" in str(result.exception)  # the valid names are listed
    assert not (tmp_path / "r").exists()
