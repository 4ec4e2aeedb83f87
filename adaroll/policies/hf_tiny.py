"""The tiny model behind ``policy.options.tiny`` (:mod:`adaroll.policies.hf`): a byte-level BPE
tokenizer trained in-process on action texts and a randomly initialised 2-layer Qwen2, so the
transformers + LoRA path runs for real in tests and on a machine without downloads."""

from __future__ import annotations

from typing import Any

import torch

from adaroll.actions import action_format_help

TINY_SPECIAL = ("<|endoftext|>", "<|pad|>")


def _tiny_corpus() -> list[str]:
    examples = [
        "tap(0.5, 0.25)",
        "tap(0.125, 0.875)",
        "double_tap(0.3, 0.6)",
        "long_press(0.75, 0.4)",
        "swipe(up)",
        "swipe(down)",
        "swipe(left)",
        "swipe(right)",
        "swipe(0.5, 0.8, 0.5, 0.2)",
        'type("hello world")',
        "key(back)",
        "key(home)",
        "key(enter)",
        'open_app("Contacts")',
        "wait()",
        "done()",
        'done("42")',
        "Task: Previous actions (oldest first): (none)",
        "Screen elements: button text edit list item checkbox clickable enabled",
    ]
    return [action_format_help()] * 4 + examples * 8


def build_tiny_tokenizer() -> Any:
    """A byte-level BPE tokenizer (vocab 400) trained in-process on action texts; EOS is
    ``<|endoftext|>``, pad ``<|pad|>``. No chat template: prompts use the plain rendering."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=list(TINY_SPECIAL),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_tiny_corpus(), trainer)
    return PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token=TINY_SPECIAL[0], pad_token=TINY_SPECIAL[1]
    )


def build_tiny_model(tokenizer: Any, seed: int = 0) -> Any:
    """A randomly initialised 2-layer Qwen2 causal LM (hidden 64) for ``tokenizer``."""
    from transformers import Qwen2Config, Qwen2ForCausalLM

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        tie_word_embeddings=True,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = Qwen2ForCausalLM(config)
    return model
