"""The verl integration with verl installed: its ``AbstractCurriculumSampler`` subclass and the
agent loops registered in verl's own registry, built the way verl's ``AgentLoopWorker`` builds
them (``hydra.utils.instantiate`` of the registry entry) and run as concurrent coroutines
against a fake LLM server (verl's trainer, Ray workers and real servers need GPUs: untested
here, see docs/integrations.md). Two steps: the routing probes (Root rows), then Suffix rows
restored from checkpoints; the sampler's ``update(batch)`` bills each group and routes."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import hydra  # verl and its deps are required: a missing one fails collection, never skips
import numpy as np
import pytest
from omegaconf import OmegaConf
from verl.experimental.agent_loop.agent_loop import DictConfigWrap, _agent_loop_registry
from verl.protocol import DataProto
from verl.trainer.main_ppo import create_rl_sampler
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from adaroll.integrations import verl as integration
from adaroll.integrations.verl import AGENTS, AdaRollCurriculumSampler, start_rows
from adaroll.policies.hf_tiny import build_tiny_tokenizer
from tests.integrations import verl_setup

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")

SETUP = "tests.integrations.verl_setup:make_setup"
TEMPLATE = (
    "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}\n{% endfor %}"
    "{% if add_generation_prompt %}<|assistant|>{% endif %}"
)


class FakeServer:
    """verl's server manager as the loops see it: ``generate`` returns token ids (always the
    action ``done()``) and their log-probs; it records the prompts it was sent."""

    def __init__(self, tokenizer) -> None:
        self.tokenizer, self.prompts = tokenizer, []

    async def generate(
        self, request_id, *, prompt_ids, sampling_params, image_data=None, video_data=None
    ):
        self.prompts.append(list(prompt_ids))
        ids = self.tokenizer.encode("done()", add_special_tokens=False) + [
            self.tokenizer.eos_token_id
        ]
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids))


@pytest.fixture
def sampler(tmp_path: Path):
    verl_setup.LEDGER = tmp_path / "ledger.jsonl"
    integration._SETUPS.clear()
    rows = start_rows(integration.load_setup(SETUP))
    data_config = OmegaConf.create(
        {
            "adaroll_setup": SETUP,
            "dataloader_num_workers": 0,
            "adaroll_rows": 64,
            "sampler": {
                "class_path": "pkg://adaroll.integrations.verl",
                "class_name": "AdaRollCurriculumSampler",
            },
        }
    )
    sampler = create_rl_sampler(data_config, rows)  # verl's own loading of data.sampler.class_path
    assert isinstance(sampler, AdaRollCurriculumSampler)
    yield sampler, rows, data_config
    integration._SETUPS.clear()


def run_step(indices, rows, data_config, server, tokenizer):
    """What verl does for one step: G agent loops per row, concurrently; the batch's non-tensor
    fields as verl's postprocessing lays them out (one ``uid`` per row, extra fields)."""
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"prompt_length": 8192, "response_length": 512},
                "model": {"path": "tiny"},
            }
        }
    )

    def loop(name):
        return hydra.utils.instantiate(
            _agent_loop_registry[name],
            trainer_config=DictConfigWrap(config),
            server_manager=server,
            tokenizer=tokenizer,
            processor=None,
            dataset_cls=RLHFDataset,
            data_config=DictConfigWrap(data_config),
        )

    async def everything():
        jobs = [
            loop(rows[i]["agent_name"]).run({"temperature": 1.0}, **rows[i])
            for i in indices
            for _ in range(verl_setup.G)
        ]
        return await asyncio.gather(*jobs)

    # a loop of its own in a thread of its own: a test before this one (Playwright's sync API in
    # the BrowserGym tests) may leave an event loop marked running in the main thread
    with ThreadPoolExecutor(1) as thread:
        outputs = thread.submit(asyncio.run, everything()).result()
    fields = {
        key: np.array([o.extra_fields[key] for o in outputs], dtype=object)
        for key in outputs[0].extra_fields
    }
    fields["uid"] = np.array(
        [f"row-{n // verl_setup.G}" for n in range(len(outputs))], dtype=object
    )
    return outputs, DataProto(non_tensor_batch=fields)


def test_sampler_and_agent_loops_route_restore_and_bill(sampler):
    sampler, rows, data_config = sampler
    assert set(AGENTS.values()) <= set(_agent_loop_registry)  # registered in verl's registry
    tokenizer = build_tiny_tokenizer()
    tokenizer.chat_template = TEMPLATE
    server = FakeServer(tokenizer)
    indices = iter(sampler)
    tasks = len(verl_setup.SUITE.split("train"))

    step1 = [next(indices) for _ in range(tasks)]
    assert [rows[i]["agent_name"] for i in step1] == ["adaroll_root"] * tasks
    assert {rows[i]["adaroll_purpose"] for i in step1} == {"routing"}
    outputs, batch = run_step(step1, rows, data_config, server, tokenizer)
    assert all(o.reward_score == 0.0 for o in outputs)  # routing probes never train
    assert all(
        len(o.response_ids) == len(o.response_mask) and sum(o.response_mask) > 0 for o in outputs
    )
    sampler.update(batch)
    assert sampler.setup.scheduler.route_counts()["suffix"] == tasks  # p = 0 < tau_high: Suffix

    step2 = [next(indices) for _ in range(tasks)]
    assert [rows[i]["agent_name"] for i in step2] == ["adaroll_suffix"] * tasks
    outputs, batch = run_step(step2, rows, data_config, server, tokenizer)
    sampler.update(batch)
    ledger = sampler.feed.ledger
    routing = [r for r in ledger if r.purpose == "routing"]
    suffix = [r for r in ledger if r.mode == "suffix" and r.purpose == "train"]
    assert len(routing) == tasks and all(
        r.env_steps == verl_setup.G and r.restores == 0 for r in routing
    )
    assert len(suffix) == tasks
    # each group's share of its batch's wall time (the batch's longest sample), measured
    assert all(r.wall_seconds > 0 for r in ledger if r.policy_samples)
    assert all(
        r.restores == verl_setup.G and r.env_steps == verl_setup.G and r.iteration == 2
        for r in suffix
    )
    store = sampler.setup.starts.checkpoints
    deepest = {j.task.id: len(store.get(j.checkpoint_id).history) for j in sampler.feed.plans[1]}
    assert {
        r.task_id: r.replayed_steps for r in suffix
    } == deepest  # image built once, billed at first use
    assert [r.replayed_steps for r in ledger if r.purpose == "overhead"] == [sum(deepest.values())]
    # a Suffix prompt shows the restored state: the checkpoint's history is in it
    assert any("1. " in tokenizer.decode(p) for p in server.prompts[-tasks * verl_setup.G :])
