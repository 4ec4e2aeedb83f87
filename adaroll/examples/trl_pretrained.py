"""AdaRoll inside TRL with a pretrained model and your own env (docs/integrations.md shows this
file): load the model once, score the checkpoints with it (``score_checkpoints``: the pivots
are where its samples disagree), then give TRL's ``GRPOTrainer`` AdaRoll's rows, environments and
reward. tests/examples/test_trl_phone.py runs it on a saved tiny model and FrozenLake.

    python -m adaroll.examples.trl_pretrained --model Qwen/Qwen2.5-0.5B-Instruct \\
        --env gymnasium --env-options '{id: Taxi-v4, adapter: taxi}' --steps 100
"""

# --- docs:trl-pretrained begin ---
from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any

import yaml

from adaroll.examples.train_tasks import hybrid_scheduler, scored_pivots, train_tasks
from adaroll.integrations.trl import AdaRollTRL
from adaroll.policies.hf import HFPolicy, HFPolicyConfig
from adaroll.training.ledger import Ledger


def setup(
    model: str,
    out: Path,
    *,
    env: str = "gymnasium",
    env_options: dict[str, Any] | None = None,
    tasks: int = 8,
    num_generations: int = 8,
    seed: int = 0,
) -> tuple[AdaRollTRL, Any, Any]:
    """The hub, the model and its tokenizer for ``GRPOTrainer``: ``model`` is a Hugging Face
    id or a local folder (a chat model with a chat template that can call tools); ``env`` and
    ``env_options`` are what a run config's ``env.name`` and ``env.options`` would say."""
    env_options = dict(env_options or {"id": "FrozenLake-v1", "adapter": "frozen_lake"})
    # 1. your env: its train split and the verified expert checkpoints
    train = train_tasks(env, env_options, tasks=tasks, seed=seed)
    # 2. the pretrained model, loaded once: AdaRoll samples from it to score the checkpoints
    policy = HFPolicy(HFPolicyConfig(model=model, lora=False, seed=seed))
    pivots = scored_pivots(policy, train, seed)
    # 3. AdaRoll's scheduler under the paper's thresholds, its starts and its ledger
    scheduler = hybrid_scheduler(train, group_size=num_generations, pivots=pivots, seed=seed)
    Path(out).mkdir(parents=True, exist_ok=True)
    hub = AdaRollTRL(
        scheduler,
        train.starts(),
        Ledger(Path(out) / "ledger.jsonl"),
        num_generations=num_generations,
    )
    tokenizer = policy.tokenizer
    tokenizer.padding_side = "left"
    return hub, policy.model, tokenizer


def train(
    hub: AdaRollTRL, model: Any, tokenizer: Any, out: Path, *, steps: int, use_cpu: bool = True
) -> Any:
    """``steps`` steps of TRL's GRPO with AdaRoll's rows; the trainer."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    g = hub.num_generations
    args = GRPOConfig(
        output_dir=str(Path(out) / "trl"),
        max_steps=steps,
        num_generations=g,
        per_device_train_batch_size=g * len(hub.starts.tasks),
        max_completion_length=256,
        max_tool_calling_iterations=20,
        shuffle_dataset=False,
        use_cpu=use_cpu,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
    )
    hub.check_args(args)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[hub.reward],
        args=args,
        train_dataset=hub.dataset(),
        processing_class=tokenizer,
        environment_factory=hub.environment_factory,
    )
    trainer.train()
    hub.close()
    return trainer


# --- docs:trl-pretrained end ---


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True)
    parser.add_argument("--out", type=Path, default=Path("runs/trl-pretrained"))
    parser.add_argument("--env", default="gymnasium")
    parser.add_argument("--env-options", default="{id: FrozenLake-v1, adapter: frozen_lake}")
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--gpu", action="store_true")
    a = parser.parse_args()
    hub, model, tokenizer = setup(
        a.model,
        a.out,
        env=a.env,
        env_options=yaml.safe_load(a.env_options),
        tasks=a.tasks,
        num_generations=a.num_generations,
    )
    train(hub, model, tokenizer, a.out, steps=a.steps, use_cpu=not a.gpu)
    print(f"ledger: {a.out / 'ledger.jsonl'}")


if __name__ == "__main__":
    _cli()
