"""Progress output: plain lines, no carriage-return redraws, when the stream is no terminal."""

from __future__ import annotations

import io

import pytest
from tqdm import tqdm

from adaroll.progress_bar import PlainProgress, progress_bar


class _Clock:
    """A settable clock, so that the interval is tested without waiting."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_log_stream_gets_plain_progress_and_a_terminal_gets_a_bar() -> None:
    assert isinstance(progress_bar(total=3, file=io.StringIO()), PlainProgress)
    bar = progress_bar(total=3, file=_Terminal(), leave=False, dynamic_ncols=True)
    assert isinstance(bar, tqdm)
    bar.close()


def test_plain_progress_prints_whole_lines_at_the_interval_and_at_the_end() -> None:
    out, clock = io.StringIO(), _Clock()
    bar = PlainProgress(
        total=1_000_000,
        initial=0,
        desc="stage1",
        unit="steps",
        file=out,
        interval_s=10,
        clock=clock,
    )
    for _ in range(5):  # five updates within the interval: nothing printed
        clock.now += 1
        bar.update(1000)
    assert out.getvalue() == ""
    clock.now = 12
    bar.update(1000)
    bar.set_postfix(loss="0.250", samples=64, refresh=False)
    clock.now = 15
    bar.refresh()  # 3 s after the last line: still nothing
    bar.n = 250_000  # the trainer sets n directly
    bar.close()
    bar.close()  # closing twice prints once
    text = out.getvalue()
    assert "\r" not in text
    assert text.splitlines() == [
        "stage1: 6000/1000000 steps, 12s",
        "stage1: 250000/1000000 steps, 15s, loss=0.250, samples=64",
    ]
    bar.update(5)  # after close, nothing more
    assert out.getvalue() == text


def test_iterating_counts_items_and_prints_a_final_line() -> None:
    out = io.StringIO()
    items = list(progress_bar(range(4), desc="experts", file=out, leave=False))
    assert items == [0, 1, 2, 3]
    assert out.getvalue() == "experts: 4/4 it, 0s\n"


def test_disabled_progress_prints_nothing() -> None:
    out = io.StringIO()
    bar = progress_bar(total=3, desc="sft", disable=True, file=out)
    bar.update(3)
    bar.close()
    assert out.getvalue() == ""


def test_a_context_manager_closes_with_a_line() -> None:
    out, clock = io.StringIO(), _Clock()
    with PlainProgress(total=2.5, desc="eval", file=out, clock=clock) as bar:
        bar.update(1.5)
    assert out.getvalue() == "eval: 1.5/2.5 it, 0s\n"


def test_by_default_it_writes_to_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    bar = progress_bar(total=2, desc="stage2")  # pytest's captured stderr is no terminal
    bar.update(2)
    bar.close()
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("stage2: 2/2 it, ")
    assert captured.err.count("\n") == 1 and "\r" not in captured.err
