"""Derived seeds: every random choice of a run is a pure function of the master seed and where
it happens (phase, iteration, purpose), so a resumed run draws exactly what an uninterrupted
one would have drawn without saving any generator state."""

from __future__ import annotations

import hashlib
import random
from typing import Any

import numpy as np
import torch


def derive_seed(*parts: object) -> int:
    digest = hashlib.sha256(repr(parts).encode()).digest()
    return int.from_bytes(digest[:8], "little") & 0x7FFF_FFFF_FFFF_FFFF


def seed_everything(*parts: object, policy: Any = None) -> int:
    """Seed Python, NumPy, torch (and ``policy.reseed`` when given) from ``parts``."""
    seed = derive_seed(*parts)
    random.seed(seed)
    np.random.seed(seed % 2**32)
    torch.manual_seed(seed)
    if policy is not None:
        policy.reseed(seed)
    return seed
