"""Append-only JSONL files that survive a crash: one fsynced line per record, a torn last
line is dropped (and reported) on load, and a resumed run can cut the file back to a count."""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from adaroll.io import critical


class JsonlError(ValueError):
    """A JSONL file corrupted before its last line (a record that is not a JSON object, or not
    JSON at all): the message names the file, the line and the byte offset."""


def read_jsonl(path: Path) -> tuple[list[dict[str, Any]], int]:
    """All complete records of ``path`` and the byte length they span (a torn tail excluded).

    A last line without its newline is a torn write: dropped with a warning. Any other line
    that is not one JSON object raises :class:`JsonlError`."""
    if not path.exists():
        return [], 0
    data = path.read_bytes()
    records: list[dict[str, Any]] = []
    good = 0
    for lineno, line in enumerate(data.splitlines(keepends=True), 1):
        if not line.endswith(b"\n"):
            warnings.warn(f"{path}: dropping a torn last line ({len(line)} bytes)", stacklevel=2)
            break
        if line.strip():
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # not JSON, not UTF-8, nested too deeply
                record = None
            if not isinstance(record, dict):
                raise JsonlError(f"{path}:{lineno}: corrupt record at byte {good}: {line[:80]!r}")
            records.append(record)
        good += len(line)
    return records, good


class JsonlLog:
    """An append-only list of JSON records backed by one file."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.records, good = read_jsonl(self.path)
        if self.path.exists() and good != self.path.stat().st_size:
            os.truncate(self.path, good)

    def append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, sort_keys=True) + "\n"
        with critical(), open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
            os.fsync(handle.fileno())
        self.records.append(record)

    def truncate_to(self, count: int) -> None:
        """Keep the first ``count`` records (used when resuming from an older state)."""
        if count > len(self.records):
            raise ValueError(f"{self.path} holds {len(self.records)} records, cannot keep {count}")
        self.records = self.records[:count]
        text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in self.records)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(text)
        os.replace(tmp, self.path)

    def last(self, **match: Any) -> dict[str, Any] | None:
        for record in reversed(self.records):
            if all(record.get(k) == v for k, v in match.items()):
                return record
        return None

    def __len__(self) -> int:
        return len(self.records)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.records)
