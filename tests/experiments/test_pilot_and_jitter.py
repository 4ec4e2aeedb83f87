"""The pilot (train split only) and the measured crossing jitter."""

from __future__ import annotations

import json
from functools import partial
from pathlib import Path

import pytest

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.experiments import pilot as pilot_module
from adaroll.experiments.jitter import measure
from adaroll.experiments.specs import PROFILES, Profile
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


def test_pilot_reads_train_only_and_predicts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tiny = Profile(
        "mobile",
        (
            "env.options.device=noisy",
            "env.suite_options={n_pretrain: 40, n_train: 6, n_heldout: 4, n_heldout_templates: 2}",
            "sft.epochs=2",
        ),
        (),
        fixed_target=0.5,
    )
    monkeypatch.setitem(PROFILES, "tiny-phone", tiny)
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
