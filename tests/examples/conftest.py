"""What the examples' tests share: a saved tiny model standing in for a downloaded one."""

from __future__ import annotations

from pathlib import Path

import pytest

from adaroll.examples.warm_start import CHAT_TEMPLATE
from adaroll.policies.hf_tiny import build_tiny_model, build_tiny_tokenizer


@pytest.fixture
def saved_model(tmp_path: Path) -> Path:
    """A folder holding the tiny Qwen2 and its tokenizer with Qwen2.5's chat template, as
    ``from_pretrained`` loads a Hugging Face model."""
    folder = tmp_path / "model"
    tokenizer = build_tiny_tokenizer()
    tokenizer.chat_template = CHAT_TEMPLATE.read_text()
    build_tiny_model(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder
