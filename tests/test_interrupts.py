"""Ctrl-C lets the file being written finish: a SIGINT inside adaroll.io.critical raises
KeyboardInterrupt when the section ends, not in the middle (the commands install the handler;
tests/test_fault_injection.py sends real SIGINTs to a run)."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

from adaroll.cli import interrupted_hint
from adaroll.io import atomic_write, critical, defer_interrupts


@pytest.fixture
def deferred() -> Iterator[None]:
    saved = signal.getsignal(signal.SIGINT)
    defer_interrupts()
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, saved)


def test_a_sigint_inside_a_critical_section_waits_for_its_end(deferred: None) -> None:
    done = []
    with pytest.raises(KeyboardInterrupt):
        with critical():
            with critical():
                os.kill(os.getpid(), signal.SIGINT)
                done.append("inner")
            done.append("outer")
    assert done == ["inner", "outer"]
    with pytest.raises(KeyboardInterrupt):  # outside a section: at once, as Python does
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(1000):
            pass
    with critical():  # nothing pending afterwards
        pass


def test_a_file_interrupted_while_written_is_written_whole(deferred: None, tmp_path: Path) -> None:
    path = tmp_path / "summary.json"

    def write(handle: object) -> None:
        handle.write("{")  # type: ignore[attr-defined]
        os.kill(os.getpid(), signal.SIGINT)
        handle.write('"done": true}')  # type: ignore[attr-defined]

    with pytest.raises(KeyboardInterrupt):
        atomic_write(path, write)
    assert path.read_text() == '{"done": true}'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["summary.json"]


def test_the_interrupted_message_says_how_to_resume_without_fresh() -> None:
    hint = interrupted_hint(["run", "--quick", "--fresh", "--out", "runs/my run"])
    assert hint.endswith("run the same command again:\n  adaroll run --quick --out 'runs/my run'")
    assert interrupted_hint(["train", "hybrid", "--policy", "p"]).endswith(
        "adaroll train hybrid --policy p --resume"
    )
    assert interrupted_hint(["envs", "check"]) == "interrupted"
