"""The cost model fed from a phase's metrics, checked against the env steps its ledger holds."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.experts import collect_experts
from adaroll.training.cost_report import cost_lines, phase_costs, predicted_savings
from tests.fakes import LineEnv, LineSuite
from tests.training.runs import line_trainer

SUITE = LineSuite()
HYBRID_TOLERANCE = 0.25
"""The Hybrid model averages mode shares over iterations and spreads a Local task's probes over
its K visits; over a few iterations of a few tasks it is within this fraction of the ledger."""


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def run(tmp: Path, store, algorithm: str, iterations: int = 8):
    cfg = TrainConfig(
        algorithm=algorithm,
        budget=BudgetConfig(iterations=iterations),
        grpo=GRPOConfig(lr=0.3),
        eval=EvalConfig(k=1, every=None, final_splits=("train",)),
        scheduler=SchedulerConfig(tasks_per_iteration=2),
    )
    trainer = line_trainer(tmp, store, cfg, seed=7)
    trainer.train()
    return trainer, cfg, len(SUITE.split("train"))


def test_vanilla_prediction_equals_the_ledger(tmp_path: Path, store) -> None:
    trainer, cfg, n = run(tmp_path, store, "vanilla")
    costs = phase_costs(list(trainer.metrics), "vanilla", cfg, n)
    ledger = trainer.ledger.totals(mode="vanilla").env_steps
    assert costs["measured_per_iteration"] == pytest.approx(ledger / costs["iterations"])
    # every sample acts at each decision here, so lengths by outcome and success give the cost
    assert costs["predicted_per_iteration"] == pytest.approx(costs["measured_per_iteration"])
    assert costs["optimizer_steps"] == trainer.optimizer_steps


def test_hybrid_prediction_is_within_tolerance_and_the_routing_pass_is_exact(
    tmp_path: Path, store
) -> None:
    trainer, cfg, n = run(tmp_path, store, "hybrid", iterations=10)
    costs = phase_costs(list(trainer.metrics), "hybrid", cfg, n)
    assert costs["routing_iterations"] == -(-n // cfg.scheduler.tasks_per_iteration)
    first = [m for m in trainer.metrics if m["kind"] == "iteration"][
        costs["routing_iterations"] - 1
    ]
    assert costs["routing_pass_measured"] == first["env_steps"]
    assert costs["routing_pass_predicted"] == pytest.approx(costs["routing_pass_measured"])
    measured, predicted = costs["measured_per_iteration"], costs["predicted_per_iteration"]
    assert measured > 0 and abs(predicted - measured) <= HYBRID_TOLERANCE * measured
    assert sum(costs["shares"].values()) == pytest.approx(1.0)


def test_savings_pair_hybrid_with_its_vanilla() -> None:
    phases = {
        "base_vanilla": {"predicted_per_iteration": 100.0, "updating_iterations": 20},
        "base_hybrid": {"predicted_per_iteration": 40.0, "routing_pass_predicted": 300.0},
    }
    rows = {
        "base_vanilla": {"demo_env_steps": 50, "reached_target": True, "steps_to_target": 1000},
        "base_hybrid": {"demo_env_steps": 150, "reached_target": True, "steps_to_target": 600},
    }
    curves = {"base_vanilla": [{"iteration": 0, "val_avg": 0.1}, {"iteration": 10, "val_avg": 0.5}]}
    s = predicted_savings(phases, rows, curves, target=0.4)["base_hybrid"]
    # N = 10 updates to the target; fixed = routing pass 300 + 100 extra demonstration steps
    assert s["updates"] == 10 and s["fixed_env_steps"] == 400
    assert s["predicted_saving"] == pytest.approx(1 - 0.4 - 400 / 1000)
    assert s["measured_saving"] == pytest.approx(0.4)


def test_a_start_policy_already_at_the_target_predicts_no_saving() -> None:
    # Action and SFT often start above Base->Vanilla's target: N = 0 is "no update needed",
    # not "every update it made" (which would predict a saving nobody could measure)
    phases = {
        "sft_vanilla": {"predicted_per_iteration": 100.0, "updating_iterations": 20},
        "sft_hybrid": {"predicted_per_iteration": 40.0, "routing_pass_predicted": 300.0},
    }
    rows = {
        "sft_vanilla": {"demo_env_steps": 50, "reached_target": True, "steps_to_target": 50},
        "sft_hybrid": {"demo_env_steps": 50, "reached_target": True, "steps_to_target": 50},
    }
    curves = {"sft_vanilla": [{"iteration": 0, "val_avg": 0.6}, {"iteration": 10, "val_avg": 0.7}]}
    s = predicted_savings(phases, rows, curves, target=0.4)["sft_hybrid"]
    assert s["updates"] == 0 and s["predicted_saving"] == 0.0
    assert s["measured_saving"] == pytest.approx(0.0)


def test_the_printout_says_when_there_is_no_saving_to_predict() -> None:
    summary = {
        "cost_model": {
            "phases": {},
            "savings": {
                "sft_hybrid": {
                    "vanilla": "sft_vanilla",
                    "updates": 0,
                    "predicted_saving": 0.0,
                    "break_even_updates": 4.0,
                    "measured_saving": 0.0,
                },
                "base_hybrid": {
                    "vanilla": "base_vanilla",
                    "updates": 12,
                    "predicted_saving": 0.483,
                    "break_even_updates": 3.9,
                },
            },
        }
    }
    lines = cost_lines(summary, {"sft_vanilla": "SFT->Vanilla"})
    assert "predicted saving none (SFT->Vanilla is at the target before any update)" in lines[1]
    assert "predicted saving S(12) = +48.3%" in lines[2] and "n/a" in lines[2]
