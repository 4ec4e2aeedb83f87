"""verl's agent loops with AdaRoll's routing, trained on CPU by a small loop of ours.

    python -m adaroll.examples.verl_phone --out runs/verl-phone

verl 0.7.1's trainer (``main_ppo``) needs vLLM or SGLang servers and GPUs. What runs here is
verl's own: the curriculum sampler loaded from ``data.sampler.class_path`` by verl's
``create_rl_sampler``, AdaRoll's agent loops built from verl's registry as verl's
``AgentLoopWorker`` builds them, their ``AgentLoopOutput``\\ s and verl's ``DataProto`` for the
sampler's ``update``. What stands in for the trainer is ours (:mod:`adaroll.examples.verl_rollout`
and :mod:`adaroll.examples.grpo_update`): a tiny model in this process serving the loops'
``generate`` calls, and a GRPO step with AdaRoll's advantage and loss math.

1. the phone's train tasks and their expert checkpoints; AdaRoll's scheduler under the paper's
   thresholds (``tau_low=0.25``, ``tau_high=0.75``), one group size (verl's ``rollout.n``);
2. the same tiny Qwen2 as the TRL example, first **taught the action format** by SFT on the
   expert demonstrations, rendered exactly as verl's loop opens a Local row;
3. per step, as verl's ``RayPPOTrainer.fit``: a batch of rows from the sampler, ``n`` agent
   loops per row, a GRPO update, ``sampler.update(batch)`` (bill, observe, route). It prints the
   rows' start kinds, the valid samples, the training rows' mean reward, the greedy expert
   match on the checkpoints (``success``, every ``eval_every`` steps) and the loss; the ledger
   is ``OUT/ledger.jsonl``.

A task the model cannot finish turn by turn stays Local under the paper's thresholds: Local
rows (one action at a pivot, rewarded by expert match) are what it learns from here.
"""

# --- docs:verl begin ---
from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch
from omegaconf import OmegaConf
from torch.utils.data import BatchSampler
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput
from verl.trainer.main_ppo import create_rl_sampler

from adaroll.examples.grpo_update import grpo_step
from adaroll.examples.options import parse_options
from adaroll.examples.train_tasks import hybrid_scheduler, train_tasks
from adaroll.examples.verl_rollout import AgentLoopRunner, LocalServer, sampler_batch
from adaroll.examples.warm_start import (
    greedy_match,
    local_demonstrations,
    prompt_tokenizer,
    teach_action_format,
)
from adaroll.integrations.rows import IDLE
from adaroll.integrations.verl import (
    VerlSetup,
    opening_messages,
    provide_setup,
    start_rows,
)
from adaroll.policies.hf_tiny import build_tiny_model

SETUP = "adaroll.examples.verl_phone:make_setup"
"""What ``data.adaroll_setup`` names: with verl's trainer, every worker imports it."""


def make_setup(
    out: Path = Path("runs/verl-phone"),
    *,
    num_generations: int = 8,
    tasks: int = 2,
    thresholds: tuple[float, float] = (0.25, 0.75),
    seed: int = 0,
) -> VerlSetup:
    """The phone's tasks, AdaRoll's scheduler and starts, and the ledger's path."""
    phone = train_tasks("mobile", tasks=tasks, seed=seed)
    scheduler = hybrid_scheduler(
        phone, group_size=num_generations, thresholds=thresholds, seed=seed
    )
    return VerlSetup(scheduler, phone.starts(), Path(out) / "ledger.jsonl", num_generations)


def main(
    out: Path,
    *,
    steps: int = 48,
    num_generations: int = 8,
    tasks: int = 2,
    sft_steps: int = 60,
    thresholds: tuple[float, float] = (0.25, 0.75),
    lr: float = 5e-4,
    temperature: float = 0.7,
    eval_every: int = 8,
    seed: int = 0,
) -> dict[str, Any]:
    """SFT for ``sft_steps``, then ``steps`` steps of verl's loops and our GRPO update; returns
    the sampler, a summary (per step: start kinds, valid samples, reward, loss, success), the
    model, its tokenizer and the SFT examples."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(seed)  # the samples the server draws
    # 1. the setup, made here and named by SETUP for the sampler and the loops (one process)
    setup = make_setup(
        out, num_generations=num_generations, tasks=tasks, thresholds=thresholds, seed=seed
    )
    provide_setup(SETUP, setup)
    rows = start_rows(setup)  # verl's dataset: one row per possible start
    data = OmegaConf.create(
        {
            "adaroll_setup": SETUP,
            "adaroll_rows": steps * tasks,
            "dataloader_num_workers": 0,
            "sampler": {
                "class_path": "pkg://adaroll.integrations.verl",
                "class_name": "AdaRollCurriculumSampler",
            },
        }
    )
    sampler = create_rl_sampler(data, rows)  # verl's loading of data.sampler.class_path
    # batches of rows as verl's loader draws them with num_workers=0: lazily, one batch after
    # the last one's update (so each plan sees the last observation)
    batches = BatchSampler(sampler, batch_size=tasks, drop_last=False)
    # 2. the tiny model, taught the action format on prompts as verl's loop opens a Local row
    examples = local_demonstrations(setup.starts, opening_messages)
    tokenizer = prompt_tokenizer([prompt for prompt, _ in examples])
    model = build_tiny_model(tokenizer, seed=seed)
    sft_losses = teach_action_format(model, tokenizer, examples, steps=sft_steps, seed=seed)
    success = {0: greedy_match(model, tokenizer, examples, setup.starts.checkpoints)}
    # 3. verl's agent loops against our server, our GRPO step, the sampler's update
    config = OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"n": num_generations, "prompt_length": 4096, "response_length": 256},
                "model": {"path": "tiny-qwen2"},
            },
            "data": data,
        }
    )
    runner = AgentLoopRunner(config, data, LocalServer(model, tokenizer))
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    log: list[dict[str, Any]] = []
    for step, indices in enumerate(batches, start=1):
        started = time.perf_counter()
        batch = [rows[i] for i in indices]
        groups = runner.run(batch, num_generations, {"temperature": temperature})
        stats = grpo_step(
            model, optimizer, groups, temperature=temperature, pad_id=tokenizer.pad_token_id
        )
        sampler.update(batch=sampler_batch(groups))
        if step % eval_every == 0 or step == steps:
            success[step] = greedy_match(model, tokenizer, examples, setup.starts.checkpoints)
        log.append(step_record(step, batch, groups, stats, success.get(step), started))
    ledger = sampler.feed.ledger
    summary = {
        "sft": {"steps": sft_steps, "first_loss": sft_losses[:1], "last_loss": sft_losses[-1:]},
        "steps": log,
        "greedy_expert_match": success,
        "routes": setup.scheduler.route_counts(),
        "by_mode": {
            f"{m}/{p}": t.to_dict() for (m, p), t in ledger.totals_by("mode", "purpose").items()
        },
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    return {
        "sampler": sampler,
        "summary": summary,
        "model": model,
        "tokenizer": tokenizer,
        "examples": examples,
    }


def step_record(
    step: int,
    rows: Sequence[dict[str, Any]],
    groups: Sequence[Sequence[AgentLoopOutput]],
    stats: dict[str, float] | None,
    success: float | None,
    started: float,
) -> dict[str, Any]:
    """What a step did: its rows' start kinds, the samples that acted in the action format,
    the mean AdaRoll reward of the training rows' samples, the loss and the seconds."""
    samples = [o for g in groups for o in g]
    train = [
        o.extra_fields["adaroll_reward"]
        for row, g in zip(rows, groups, strict=True)
        if row["adaroll_purpose"] == "train" and row["adaroll_kind"] != IDLE
        for o in g
    ]
    fields = [o.extra_fields for o in samples]
    return {
        "step": step,
        "rows": dict(Counter(str(row["adaroll_kind"]) for row in rows)),
        "samples": len(samples),
        "valid": sum(
            1 for f in fields if f["adaroll_decisions"] and not f["adaroll_cost"]["invalid_samples"]
        ),
        "trained": len(train),
        "reward": sum(train) / max(1, len(train)),
        "loss": stats["loss"] if stats else None,
        "success": success,
        "seconds": round(time.perf_counter() - started, 2),
    }


# --- docs:verl end ---


def _print(summary: dict[str, Any]) -> None:
    print("step  rows                  valid   reward  success  loss     (reward: the training")
    print("      rows' expert match; success: greedy expert match on the train checkpoints)")
    after_sft = f"   0  (after {summary['sft']['steps']} SFT steps)"
    print(f"{after_sft:<47}{summary['greedy_expert_match'][0]:.0%}")
    for row in summary["steps"]:
        what = ", ".join(f"{k} {n}" for k, n in row["rows"].items())
        success = f"{row['success']:.0%}" if row["success"] is not None else ""
        loss = f"{row['loss']:+.4f}" if row["loss"] is not None else ""
        line = (
            f"{row['step']:>4}  {what:<20}  {row['valid']:>2}/{row['samples']:<3}  "
            f"{row['reward']:.3f}   {success:<7}  {loss}"
        )
        print(line.rstrip())
    print(f"routes {summary['routes']}")
    bill = summary["by_mode"].values()
    print(
        f"bill: {sum(t['env_steps'] for t in bill)} env steps, "
        f"{sum(t['wall_seconds'] for t in bill):.1f} wall seconds (ledger.jsonl)"
    )


def _cli() -> None:
    options = parse_options(main, __doc__, defaults={"out": Path("runs/verl-phone")})
    torch.set_num_threads(1)  # a tiny model runs fastest on one thread
    _print(main(**options)["summary"])
    print(f"summary: {options['out'] / 'summary.json'}")


if __name__ == "__main__":
    _cli()
