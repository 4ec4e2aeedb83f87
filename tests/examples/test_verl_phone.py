"""The verl example, for real where it can be on CPU: verl's curriculum-sampler loading, AdaRoll's
agent loops from verl's registry, verl's ``DataProto``; a tiny Qwen2 served in-process and our
GRPO step in place of verl's trainer (which needs vLLM/SGLang and GPUs).

adaroll/examples/verl_phone.py as shipped: the tiny model taught the action format by SFT on
prompts exactly as verl's loop opens a Local row, then AdaRoll's routing under the paper's
thresholds; its samples are valid, its loss is not zero, its reward and its greedy expert match
rise, and every billed group's wall seconds are measured."""

from __future__ import annotations

import pytest

from adaroll.examples import verl_phone, verl_rollout

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")


@pytest.fixture(scope="module")
def learning(tmp_path_factory: pytest.TempPathFactory):
    """The example as shipped, recording the prompts verl's loops send the server."""
    prompts: list[tuple[int, ...]] = []
    generate = verl_rollout.LocalServer.generate

    async def recording(self, request_id, *, prompt_ids, sampling_params, **kw):
        prompts.append(tuple(prompt_ids))
        return await generate(
            self, request_id, prompt_ids=prompt_ids, sampling_params=sampling_params, **kw
        )

    out = tmp_path_factory.mktemp("verl-learn")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(verl_rollout.LocalServer, "generate", recording)
        result = verl_phone.main(out)
    return {**result, "prompts": prompts, "out": out}


def _mean_reward(part: list[dict]) -> float:
    """The mean reward of the training rows' samples (routing probes and idle rows excluded)."""
    trained = sum(s["trained"] for s in part)
    assert trained > 0, "a quarter of the run without a training row"
    return sum(s["reward"] * s["trained"] for s in part) / trained


def test_the_example_learns_valid_actions_and_its_reward_rises(learning) -> None:
    summary = learning["summary"]
    steps = summary["steps"]
    assert len(steps) == 48
    assert sum(s["valid"] for s in steps) > 0.6 * sum(s["samples"] for s in steps)
    assert sum(1 for s in steps if s["loss"]) > len(steps) // 2  # updates that are not zero
    quarter = len(steps) // 4
    first, last = _mean_reward(steps[:quarter]), _mean_reward(steps[-quarter:])
    assert last > first + 0.05, (first, last)
    match = summary["greedy_expert_match"]
    assert match[len(steps)] > match[0] > 0  # after RL over after SFT
    assert summary["routes"]["local"] == 2  # the paper's thresholds: p < 0.25 -> Local


def test_sft_taught_the_prompts_verls_loop_opens_with(learning) -> None:
    tokenizer = learning["tokenizer"]
    taught = {tuple(tokenizer(prompt)["input_ids"]) for prompt, _ in learning["examples"]}
    first_turns = set(learning["prompts"]) & taught
    assert len(first_turns) >= len(taught) // 2  # the pivots the Local rows visited


def test_the_sampler_billed_every_group_with_its_wall_seconds(learning) -> None:
    ledger = learning["sampler"].feed.ledger
    records = list(ledger)
    assert {r.purpose for r in records} >= {"train", "routing"}
    assert {r.mode for r in records if r.purpose == "train"} == {"onestep"}
    assert all(r.wall_seconds > 0 for r in records if r.policy_samples)  # measured, not 0.0
    # every Local row's 8 samples, each one decision, billed when its iteration ends (an
    # iteration visits every pivot of both tasks: several steps; the last may still be open)
    feed = learning["sampler"].feed
    local_rows = sum(s["rows"].get("onestep", 0) for s in learning["summary"]["steps"])
    billed = sum(r.policy_samples for r in records if r.mode == "onestep" and r.purpose == "train")
    unbilled = 8 * local_rows - billed
    assert unbilled % 8 == 0 and 0 <= unbilled < 8 * len(feed.plans[-1])
    assert (unbilled == 0) == (feed.finished == feed.iteration)
    assert (learning["out"] / "ledger.jsonl").is_file()
