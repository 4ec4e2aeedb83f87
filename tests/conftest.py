"""Fixtures shared across test packages."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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


@pytest.fixture(scope="session")
def mobile_store():
    """Verified expert checkpoints of the test-size mobile suite (:mod:`tests.real_mobile`)."""
    from tests import real_mobile

    return real_mobile.verified_store()


@pytest.fixture(scope="session")
def mobile_base(tmp_path_factory: pytest.TempPathFactory, mobile_store) -> Path:
    """A small policy behaviour-cloned on those checkpoints (as the pipeline's Base is on its
    pretrain pool), saved: a fresh net never succeeds, so its groups would carry no gradient;
    this one succeeds on some rollouts of every task (about 25-60% here)."""
    from tests import real_mobile

    with _torch_threads(1):
        return real_mobile.saved_clone(
            real_mobile.small_policy(seed=0),
            real_mobile.examples(mobile_store),
            tmp_path_factory.mktemp("mobile-base"),
            epochs=12,
            batch_size=32,
            lr=3e-3,
        )
