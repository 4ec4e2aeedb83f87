"""The collector thresholds of a training loop: raised inside, restored after, never lowered."""

from __future__ import annotations

import gc

import pytest

from adaroll.gc_tuning import TRAINING_THRESHOLDS, training_gc


@pytest.fixture(autouse=True)
def _restore_thresholds():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_thresholds_are_raised_inside_and_restored_after() -> None:
    gc.set_threshold(700, 10, 10)
    with training_gc():
        assert gc.get_threshold() == TRAINING_THRESHOLDS
        assert gc.isenabled()  # cycles are still collected, only less often
    assert gc.get_threshold() == (700, 10, 10)


def test_thresholds_are_restored_when_the_loop_raises() -> None:
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), training_gc():
        raise RuntimeError("an iteration failed")
    assert gc.get_threshold() == (700, 10, 10)


def test_a_caller_s_higher_thresholds_are_kept() -> None:
    gc.set_threshold(50_000, 5, 20)
    with training_gc((10_000, 10, 10)):
        assert gc.get_threshold() == (50_000, 10, 20)
    assert gc.get_threshold() == (50_000, 5, 20)


def test_cyclic_garbage_is_still_collected_inside() -> None:
    class Node:
        pass

    with training_gc():
        a, b = Node(), Node()
        a.other, b.other = b, a  # type: ignore[attr-defined]
        del a, b
        assert gc.collect() >= 2
