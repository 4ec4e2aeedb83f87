"""Train a tiny model with TRL's ``GRPOTrainer`` on AdaRoll's embedded phone, CPU only.

    python -m adaroll.examples.trl_phone --out runs/trl-phone --steps 4

What it does (docs/integrations.md walks through it; tests/examples/test_trl_phone.py
runs :func:`main` for two steps):

1. the phone (env ``mobile``) and a small train split; the scripted experts' verified
   trajectories give the checkpoints (every checkpoint is a pivot here: scoring pivots needs the
   policy behind an AdaRoll :class:`~adaroll.policies.base.Policy`, see docs/integrations.md);
2. AdaRoll's Stage II scheduler (``hybrid``) with groups of ``num_generations`` everywhere; with
   ``tau_low=0, tau_high=1`` every probed task is routed to Suffix, so the second step already
   restores checkpoints;
3. the tiny Qwen2 model and tokenizer AdaRoll's tests use (no download), given TRL's Qwen2.5
   chat template so that TRL can offer it the ``act`` tool;
4. ``GRPOTrainer`` with AdaRoll's rows, environments and reward; the ledger is ``OUT/ledger.jsonl``.
"""

from __future__ import annotations

import argparse
import importlib.resources
import json
import os
from pathlib import Path
from typing import Any

from adaroll.config import GRPOConfig as AdaRollGRPO
from adaroll.config import SchedulerConfig
from adaroll.envs import get_suite, make_env_factory
from adaroll.experts import collect_experts
from adaroll.integrations.trl import AdaRollTRL
from adaroll.policies.hf_tiny import build_tiny_model, build_tiny_tokenizer
from adaroll.rollout.sessions import Starts
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import SCHEDULERS


# --- docs:trl begin ---
def main(
    out: Path, *, steps: int = 2, num_generations: int = 2, tasks: int = 2, seed: int = 0
) -> dict[str, Any]:
    """Train for ``steps`` TRL steps; returns the hub, trainer and a summary of the bill."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # 1. phone, tasks, verified expert checkpoints
    suite = get_suite(
        "mobile",
        seed=seed,
        n_train=tasks,
        n_val=0,
        n_heldout=0,
        n_heldout_templates=0,
        n_pretrain=0,
    )
    make_env = make_env_factory("mobile")
    train = suite.split("train")
    store = collect_experts(make_env, suite, train, progress=False).store
    pivots = {t.id: [c.id for c in store.for_task(t.id)] for t in train}
    # 2. AdaRoll's scheduler: one group size for every job (TRL draws num_generations per row)
    sched = SchedulerConfig(
        tasks_per_iteration=tasks,
        tau_low=0.0,
        tau_high=1.0,
        routing_probes=num_generations,
        root_probes=max(2, num_generations),
    )
    scheduler = SCHEDULERS.get("hybrid")(
        tasks=train,
        sched=sched,
        grpo=AdaRollGRPO(group_size=num_generations),
        pivots=pivots,
        seed=seed,
    )
    starts = Starts(make_env, store, MemorySnapshots(), train, history_window=2)
    hub = AdaRollTRL(
        scheduler, starts, Ledger(out / "ledger.jsonl"), num_generations=num_generations
    )
    # 3. the tiny model, with a chat template that can call tools
    tokenizer = build_tiny_tokenizer()
    tokenizer.padding_side = "left"
    tokenizer.chat_template = (
        importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja"
    ).read_text()
    model = build_tiny_model(tokenizer, seed=seed)
    # 4. TRL's trainer with AdaRoll's rows, environments and reward
    args = GRPOConfig(
        output_dir=str(out / "trl"),
        max_steps=steps,
        num_generations=num_generations,
        per_device_train_batch_size=num_generations * tasks,
        max_completion_length=24,
        max_tool_calling_iterations=4,
        shuffle_dataset=False,
        use_cpu=True,
        bf16=False,
        learning_rate=1e-3,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        seed=seed,
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
    by_mode = {
        f"{m}/{p}": t.to_dict() for (m, p), t in hub.ledger.totals_by("mode", "purpose").items()
    }
    summary = {
        "steps": steps,
        "iterations": hub.feed.iteration if hub.feed else 0,
        "by_mode": by_mode,
        "sessions": hub.sessions_opened,
        "env_steps": hub.env_steps,
        "routes": scheduler.route_counts(),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return {"hub": hub, "trainer": trainer, "summary": summary}


# --- docs:trl end ---


def _cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/trl-phone"))
    parser.add_argument("--steps", type=int, default=4)
    parser.add_argument("--num-generations", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    a = parser.parse_args()
    result = main(
        a.out, steps=a.steps, num_generations=a.num_generations, tasks=a.tasks, seed=a.seed
    )
    print(json.dumps(result["summary"], indent=2))


if __name__ == "__main__":
    _cli()
