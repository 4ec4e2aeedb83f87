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

import argparse
import importlib.resources
import json
import os
import random
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import torch

from adaroll.actions import PAPER_MATCHER, action_format_help, parse_action
from adaroll.checkpoints import CheckpointStore
from adaroll.config import GRPOConfig as AdaRollGRPO
from adaroll.config import SchedulerConfig
from adaroll.envs import get_suite, make_env_factory
from adaroll.experts import collect_experts
from adaroll.integrations.rows import RowSession
from adaroll.integrations.trl import AdaRollEnv, AdaRollTRL
from adaroll.policies.hf_tiny import build_tiny_model
from adaroll.rollout.sessions import Starts
from adaroll.routes import StartKind
from adaroll.snapshots.memory import MemorySnapshots
from adaroll.training.ledger import Ledger
from adaroll.training.scheduler import SCHEDULERS

CHAT_TEMPLATE = importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja"


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
    # 1. phone, tasks, verified expert checkpoints (your env: see docs/integrations.md)
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
    # 2. AdaRoll's scheduler under the paper's thresholds; one group size for every job
    sched = SchedulerConfig(
        tasks_per_iteration=tasks,
        tau_low=thresholds[0],
        tau_high=thresholds[1],
        routing_probes=num_generations,
        root_probes=num_generations,
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
    # 3. the tiny model, taught the action format on the expert demonstrations
    examples = demonstrations(hub, store)
    tokenizer = prompt_tokenizer([prompt for prompt, _ in examples])
    model = build_tiny_model(tokenizer, seed=seed)
    sft_losses = teach_action_format(model, tokenizer, examples, steps=sft_steps, seed=seed)
    before = greedy_match(model, tokenizer, examples, store)
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
    after = greedy_match(model, tokenizer, examples, store)
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


def demonstrations(hub: AdaRollTRL, store: CheckpointStore) -> list[tuple[str, str]]:
    """``(prompt, expert action)`` per checkpoint, the prompt exactly as TRL renders a Local row
    at that checkpoint (the dataset's messages, the state ``reset`` appends, the ``act`` tool)."""
    messages = next(iter(hub.dataset()))["prompt"]
    tools = [AdaRollEnv(hub).act]
    pairs = []
    for c in store:
        job = hub.starts.job(StartKind.ONESTEP.value, c.task.id, c.id)
        session = RowSession(job, hub.starts.open(job), hub.starts.history_window)
        user = {**messages[-1], "content": messages[-1]["content"] + "\n" + session.prompt()}
        pairs.append(([*messages[:-1], user], c.expert_action.to_text()))
        session.close()
    template = _template_tokenizer()
    return [
        (
            template.apply_chat_template(
                m, tools=tools, add_generation_prompt=True, tokenize=False
            ),
            a,
        )
        for m, a in pairs
    ]


def _template_tokenizer() -> Any:
    from adaroll.policies.hf_tiny import build_tiny_tokenizer

    tokenizer = build_tiny_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE.read_text()
    return tokenizer


def prompt_tokenizer(prompts: Sequence[str], vocab: int = 2048) -> Any:
    """A byte-level BPE tokenizer trained on the prompts TRL will show and the action format,
    merging across spaces, so that a prompt of ~3,000 characters is tens of tokens and a CPU
    trains on it in seconds; ``<|im_end|>`` (the end of a chat turn) is its EOS."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)
    tok.decoder = decoders.ByteLevel()
    special = ["<|im_end|>", "<|pad|>", "<|im_start|>", "<|endoftext|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=vocab,
        special_tokens=special,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([*prompts, action_format_help()], trainer)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=special[0], pad_token=special[1])
    fast.padding_side = "left"
    fast.chat_template = CHAT_TEMPLATE.read_text()
    return fast


def teach_action_format(
    model: Any,
    tokenizer: Any,
    examples: Sequence[tuple[str, str]],
    *,
    steps: int,
    batch_size: int = 8,
    lr: float = 3e-3,
    seed: int = 0,
) -> list[float]:
    """Behaviour cloning: ``steps`` AdamW steps on (prompt, expert action + EOS), the loss on
    the action's tokens only; the loss of every step."""
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    encoded = [
        (tokenizer(p)["input_ids"], tokenizer(a)["input_ids"] + [tokenizer.eos_token_id])
        for p, a in examples
    ]
    losses = []
    model.train()
    for _ in range(steps):
        batch = rng.sample(encoded, min(batch_size, len(encoded)))
        width = max(len(p) + len(a) for p, a in batch)
        ids, labels, mask = [], [], []
        for p, a in batch:
            pad = width - len(p) - len(a)
            ids.append([tokenizer.pad_token_id] * pad + p + a)
            labels.append([-100] * (pad + len(p)) + a)
            mask.append([0] * pad + [1] * (len(p) + len(a)))
        loss = model(
            input_ids=torch.tensor(ids),
            attention_mask=torch.tensor(mask),
            labels=torch.tensor(labels),
        ).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        losses.append(loss.item())
    return losses


@torch.no_grad()
def greedy_match(
    model: Any, tokenizer: Any, examples: Sequence[tuple[str, str]], store: CheckpointStore
) -> float:
    """The share of checkpoints where the model's greedy action matches the expert's (the
    paper's matcher: a Local row's reward)."""
    model.eval()
    hits = 0
    for (prompt, _), checkpoint in zip(examples, store, strict=True):
        enc = tokenizer(prompt, return_tensors="pt")
        generated = model.generate(
            **enc, max_new_tokens=16, do_sample=False, pad_token_id=tokenizer.pad_token_id
        )
        text = tokenizer.decode(generated[0, enc["input_ids"].shape[1] :], skip_special_tokens=True)
        try:
            hits += int(PAPER_MATCHER.reward(parse_action(text), checkpoint.expert_action) > 0)
        except ValueError:
            continue
    model.train()
    return hits / max(1, len(examples))


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("runs/trl-phone"))
    parser.add_argument("--steps", type=int, default=96)
    parser.add_argument("--num-generations", type=int, default=8)
    parser.add_argument("--tasks", type=int, default=2)
    parser.add_argument("--sft-steps", type=int, default=60)
    parser.add_argument("--lr", type=float, default=3e-4)
    parser.add_argument("--seed", type=int, default=0)
    a = parser.parse_args()
    torch.set_num_threads(1)
    result = main(
        a.out,
        steps=a.steps,
        num_generations=a.num_generations,
        tasks=a.tasks,
        sft_steps=a.sft_steps,
        lr=a.lr,
        seed=a.seed,
    )
    _print(result["summary"])
    print(f"summary: {a.out / 'summary.json'}")


if __name__ == "__main__":
    _cli()
