"""Progress of long loops: a tqdm bar on a terminal, plain lines in a log.

tqdm redraws its bar with carriage returns, which a terminal turns into one updating line and
a log file (``make run > run.log 2>&1``, CI) keeps as thousands of fragments. When the stream
is not a terminal, :func:`progress_bar` returns a :class:`PlainProgress` instead: the same
interface as the tqdm calls AdaRoll makes (``total``, ``initial``, ``desc``, ``disable``;
``update``, ``set_postfix``, ``refresh``, ``close``, ``n``, iteration, ``with``), printing one
line at most every ``interval_s`` seconds and a last one when it closes.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import IO, Any

PLAIN_INTERVAL_S = 10.0
"""Seconds between two plain progress lines (the last line is printed whatever the interval)."""


def progress_bar(
    iterable: Iterable[Any] | None = None,
    *,
    total: float | None = None,
    initial: float = 0,
    desc: str = "",
    unit: str = "it",
    disable: bool = False,
    file: IO[str] | None = None,
    interval_s: float = PLAIN_INTERVAL_S,
    **tqdm_options: Any,
) -> Any:
    """A tqdm bar when ``file`` (default: stderr, where tqdm writes) is a terminal, else a
    :class:`PlainProgress`. ``tqdm_options`` (``leave``, ``dynamic_ncols``...) only shape a bar."""
    stream = sys.stderr if file is None else file
    if not disable and not _is_terminal(stream):
        return PlainProgress(
            iterable,
            total=total,
            initial=initial,
            desc=desc,
            unit=unit,
            file=stream,
            interval_s=interval_s,
        )
    from tqdm import tqdm

    return tqdm(
        iterable,
        total=total,
        initial=initial,
        desc=desc,
        unit=unit,
        disable=disable,
        file=stream,
        **tqdm_options,
    )


def _is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty and isatty())
    except ValueError:  # a closed stream
        return False


class PlainProgress:
    """Progress as whole lines (``desc: n/total unit, elapsed, postfix``), for logs."""

    def __init__(
        self,
        iterable: Iterable[Any] | None = None,
        *,
        total: float | None = None,
        initial: float = 0,
        desc: str = "",
        unit: str = "it",
        file: IO[str] | None = None,
        interval_s: float = PLAIN_INTERVAL_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if total is None and iterable is not None and hasattr(iterable, "__len__"):
            total = len(iterable)  # type: ignore[arg-type]
        self.iterable, self.total, self.n = iterable, total, initial
        self.desc, self.unit, self.file = desc, unit, file
        self.interval_s, self.clock = interval_s, clock
        self.postfix = ""
        self.closed = False
        self._start = self._last_print = clock()

    def __iter__(self) -> Iterator[Any]:
        assert self.iterable is not None, "PlainProgress(iterable) to iterate"
        try:
            for item in self.iterable:
                yield item
                self.update()
        finally:
            self.close()

    def __enter__(self) -> PlainProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def update(self, n: float = 1) -> None:
        self.n += n
        self.refresh()

    def set_postfix(
        self, ordered_dict: dict[str, Any] | None = None, refresh: bool = True, **kwargs: Any
    ) -> None:
        items = {**(ordered_dict or {}), **kwargs}
        self.postfix = ", ".join(f"{k}={v}" for k, v in items.items())
        if refresh:
            self.refresh()

    def refresh(self) -> None:
        """Print a line when ``interval_s`` has passed since the last one."""
        if not self.closed and self.clock() - self._last_print >= self.interval_s:
            self._print()

    def close(self) -> None:
        """Print the last line (once)."""
        if not self.closed:
            self._print()
            self.closed = True

    def line(self) -> str:
        count = _number(self.n) + (f"/{_number(self.total)}" if self.total is not None else "")
        parts = [f"{count} {self.unit}", f"{self.clock() - self._start:.0f}s"]
        if self.postfix:
            parts.append(self.postfix)
        return f"{self.desc}: {', '.join(parts)}" if self.desc else ", ".join(parts)

    def _print(self) -> None:
        stream = sys.stderr if self.file is None else self.file
        print(self.line(), file=stream, flush=True)
        self._last_print = self.clock()


def _number(value: float) -> str:
    """``12`` for whole numbers (env steps run to millions: no ``1e+06``), else one decimal."""
    return str(int(value)) if float(value).is_integer() else f"{value:.1f}"
