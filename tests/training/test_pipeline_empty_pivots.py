"""A one-step phase whose pivot set is empty is not trained on nothing: it is skipped, hands on its
start policy, bills no iteration or selection, and the run says so (log, done.json, summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from adaroll.config import load_config
from adaroll.policies import load_policy
from adaroll.training.pipeline import Pipeline

NO_PIVOTS = (  # D > 1 is impossible and no task falls back to its best checkpoints
    "stage1.pivots.tau_dis=1.0",
    "stage1.pivots.fallback_top_k=0",
    "rl.pivots.tau_dis=1.0",
    "rl.pivots.fallback_top_k=0",
)
TINY = (
    "configurations=[action, base_onestep]",
    "env.suite_options={n_pretrain: 40, n_train: 4, n_val: 4, n_heldout: 4, n_heldout_templates: 2}",
    "sft.epochs=2",
    "stage1.budget={iterations: 2}",
    "rl.budget={env_steps: 200, policy_samples: 200}",
)


@pytest.fixture(scope="module")
def run(
    tmp_path_factory: pytest.TempPathFactory, module_one_torch_thread: None
) -> tuple[Path, dict, list[str]]:
    out = tmp_path_factory.mktemp("empty")
    said: list[str] = []
    summary = Pipeline(
        load_config(None, [*TINY, *NO_PIVOTS]), out, progress=False, say=said.append
    ).run()
    return out, summary, said


def test_the_run_says_the_pivot_set_is_empty(run) -> None:
    out, summary, said = run
    for phase in ("stage1", "base_onestep"):
        assert any(m.startswith(f"{phase}: the pivot set is empty") for m in said), said
        done = json.loads((out / phase / "done.json").read_text())
        assert done["stopped_by"] == "empty pivot set" and done["iteration"] == 0
        assert not (out / phase / "metrics.jsonl").exists()  # no iteration, no evaluation
    rows = summary["configurations"]
    assert rows["action"]["empty_pivots"] and rows["base_onestep"]["empty_pivots"]
    assert "empty_pivots" not in rows["base"]


def test_nothing_is_trained_or_selected_and_only_the_scoring_is_billed(run) -> None:
    out, summary, _ = run
    base, action = summary["configurations"]["base"], summary["configurations"]["action"]
    assert action["optimizer_steps"] == 0 and action["selection_env_steps"] == 0
    assert action["policy_samples"] == action["scoring_samples"] > 0
    assert action["train_samples"] == base["train_samples"]
    onestep = summary["configurations"]["base_onestep"]
    assert onestep["heldout_avg4"] is None and summary["curves"]["base_onestep"] == []
    cfg = load_config(None, [*TINY, *NO_PIVOTS])
    before = load_policy(cfg.policy, out / "policies" / "base")
    after = load_policy(cfg.policy, out / "stage1" / "start")
    for a, b in zip(before.parameters(), after.parameters(), strict=True):
        assert torch.equal(a, b)  # Action is Base, unchanged


def test_a_resumed_run_finds_the_skipped_phase_done(run) -> None:
    out, summary, _ = run
    said: list[str] = []
    again = Pipeline(
        load_config(None, [*TINY, *NO_PIVOTS]), out, progress=False, say=said.append
    ).run()
    assert again["configurations"] == summary["configurations"]
