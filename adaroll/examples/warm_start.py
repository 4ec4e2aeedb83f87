"""A tiny model that already speaks the action format, for the TRL and verl examples: a tokenizer
trained on the prompts the framework will render, a 2-layer Qwen2, a few SFT steps on the
experts' actions at every checkpoint, and the greedy expert match that measures it."""

# --- docs:warm-start begin ---
from __future__ import annotations

import importlib.resources
import random
from collections.abc import Callable, Sequence
from typing import Any

import torch

from adaroll.actions import PAPER_MATCHER, action_format_help, parse_action
from adaroll.checkpoints import CheckpointStore
from adaroll.integrations.rows import RowSession
from adaroll.policies.hf_tiny import build_tiny_tokenizer
from adaroll.rollout.sessions import Starts
from adaroll.routes import StartKind

CHAT_TEMPLATE = importlib.resources.files("trl") / "chat_templates" / "qwen2_5.jinja"
"""Qwen2.5's chat template (TRL ships it): it can offer tools, which TRL needs, and verl's
loops strip its default system prompt from later turns as they do for a real Qwen2.5."""

Chat = list[dict[str, Any]]


def local_demonstrations(
    starts: Starts, chat: Callable[[RowSession], Chat], tools: Sequence[Any] | None = None
) -> list[tuple[str, str]]:
    """``(prompt, expert action)`` at every checkpoint of ``starts``, in the store's order: the
    prompt is ``chat`` of a Local start there, rendered by the chat template exactly as the
    framework will render it (so that SFT teaches the prompts RL shows)."""
    chats = []
    for c in starts.checkpoints:
        job = starts.job(StartKind.ONESTEP.value, c.task.id, c.id)
        session = RowSession(job, starts.open(job), starts.history_window)
        chats.append((chat(session), c.expert_action.to_text()))
        session.close()
    template = build_tiny_tokenizer()  # only renders text: any tokenizer with the template does
    template.chat_template = CHAT_TEMPLATE.read_text()
    return [
        (
            template.apply_chat_template(
                messages, tools=tools, add_generation_prompt=True, tokenize=False
            ),
            action,
        )
        for messages, action in chats
    ]


def prompt_tokenizer(prompts: Sequence[str], vocab: int = 2048) -> Any:
    """A byte-level BPE tokenizer trained on the prompts the framework will show and the action
    format, merging across spaces, so that a prompt of ~3,000 characters is tens of tokens and a
    CPU trains on it in seconds; ``<|im_end|>`` (the end of a chat turn) is its EOS."""
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


# --- docs:warm-start end ---
