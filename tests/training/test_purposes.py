"""Where a run's env steps go and where its gradient comes from (issue 40, item 1): the table
per mode and purpose, computed by hand from the groups a small Hybrid run collected; and every
probe, first or later, on the bill."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.config import BudgetConfig, EvalConfig, GRPOConfig, SchedulerConfig, TrainConfig
from adaroll.experts import collect_experts
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.purposes import mean_purposes, phase_purposes, purpose_table
from tests.fakes import LineEnv, LineSuite
from tests.training.runs import RecordingCollector, line_trainer, recorded

SUITE = LineSuite()


@pytest.fixture(scope="module")
def store():
    return collect_experts(LineEnv, SUITE, SUITE.split("train"), progress=False).store


def small_hybrid(tmp: Path, store):  # type: ignore[no-untyped-def]
    """Four tasks, two per iteration, a Local re-evaluation at every visit (tau_low above any
    success keeps tasks Local), five iterations: routing pass, one-step groups and
    re-evaluations."""
    cfg = TrainConfig(
        algorithm="hybrid",
        budget=BudgetConfig(iterations=5),
        grpo=GRPOConfig(lr=0.2, group_size=4),
        eval=EvalConfig(k=1, every=None, final_splits=("train",)),
        scheduler=SchedulerConfig(
            tasks_per_iteration=2, local_reeval_every=1, tau_low=1.0, tau_high=1.0
        ),
    )
    trainer = line_trainer(tmp, store, cfg)
    trainer.collector = RecordingCollector(
        trainer.policy, LineEnv, store, MemorySnapshots(), history_window=2
    )
    trainer.train()
    return trainer


def test_the_purpose_table_is_what_the_groups_were(tmp_path: Path, store) -> None:
    trainer = small_hybrid(tmp_path, store)
    groups = recorded(trainer)
    by_hand: dict[str, dict[str, int]] = {}
    for g in groups:
        row = by_hand.setdefault(
            f"{g.job.ledger_mode}/{g.job.purpose}",
            {"env_steps": 0, "groups": 0, "groups_skipped": 0, "gradient_decisions": 0},
        )
        row["env_steps"] += g.cost.env_steps
        row["groups"] += 1
        if g.job.purpose == "train":  # probes never train here; a train group with equal
            equal = len(set(g.rewards)) == 1  # rewards is skipped, the others carry gradients
            row["groups_skipped"] += int(equal)
            row["gradient_decisions"] += 0 if equal else sum(len(d) for d in g.decisions)
    table = phase_purposes(list(trainer.metrics))
    assert table == by_hand
    # the first visits route (two iterations for four tasks), the later probes re-evaluate
    assert table["root/routing"]["groups"] == 4 and table["root/reeval"]["groups"] > 0
    assert table["onestep/train"]["env_steps"] == 0 < table["onestep/train"]["groups"]
    assert list(table)[:3] == ["root/routing", "root/reeval", "onestep/train"]
    # the ledger counted the same env steps per mode and purpose
    ledger = {
        f"{m}/{p}": t.env_steps
        for (m, p), t in trainer.ledger.totals_by("mode", "purpose").items()
        if p in ("train", "routing", "reeval")
    }
    assert ledger == {k: v["env_steps"] for k, v in table.items()}
    text = purpose_table({"base_hybrid": table}, {"base_hybrid": "Base->Hybrid"})
    assert "| Base->Hybrid | re-evaluation |" in text and "| Base->Hybrid | routing pass |" in text
    assert mean_purposes([{"x": table}, {"x": table}]) == {
        "x": {k: {c: float(v) for c, v in row.items()} for k, row in table.items()}
    }


def test_every_probe_is_on_the_bill(tmp_path: Path, store) -> None:
    """First probes (routing) and later ones (reeval) cost env steps on the phase's bill, and
    the budget counts them."""
    trainer = small_hybrid(tmp_path, store)
    groups = recorded(trainer)
    for purpose in ("routing", "reeval"):
        probes = [g for g in groups if g.job.purpose == purpose]
        steps = sum(g.cost.env_steps for g in probes)
        assert probes and steps > 0, purpose
        assert trainer.ledger.training_cost(purpose=purpose).env_steps == steps, purpose
    assert trainer._totals()["phase_env_steps"] >= sum(g.cost.env_steps for g in groups)
    assert trainer.ledger.training_cost().env_steps == sum(g.cost.env_steps for g in groups)
