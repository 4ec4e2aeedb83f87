"""Fixtures shared across test packages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import torch


@contextmanager
def _torch_threads(n: int) -> Iterator[None]:
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture
def one_torch_thread() -> Iterator[None]:
    """Small nets run fastest on one thread (and many times slower when shared cores are
    oversubscribed); restore the setting afterwards."""
    with _torch_threads(1):
        yield


@pytest.fixture(scope="module")
def module_one_torch_thread() -> Iterator[None]:
    """:func:`one_torch_thread` for a whole module (its module-scoped fixtures train too)."""
    with _torch_threads(1):
        yield
