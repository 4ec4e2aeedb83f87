"""The pilot (train split only) and the measured crossing jitter."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.experiments import pilot as pilot_module
from adaroll.experiments.jitter import measure
from adaroll.experiments.profiles import PROFILES, Profile
from adaroll.experts import collect_experts
from adaroll.rollout.collector import Collector
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.scheduler import SCHEDULERS
from adaroll.training.trainer import Trainer
from tests.fakes import GoPolicy, LineEnv, LineSuite

SUITE = LineSuite()


def test_jitter_re_evaluates_every_saved_mark(tmp_path: Path) -> None:
    store = collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store
    cfg = TrainConfig(
        algorithm="vanilla",
        budget=BudgetConfig(iterations=4),
        grpo=GRPOConfig(lr=0.5),
        eval=EvalConfig(k=2, every=1, final_splits=("val",), keep_policies=True),
        scheduler=SchedulerConfig(tasks_per_iteration=2),
    )
    tasks = SUITE.split("train")
    policy = GoPolicy(-2.0)
    trainer = Trainer(
        "vanilla",
        tmp_path,
        cfg,
        policy,
        SCHEDULERS.get("vanilla")(tasks=tasks, sched=cfg.scheduler, grpo=cfg.grpo),
        Collector(policy, LineEnv, store, MemorySnapshots(), history_window=2),
        LineEnv,
        {"val": SUITE.split("val")},
        seed=2,
        history_window=2,
        progress=False,
    )
    trainer.train()
    marks = sorted(p.name for p in (tmp_path / "marks").iterdir())
    assert marks == [f"{i:06d}" for i in range(5)]  # iteration 0 and every iteration after
    measure_line = partial(
        measure, load=GoPolicy.load, make_env=LineEnv, tasks=SUITE.split("val"), history_window=2
    )
    result = measure_line(tmp_path, 0.5, k=2, repeats=3)
    assert len(result.scores) == 3 and all(len(row) == 5 for row in result.scores)
    # an evaluation's seed depends on (mark, repeat) alone, so processes change nothing
    assert measure_line(tmp_path, 0.5, k=2, repeats=3, jobs=2) == result
    steps = {m["iteration"]: m["phase_env_steps"] for m in trainer.metrics if m["kind"] == "eval"}
    for row, crossing in zip(result.scores, result.crossings, strict=True):
        first = next((i for i, s in enumerate(row) if s >= 0.5), None)
        assert crossing == (steps[result.marks[first]] if first is not None else None)
    with pytest.raises(ValueError, match="2 evaluation seeds"):
        measure_line(tmp_path, 0.5, k=1, repeats=1)
    with pytest.raises(FileNotFoundError, match="keep_policies"):
        measure_line(tmp_path / "nothing", 0.5, k=1, repeats=2)


TINY = Profile(
    "mobile",
    (
        "env.options.device=noisy",
        "env.suite_options={n_pretrain: 40, n_train: 6, n_heldout: 4, n_heldout_templates: 2}",
        "sft.epochs=2",
    ),
    (),
    fixed_target=0.5,
)
"""A phone of six train tasks, for the pilots."""


def test_pilot_reads_train_only_and_predicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(PROFILES, "tiny-phone", TINY)
    result = pilot_module.run_pilot("tiny-phone", 0, tmp_path, say=lambda m: None)
    run = tmp_path / "tiny-phone" / "seed0"
    assert json.loads((run / "pilot.json").read_text()) == json.loads(json.dumps(result))
    assert set((run / "experts").iterdir()) == {
        run / "experts" / "pretrain",
        run / "experts" / "train",
    }
    assert result["train_tasks"] == 6 and sum(result["shares"].values()) == pytest.approx(1.0)
    assert result["vanilla_per_iteration"] > 0 and result["pilot_env_steps"] > 0
    assert (
        result["extra_demo_env_steps"]
        == json.loads((run / "experts" / "train" / "experts.json").read_text())["env_steps"]
    )
    savings = result["predicted_saving"]
    assert (
        savings["10"] <= savings["30"] <= savings["100"]
    )  # the fixed cost is amortised over more updates
    assert "| tiny-phone | 0 |" in pilot_module.pilot_table([result])
    with pytest.raises(KeyError, match="unknown profile"):
        pilot_module.run_pilot("no-such", 0, tmp_path)


def test_the_routing_pilot_measures_the_estimate_against_sixteen_probes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 40: on the train split, each task's reference success from 16 root probes; the
    estimates' rank correlation with it and the share of tasks each routing puts in the
    reference's mode; and a prediction per option, the default's equal to the cost pilot's."""
    from adaroll.algos.route_estimate import spearman
    from adaroll.experiments import route_pilot

    monkeypatch.setitem(PROFILES, "tiny-phone", TINY)
    result = route_pilot.run_route_pilot("tiny-phone", 0, tmp_path, say=lambda m: None)
    run = tmp_path / "tiny-phone" / "seed0"
    assert json.loads((run / "route_pilot.json").read_text()) == json.loads(json.dumps(result))
    tasks = result["tasks"]
    assert len(tasks) == 6 and all(0 <= t["reference"] <= 1 for t in tasks.values())
    assert all(t["reference"] * 16 == round(t["reference"] * 16) for t in tasks.values())
    assert result["reference_env_steps"] > 0 and sum(result["reference_modes"].values()) == 6
    ref = [t["reference"] for t in tasks.values()]
    assert result["spearman"]["match"] == spearman([t["match"] for t in tasks.values()], ref)
    # routing with every task probed is the 4-probe pass, whatever the estimate
    agreement = result["mode_agreement"]
    assert agreement["match-16"] == agreement["likelihood-16"] == agreement["probes"]
    cost = json.loads((run / "pilot.json").read_text())
    default = result["predictions"]["default"]
    assert default["hybrid_per_iteration"] == pytest.approx(cost["hybrid_per_iteration"])
    fixed = cost["routing_pass"] + cost["extra_demo_env_steps"]
    assert default["saving_30"] == pytest.approx(
        1
        - cost["hybrid_per_iteration"] / cost["vanilla_per_iteration"]
        - fixed / (30 * cost["vanilla_per_iteration"])
    )
    assert result["predictions"]["learn-quota"] == default  # no env term in the model
    estimate = result["predictions"]["learn-estimate"]
    assert estimate["fixed_env_steps"] < default["fixed_env_steps"] or len(tasks) <= 8
    # the measurements are kept: a second call re-analyses them without collecting again
    monkeypatch.setattr(route_pilot, "expert_checkpoints", None)  # would fail if called
    assert route_pilot.run_route_pilot("tiny-phone", 0, tmp_path, say=lambda m: None) == result
    table = route_pilot.route_pilot_table([result])
    assert "| tiny-phone | 0 |" in table and "| tiny-phone | learn |" in table
