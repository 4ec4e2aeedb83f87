"""Train a tiny model with TRL's ``GRPOTrainer`` on AdaRoll's embedded phone, CPU only.

    python -m adaroll.examples.trl_phone --out runs/trl-phone

What it does (docs/integrations.md walks through it; tests/examples/test_trl_phone.py
runs :func:`main`):

1. the phone (env ``mobile``) and a small train split; the scripted experts' verified
   trajectories give the checkpoints (every checkpoint is a pivot here; with a real model,
   score them first: :mod:`adaroll.examples.trl_pretrained`);
2. AdaRoll's Stage II scheduler (``hybrid``) under the paper's thresholds (``tau_low=0.25``,
   ``tau_high=0.75``), with groups of ``num_generations`` everywhere: each task's routing probes
   measure p(x) and send it to Local (one step at its pivots, rewarded by expert match),
   Suffix or Root;
3. a tiny Qwen2 model (2 layers, hidden 64; no download) with a tokenizer trained on the prompts
   TRL will show it, first **taught the action format** by a few SFT steps on the expert
   demonstrations (prompt: exactly what TRL renders; target: the expert's action as text);
4. ``GRPOTrainer`` with AdaRoll's rows, environments and reward; per step it prints the rows'
   start kinds, the valid samples, the mean reward (the share of samples that matched the expert
   at a pivot or solved the task) and TRL's loss, and at the end the greedy expert match on the
   checkpoints before and after RL. The ledger is ``OUT/ledger.jsonl``.

The model answers with an action as text (TRL plays a text answer as the episode's last
action), so it decides one step: Local rows are what it can learn here, and a task it cannot
solve in one step stays Local under the paper's thresholds.
"""

# --- docs:trl begin ---
from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from adaroll.examples.options import parse_options
from adaroll.examples.train_tasks import hybrid_scheduler, train_tasks
from adaroll.examples.warm_start import (
    greedy_match,
    local_demonstrations,
    prompt_tokenizer,
    teach_action_format,
)
from adaroll.integrations.rows import RowSession
from adaroll.integrations.trl import AdaRollEnv, AdaRollTRL
from adaroll.policies.hf_tiny import build_tiny_model
from adaroll.training.ledger import Ledger


def main(
    out: Path,
    *,
    steps: int = 96,
    num_generations: int = 8,
    tasks: int = 2,
    sft_steps: int = 60,
    thresholds: tuple[float, float] = (0.25, 0.75),
    lr: float = 3e-4,
    temperature: float = 0.7,
    seed: int = 0,
) -> dict[str, Any]:
    """SFT for ``sft_steps``, then ``steps`` TRL GRPO steps; returns the hub, the trainer and
    a summary (per step: start kinds, valid samples, mean reward, loss; the bill)."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    from trl import GRPOConfig, GRPOTrainer

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    # 1. phone, tasks, verified expert checkpoints (train_tasks.py; your env: trl_pretrained.py)
    phone = train_tasks("mobile", tasks=tasks, seed=seed)
    # 2. AdaRoll's scheduler under the paper's thresholds; one group size for every job
    scheduler = hybrid_scheduler(
        phone, group_size=num_generations, thresholds=thresholds, seed=seed
    )
    hub = AdaRollTRL(
        scheduler, phone.starts(), Ledger(out / "ledger.jsonl"), num_generations=num_generations
    )
    # 3. the tiny model, taught the action format on the expert demonstrations (warm_start.py)
    examples = demonstrations(hub)
    tokenizer = prompt_tokenizer([prompt for prompt, _ in examples])
    model = build_tiny_model(tokenizer, seed=seed)
    sft_losses = teach_action_format(model, tokenizer, examples, steps=sft_steps, seed=seed)
    before = greedy_match(model, tokenizer, examples, phone.store)
    # 4. TRL's trainer with AdaRoll's rows, environments and reward
    args = GRPOConfig(
        output_dir=str(out / "trl"),
        max_steps=steps,
        num_generations=num_generations,
        per_device_train_batch_size=num_generations * tasks,
        max_completion_length=16,
        temperature=temperature,
        max_tool_calling_iterations=2,
        shuffle_dataset=False,
        use_cpu=True,
        bf16=False,
        learning_rate=lr,
        logging_steps=1,
        report_to=[],
        save_strategy="no",
        seed=seed,
    )
    hub.check_args(args)
    log = StepLog(hub)
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[log.reward],
        args=args,
        train_dataset=hub.dataset(),
        processing_class=tokenizer,
        environment_factory=hub.environment_factory,
    )
    trainer.train()
    hub.close()
    after = greedy_match(model, tokenizer, examples, phone.store)
    losses = [h["loss"] for h in trainer.state.log_history if "loss" in h]
    for row, loss in zip(log.rows, losses, strict=False):
        row["loss"] = loss
    by_mode = {
        f"{m}/{p}": t.to_dict() for (m, p), t in hub.ledger.totals_by("mode", "purpose").items()
    }
    summary = {
        "sft": {"steps": sft_steps, "first_loss": sft_losses[:1], "last_loss": sft_losses[-1:]},
        "steps": log.rows,
        "greedy_expert_match": {"before_rl": before, "after_rl": after},
        "iterations": hub.feed.iteration if hub.feed else 0,
        "routes": scheduler.route_counts(),
        "by_mode": by_mode,
        "env_steps": hub.env_steps,
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return {"hub": hub, "trainer": trainer, "summary": summary}


def demonstrations(hub: AdaRollTRL) -> list[tuple[str, str]]:
    """``(prompt, expert action)`` per checkpoint, the prompt exactly as TRL renders a Local row
    at that checkpoint (the dataset's messages, the state ``reset`` appends, the ``act`` tool)."""
    messages = next(iter(hub.dataset()))["prompt"]

    def chat(session: RowSession) -> list[dict[str, Any]]:
        user = {**messages[-1], "content": messages[-1]["content"] + "\n" + session.prompt()}
        return [*messages[:-1], user]

    return local_demonstrations(hub.starts, chat, tools=[AdaRollEnv(hub).act])


class StepLog:
    """AdaRoll's reward function, recording per TRL step the rows' start kinds, the valid
    samples (an action that parsed) and the mean reward of the rows that train."""

    def __init__(self, hub: AdaRollTRL) -> None:
        self.hub = hub
        self.rows: list[dict[str, Any]] = []
        self.__name__ = "adaroll_reward"  # TRL logs rewards under their function's name
        self._t0 = time.perf_counter()

    def reward(self, completions: Sequence[Any], environments: Sequence[Any], **kw: Any) -> list:
        sessions = [env._session for env in environments]
        trains = [bool(env._bound and env._bound.job and env._bound.job.purpose == "train")
                  for env in environments]  # fmt: skip
        given = self.hub.reward(completions, environments, **kw)
        # AdaRoll's rewards of the rows that train (routing probes only measure p(x))
        rewards = [s.reward() for s, t in zip(sessions, trains, strict=True) if t]
        kinds: dict[str, int] = {}
        for s in sessions:
            kinds[s.name] = kinds.get(s.name, 0) + 1
        valid = sum(1 for s in sessions if s.decisions and not s.cost.invalid_samples)
        self.rows.append(
            {
                "step": len(self.rows) + 1,
                "rows": kinds,
                "samples": len(sessions),
                "valid": valid,
                "trained": len(rewards),
                "reward": sum(rewards) / max(1, len(rewards)),
                "seconds": round(time.perf_counter() - self._t0, 2),
            }
        )
        self._t0 = time.perf_counter()
        return given


# --- docs:trl end ---


def _print(summary: dict[str, Any], block: int = 8) -> None:
    """The steps in blocks of ``block``: start kinds, valid samples, mean reward, mean loss."""
    rows = summary["steps"]
    print(f"steps    rows                        valid    reward  loss   ({len(rows)} TRL steps;")
    print("         reward: of the training rows - expert match at a pivot or task success)")
    for lo in range(0, len(rows), block):
        part = rows[lo : lo + block]
        kinds: dict[str, int] = {}
        for row in part:
            for kind, n in row["rows"].items():
                kinds[kind] = kinds.get(kind, 0) + n
        valid, samples = sum(r["valid"] for r in part), sum(r["samples"] for r in part)
        trained = sum(r["trained"] for r in part)
        reward = sum(r["reward"] * r["trained"] for r in part) / max(1, trained)
        losses = [r["loss"] for r in part if r.get("loss") is not None]
        loss = f"{sum(losses) / len(losses):+.4f}" if losses else ""
        what = ", ".join(f"{k} {n}" for k, n in kinds.items())
        print(
            f"{lo + 1:>3}-{lo + len(part):<3}  {what:<26}  {valid:>3}/{samples:<4} "
            f"{reward:.3f}   {loss}"
        )
    match = summary["greedy_expert_match"]
    print(
        f"greedy expert match on the train checkpoints: {match['before_rl']:.0%} after SFT, "
        f"{match['after_rl']:.0%} after RL; routes {summary['routes']}"
    )
    seconds = sum(t["wall_seconds"] for t in summary["by_mode"].values())
    print(f"bill: {summary['env_steps']} env steps, {seconds:.1f} wall seconds (ledger.jsonl)")


def _cli() -> None:
    options = parse_options(main, __doc__, defaults={"out": Path("runs/trl-phone")})
    torch.set_num_threads(1)  # a tiny model runs fastest on one thread
    _print(main(**options)["summary"])
    print(f"summary: {options['out'] / 'summary.json'}")


if __name__ == "__main__":
    _cli()
