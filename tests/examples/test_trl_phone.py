"""The TRL examples, for real: TRL's ``GRPOTrainer``, a tiny Qwen2 model, AdaRoll's envs.

* adaroll/examples/trl_phone.py as shipped: the tiny model taught the action
  format by SFT, then AdaRoll's routing under the paper's thresholds; its samples are valid,
  its loss is not zero, its reward rises and every group's wall seconds are measured;
* the same example routed to Suffix (thresholds 0 and 1): the second step's rows are restored
  from checkpoints ahead of TRL's resets and billed;
* adaroll/examples/trl_pretrained.py on a saved tiny model and FrozenLake: pivots
  scored with the model (``score_checkpoints``), one TRL step.

(tests/examples/test_docs_blocks.py checks that docs/integrations.md shows the examples' code.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.examples import trl_phone, trl_pretrained

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")


@pytest.fixture(scope="module")
def learning(tmp_path_factory: pytest.TempPathFactory):
    return trl_phone.main(tmp_path_factory.mktemp("trl-learn"))


def test_the_example_learns_valid_actions_and_its_reward_rises(learning) -> None:
    summary, hub = learning["summary"], learning["hub"]
    steps = summary["steps"]
    assert len(steps) == 96 and learning["trainer"].state.global_step == 96
    assert sum(s["valid"] for s in steps) > 0.75 * sum(s["samples"] for s in steps)
    assert any(s.get("loss") for s in steps)  # some update is not zero

    def mean_reward(part: list[dict]) -> float:  # of the rows that train
        return sum(s["reward"] * s["trained"] for s in part) / sum(s["trained"] for s in part)

    quarter = len(steps) // 4
    first, last = mean_reward(steps[:quarter]), mean_reward(steps[-quarter:])
    assert last > first, (first, last)
    match = summary["greedy_expert_match"]
    assert match["after_rl"] > match["before_rl"] > 0
    assert summary["routes"]["local"] == 2  # the paper's thresholds: p < 0.25 -> Local
    records = list(hub.ledger)
    assert {r.purpose for r in records} >= {"train", "routing"}
    assert all(r.wall_seconds > 0 for r in records if r.policy_samples)  # measured, not 0.0


@pytest.fixture(scope="module")
def routed_to_suffix(tmp_path_factory: pytest.TempPathFactory):
    return trl_phone.main(
        tmp_path_factory.mktemp("trl-phone"),
        steps=2,
        num_generations=2,
        tasks=2,
        sft_steps=0,
        thresholds=(0.0, 1.0),
    )


def test_suffix_rows_are_restored_from_checkpoints_and_billed(routed_to_suffix) -> None:
    hub, summary = routed_to_suffix["hub"], routed_to_suffix["summary"]
    assert routed_to_suffix["trainer"].state.global_step == 2
    records = list(hub.ledger)
    routing = [r for r in records if r.purpose == "routing"]
    suffix = [r for r in records if r.mode == "suffix" and r.purpose == "train"]
    assert [r.iteration for r in routing] == [1, 1] and [r.iteration for r in suffix] == [2, 2]
    assert all(r.restores == 2 and r.policy_samples >= 2 for r in suffix)  # G branches per row
    assert hub.sessions_opened["suffix"] == sum(r.restores for r in suffix) == 4
    assert hub.starts.prefetcher.taken == 4  # every branch was restored ahead of its reset
    # the snapshot images: built by replaying each checkpoint's prefix once, billed at first use
    store = hub.starts.checkpoints
    built = [r.replayed_steps for r in records if r.mode == "suffix" and r.purpose == "overhead"]
    first_use = [len(store.get(j.checkpoint_id).history) for j in hub.feed.plans[1]]
    assert built == [sum(first_use)] and [r.replayed_steps for r in suffix] == first_use
    assert sum(r.env_steps for r in records) == hub.env_steps  # every env step is on the bill
    assert summary["routes"]["suffix"] == 2


def test_a_pretrained_model_scores_pivots_on_your_env_and_trains(
    saved_model: Path, tmp_path: Path
) -> None:
    """A saved tiny model stands in for a downloaded one; FrozenLake for your env."""
    lake = {"id": "FrozenLake-v1", "adapter": "frozen_lake"}
    hub, model, tok = trl_pretrained.setup(
        str(saved_model), tmp_path / "run", env_options=lake, tasks=2, num_generations=2
    )
    assert hub.feed is not None
    routes = hub.feed.scheduler.routes  # type: ignore[attr-defined]
    checkpoints = {c.id for c in hub.starts.checkpoints}
    pivots = [p for r in routes.values() for p in r.pivots]
    assert len(routes) == 2 and all(t.startswith("gymnasium:lake-") for t in routes)
    assert pivots and set(pivots) <= checkpoints  # scored by the model's disagreement
    trainer = trl_pretrained.train(hub, model, tok, tmp_path / "run", steps=1)
    assert trainer.state.global_step == 1 and list(hub.ledger)
