"""Crash-safe file writing: write a temporary file next to the target, fsync, then rename;
and sections a Ctrl-C lets finish (:func:`critical`)."""

from __future__ import annotations

import os
import signal
import tempfile
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

PRIVATE_DIR_MODE = 0o700


def make_private_dir(path: Path) -> Path:
    """Create directory ``path`` (and missing parents) readable only by its owner (mode 0700).

    Run and snapshot directories hold configs, trajectories, policies and browser state: other
    users of the machine must not read them. Missing parents are created 0700 too; a directory
    that already exists keeps its mode (the user chose it). Returns ``path``."""
    path = Path(path)
    missing = []
    for candidate in (path, *path.parents):
        if candidate.exists():
            break
        missing.append(candidate)
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # created concurrently: keep whatever its creator chose
            continue
        os.chmod(directory, PRIVATE_DIR_MODE)  # exact, whatever the umask
    if not path.is_dir():
        raise NotADirectoryError(f"{path} exists and is not a directory")
    return path


_critical_depth = 0
_interrupted = False
_received = False


@contextmanager
def critical() -> Iterator[None]:
    """A section a Ctrl-C lets finish (a file being written, a state being swapped in): under
    :func:`defer_interrupts`, a SIGINT that arrives inside it raises ``KeyboardInterrupt``
    when the outermost section ends, not in the middle. Other threads' sections are not
    protected (signals are handled in the main thread)."""
    global _critical_depth, _interrupted
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _critical_depth += 1
    try:
        yield
    finally:
        _critical_depth -= 1
    if _critical_depth == 0 and _interrupted:
        _interrupted = False
        raise KeyboardInterrupt


def defer_interrupts() -> None:
    """Handle SIGINT (Ctrl-C) as Python does - ``KeyboardInterrupt`` - except inside
    :func:`critical` sections, which finish first (the commands of ``adaroll`` install it)."""

    def handler(signum: int, frame: Any) -> None:
        global _interrupted, _received
        _received = True
        if _critical_depth > 0:
            _interrupted = True
            return
        raise KeyboardInterrupt

    signal.signal(signal.SIGINT, handler)


def interrupt_received() -> bool:
    """Whether a SIGINT reached the handler of :func:`defer_interrupts` (a command that ends
    then was interrupted, whatever exit its framework turned the ``KeyboardInterrupt`` into)."""
    return _received


def atomic_write(path: Path, write: Callable[[IO[Any]], object], *, binary: bool = False) -> None:
    """Write ``path`` so that readers see either the old or the new content, never a mix (a
    Ctrl-C waits for the rename: :func:`critical`)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with critical():
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb" if binary else "w") as handle:
                write(handle)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, lambda handle: handle.write(text))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    atomic_write(path, lambda handle: handle.write(data), binary=True)
