"""Your env and a pretrained model's pivots in verl's trainer: the module data.adaroll_setup names.

docs/integrations.md shows this file; tests/examples/test_verl_pretrained.py runs it on a saved
tiny model and FrozenLake, up to one step of verl's agent loops on CPU.

Once, in the driver: :func:`prepare` scores your env's checkpoints with the model
(``score_checkpoints``) and saves the checkpoints, the pivots, the settings, the start rows
(verl's ``data.train_files``) and the agent-loop YAML. Then every process verl starts - the
driver's sampler and each agent-loop worker - calls :func:`make_setup`, which rebuilds the same
setup from those files (no model loaded, no expert run again)::

    python -m adaroll.examples.verl_pretrained --model Qwen/Qwen2.5-0.5B-Instruct \\
        --env gymnasium --env-options '{id: Taxi-v4, adapter: taxi}' --out /abs/path/runs/verl
    # prints the verl command (python -m verl.trainer.main_ppo ...) to run next (GPUs)
"""

# --- docs:verl-pretrained begin ---
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from adaroll.checkpoints import CheckpointStore
from adaroll.examples.options import parse_options
from adaroll.examples.train_tasks import hybrid_scheduler, scored_pivots, train_tasks
from adaroll.integrations.verl import VerlSetup, write_agent_loops, write_start_rows
from adaroll.policies.hf import HFPolicy, HFPolicyConfig
from adaroll.training.pivot_scoring import PivotSet

RUN = "ADAROLL_VERL_RUN"
"""The environment variable that tells every process the folder :func:`prepare` wrote."""


def prepare(
    model: str,
    out: Path,
    *,
    env: str = "gymnasium",
    env_options: dict[str, Any] | None = None,
    tasks: int = 8,
    group_size: int = 8,
    seed: int = 0,
) -> Path:
    """Score your env's checkpoints with ``model`` (a Hugging Face id or a local folder) and save
    what :func:`make_setup` reads into ``out``; the start rows' parquet file."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    env_options = dict(env_options or {"id": "FrozenLake-v1", "adapter": "frozen_lake"})
    # 1. your env: its train split and the verified expert checkpoints
    train = train_tasks(env, env_options, tasks=tasks, seed=seed)
    train.store.save(out / "checkpoints.jsonl")
    # 2. the pretrained model, loaded once: its samples score the checkpoints (the pivots)
    policy = HFPolicy(HFPolicyConfig(model=model, lora=False, seed=seed))
    scored_pivots(policy, train, seed).save(out / "pivots.json")
    settings = {"env": env, "env_options": env_options, "tasks": tasks}
    settings |= {"group_size": group_size, "seed": seed}
    (out / "settings.json").write_text(json.dumps(settings, indent=1))
    # 3. what verl reads: the agent loops (YAML) and one dataset row per possible start
    write_agent_loops(out / "agent_loops.yaml")
    return write_start_rows(make_setup(out), out / "starts.parquet")


def make_setup(run: Path | None = None) -> VerlSetup:
    """The setup ``prepare`` saved in ``run`` (default: the folder ``$ADAROLL_VERL_RUN`` names):
    your env's tasks and checkpoints, AdaRoll's scheduler on the scored pivots under the paper's
    thresholds, its starts and the ledger's path (``run/ledger.jsonl``)."""
    run = Path(run or os.environ.get(RUN, "runs/verl"))
    saved = json.loads((run / "settings.json").read_text())
    train = train_tasks(
        saved["env"],
        saved["env_options"],
        tasks=saved["tasks"],
        seed=saved["seed"],
        store=CheckpointStore.load(run / "checkpoints.jsonl"),
    )
    scheduler = hybrid_scheduler(
        train,
        group_size=saved["group_size"],
        pivots=PivotSet.load(run / "pivots.json"),
        seed=saved["seed"],
    )
    return VerlSetup(scheduler, train.starts(), run / "ledger.jsonl", saved["group_size"])


def verl_command(model: str, run: Path, *, tasks: int, group_size: int) -> str:
    """verl's trainer on the prepared folder (GPUs, vLLM or SGLang): AdaRoll's sampler and
    loops, ``tasks`` rows of ``group_size`` samples a step, GRPO."""
    run = Path(run).resolve()  # Ray's workers may start in another folder
    return " \\\n  ".join(
        [
            "python -m verl.trainer.main_ppo",
            f"data.train_files={run}/starts.parquet data.val_files={run}/starts.parquet",
            "data.sampler.class_path=pkg://adaroll.integrations.verl",
            "data.sampler.class_name=AdaRollCurriculumSampler",
            "+data.adaroll_setup=adaroll.examples.verl_pretrained:make_setup",
            f"+ray_kwargs.ray_init.runtime_env.env_vars.{RUN}={run}",
            f"data.dataloader_num_workers=0 data.train_batch_size={tasks}",
            f"actor_rollout_ref.model.path={model}",
            f"actor_rollout_ref.rollout.mode=async actor_rollout_ref.rollout.n={group_size}",
            f"actor_rollout_ref.rollout.agent.agent_loop_config_path={run}/agent_loops.yaml",
            "algorithm.adv_estimator=grpo trainer.total_training_steps=100",
        ]
    )


# --- docs:verl-pretrained end ---


def _cli() -> None:
    options = parse_options(prepare, __doc__, defaults={"out": Path("runs/verl")})
    rows = prepare(**options)
    print(f"start rows: {rows}\nthen, with GPUs:\n")
    print(
        verl_command(
            options["model"],
            options["out"],
            tasks=options["tasks"],
            group_size=options["group_size"],
        )
    )


if __name__ == "__main__":
    _cli()
