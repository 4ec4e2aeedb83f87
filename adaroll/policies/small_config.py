"""The small policy's configuration (:class:`SmallPolicyConfig`), saved with its weights; read
by the policy (:mod:`adaroll.policies.small`) and its network (:mod:`adaroll.policies.small_net`)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any

from adaroll.actions import ActionKind, key_error
from adaroll.policies.features import CANDIDATE_SOURCES, FeatureSpec


@dataclass(frozen=True)
class SmallPolicyConfig:
    """Configuration of :class:`SmallPolicy` (saved with its weights)."""

    dim: int = 64
    """Width of every embedding and hidden layer."""
    heads: int = 4
    """Attention heads (``dim`` must be divisible by it)."""
    layers: int = 1
    """Element blocks: each is cross-attention from elements to instruction words followed by
    self-attention among elements."""
    instruction_layers: int = 1
    """Self-attention layers over the instruction words."""
    history_len: int = 4
    """How many of the most recent actions the policy sees."""
    hash_buckets: int = 1 << 15
    """Rows of the hashed text-embedding table (words and character n-grams share it)."""
    char_ngram: int = 3
    """Character n-gram length hashed for every word (0 = whole words only)."""
    max_elements: int = 128
    """Elements beyond this many (in observation order) are ignored."""
    max_words: int = 48
    """Instruction words beyond this many are ignored by the attention (not by the features)."""
    max_ngram: int = 2
    """Longest instruction word n-gram offered as a candidate string (0 = none)."""
    kinds: tuple[str, ...] = ("tap", "long_press", "swipe", "type", "key", "open_app", "done")
    """Action kinds the policy may emit (set it from the environment's action space)."""
    keys: tuple[str, ...] = ("back", "home", "enter")
    """Keys the ``key`` head chooses from (names of ``adaroll.actions.KEYS``, or web chords such
    as ``ctrl+a``)."""
    app_names: tuple[str, ...] = ()
    """App names always offered as candidates (source ``app``), e.g. the env's launcher apps."""
    type_sources: tuple[str, ...] = ("quoted",)
    """Candidate sources the ``type`` head chooses from: quoted, ngram, element, app, part,
    number (see :mod:`adaroll.policies.features`)."""
    app_sources: tuple[str, ...] = ("app", "element")
    """Candidate sources the ``open_app`` head chooses from."""
    answer_sources: tuple[str, ...] = ("element", "quoted", "part", "number")
    """Candidate sources ``done(answer)`` chooses from (besides "no answer")."""
    temperature: float = 1.0
    """Sampling temperature; log-probabilities are those of the tempered distribution."""
    seed: int = 0
    """Seeds the weight initialisation and the policy's own sampling generator."""

    def __post_init__(self) -> None:
        for name in ("kinds", "keys", "app_names", "type_sources", "app_sources", "answer_sources"):
            object.__setattr__(self, name, tuple(getattr(self, name)))
        valid_kinds = [k.value for k in ActionKind]
        if not self.kinds:
            raise ValueError("kinds must not be empty")
        for k in self.kinds:
            if k not in valid_kinds:
                raise ValueError(
                    f"unknown action kind {k!r}; valid kinds: {', '.join(valid_kinds)}"
                )
        if len(set(self.kinds)) != len(self.kinds):
            raise ValueError(f"duplicate kinds in {self.kinds}")
        for key in self.keys:
            error = key_error(key)  # a key name, or a web chord such as ctrl+a
            if error is not None:
                raise ValueError(f"keys: {error}")
        if "key" in self.kinds and not self.keys:
            raise ValueError("kind 'key' needs at least one key")
        for name in ("type_sources", "app_sources", "answer_sources"):
            for src in getattr(self, name):
                if src not in CANDIDATE_SOURCES:
                    raise ValueError(f"{name}: unknown source {src!r}; valid: {CANDIDATE_SOURCES}")
        if self.dim <= 0 or self.dim % self.heads:
            raise ValueError(
                f"dim ({self.dim}) must be a positive multiple of heads ({self.heads})"
            )
        if self.temperature <= 0 or not math.isfinite(self.temperature):
            raise ValueError("temperature must be a positive number")
        if self.hash_buckets < 16:
            raise ValueError("hash_buckets must be at least 16")
        if min(self.layers, self.instruction_layers, self.history_len, self.max_ngram) < 0:
            raise ValueError("layers, instruction_layers, history_len and max_ngram must be >= 0")
        if self.max_elements < 1 or self.max_words < 1:
            raise ValueError("max_elements and max_words must be >= 1")

    def feature_spec(self) -> FeatureSpec:
        return FeatureSpec(
            hash_buckets=self.hash_buckets,
            char_ngram=self.char_ngram,
            history_len=self.history_len,
            max_elements=self.max_elements,
            max_words=self.max_words,
            max_ngram=self.max_ngram,
            app_names=self.app_names,
            type_sources=self.type_sources,
            app_sources=self.app_sources,
            answer_sources=self.answer_sources,
        )

    def to_dict(self) -> dict[str, Any]:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SmallPolicyConfig:
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown SmallPolicyConfig field(s) {sorted(unknown)}")
        return cls(**data)
