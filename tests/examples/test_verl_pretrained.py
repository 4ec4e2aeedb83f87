"""adaroll/examples/verl_pretrained.py on a saved tiny model (standing in for a downloaded one)
and FrozenLake (for your env): ``prepare`` scores the checkpoints with the model and saves what
``make_setup`` reads; then, as verl would, the sampler is loaded from ``data.sampler.class_path``
over the saved start rows with the setup found through ``$ADAROLL_VERL_RUN``, the agent loops
are registered from the saved YAML, and one step of them runs against the model on CPU."""

from __future__ import annotations

from pathlib import Path

import datasets
import pytest
from omegaconf import OmegaConf
from transformers import AutoModelForCausalLM, AutoTokenizer
from verl.experimental.agent_loop.agent_loop import _agent_loop_registry
from verl.trainer.main_ppo import create_rl_sampler

from adaroll.examples import verl_pretrained
from adaroll.examples.verl_rollout import AgentLoopRunner, LocalServer, sampler_batch
from adaroll.integrations import verl as integration
from adaroll.integrations.verl import AGENTS

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")

SETUP = "adaroll.examples.verl_pretrained:make_setup"


def test_prepared_run_loads_in_verls_places_and_steps(
    saved_model: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = tmp_path / "run"
    rows_file = verl_pretrained.prepare(str(saved_model), run, tasks=1, group_size=2)
    assert {p.name for p in run.iterdir()} >= {
        "checkpoints.jsonl",
        "pivots.json",
        "settings.json",
        "agent_loops.yaml",
        "starts.parquet",
    }
    # another process: the setup comes from the files $ADAROLL_VERL_RUN names
    monkeypatch.setenv(verl_pretrained.RUN, str(run))
    monkeypatch.setattr(integration, "_SETUPS", {})
    for name in AGENTS.values():  # the workers' registry is filled from the YAML alone
        monkeypatch.delitem(_agent_loop_registry, name)
    for entry in OmegaConf.load(run / "agent_loops.yaml"):
        _agent_loop_registry[entry.name] = entry
    rows = datasets.Dataset.from_parquet(str(rows_file)).to_list()
    data = OmegaConf.create(
        {
            "adaroll_setup": SETUP,
            "adaroll_rows": 1,
            "dataloader_num_workers": 0,
            "sampler": {
                "class_path": "pkg://adaroll.integrations.verl",
                "class_name": "AdaRollCurriculumSampler",
            },
        }
    )
    sampler = create_rl_sampler(data, rows)
    scheduler = sampler.setup.scheduler
    routes = scheduler.routes  # type: ignore[attr-defined]
    pivots = [p for r in routes.values() for p in r.pivots]
    assert len(routes) == 1 and all(t.startswith("gymnasium:lake-") for t in routes)
    assert pivots and set(pivots) <= {c.id for c in sampler.setup.starts.checkpoints}
    # one step: the task's routing probes, sampled from the saved model
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"prompt_length": 4096, "response_length": 64},
                "model": {"path": str(saved_model)},
            },
            "data": data,
        }
    )
    tokenizer = AutoTokenizer.from_pretrained(saved_model)
    model = AutoModelForCausalLM.from_pretrained(saved_model)
    runner = AgentLoopRunner(config, data, LocalServer(model, tokenizer))
    batch = [rows[i] for i in iter(sampler)]
    assert [row["adaroll_purpose"] for row in batch] == ["routing"]
    groups = runner.run(batch, 2, {"temperature": 1.0})
    sampler.update(batch=sampler_batch(groups))
    records = list(sampler.feed.ledger)
    assert [r.purpose for r in records] == ["routing"]
    assert all(r.policy_samples >= 2 and r.wall_seconds > 0 for r in records)
    assert (run / "ledger.jsonl").is_file()
