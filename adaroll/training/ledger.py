"""The cost ledger: an append-only record of what training (and evaluation) cost.

Every unit of work is one :class:`CostRecord`: counters (training samples, policy samples,
env steps, restores and their seconds, replayed steps, wall seconds, invalid samples, faults,
restore fallbacks)
tagged by ``mode`` (onestep/suffix/root/vanilla/sft/eval), ``purpose``
(train/routing/reeval/selection/eval)
and optionally ``task_id``, ``iteration`` and ``stage``.

Persistence: one JSON object per line (JSONL). Each record is written with a single
``write`` of the whole line, then ``flush`` and ``os.fsync`` (records appended inside
:meth:`Ledger.batch`, such as one iteration's group records, are flushed and fsynced once,
together); a record counts as committed once its newline is on disk. A crash therefore loses
at most the record (or the batch) being written: on load, a last line without its newline (or
that does not parse) is a *torn tail*; it is reported (:attr:`Ledger.torn_tail`, a logged
warning) and, when the ledger is opened for appending, cut off the file. A bad line *before*
the last one is corruption, not a crash, and raises :class:`LedgerError`. Reloading gives
records equal to those written, hence identical totals (sums are taken in record order).

Resume: the trainer stores ``len(ledger)`` in its checkpoint; after a crash it reopens the
ledger and calls :meth:`Ledger.truncate_to` with that count, dropping records of the work
that the checkpoint does not contain.

Evaluation is never training cost: records with purpose ``eval`` or ``selection`` (mode
``eval`` implies one of them) are left out of :meth:`Ledger.training_cost`, and may not carry
training samples. An evaluation that only *reports* is ``eval`` (:meth:`Ledger.eval_cost`, on no
bill); one whose result *chooses* something (Stage I's best policy) is ``selection``
(:meth:`Ledger.selection_cost`), a cost of every configuration that uses the choice. Records
with purpose ``overhead`` are execution artefacts (images rebuilt after a restart) and are on
no bill either. A single process writes a ledger (the trainer); workers report costs to it.
"""

from __future__ import annotations

import json
import logging
import math
import os
import time
from collections.abc import Collection, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import IO, Any

from adaroll.costs import COUNTERS, FLOAT_COUNTERS, INT_COUNTERS, Counters
from adaroll.io import critical
from adaroll.routes import VANILLA, StartKind

__all__ = [
    "COUNTERS",
    "FLOAT_COUNTERS",
    "INT_COUNTERS",
    "CostRecord",
    "CostTotals",
    "Ledger",
    "LedgerError",
    "read_ledger",
]

log = logging.getLogger(__name__)

MODES = (*(start.value for start in StartKind), VANILLA, "sft", "eval")
"""What kind of work a record is: a group's start kind (:class:`~adaroll.routes.StartKind`), the
Vanilla baseline's groups, SFT, or an evaluation."""
PURPOSES = ("train", "routing", "reeval", "selection", "eval", "overhead")
BILLED_PURPOSES = ("train", "routing", "reeval")
EVALUATION_PURPOSES = ("selection", "eval")
TAGS = ("mode", "purpose", "task_id", "iteration", "stage")


class LedgerError(ValueError):
    """An invalid record, or a ledger file corrupted somewhere other than its last line."""


@dataclass(frozen=True)
class CostRecord(Counters):
    """One ledger entry (validated on construction): the :class:`~adaroll.costs.Counters` of a
    unit of work, tagged."""

    mode: str
    """What kind of work: onestep, suffix, root, vanilla, sft or eval."""
    purpose: str
    """Why: train (may enter an update), routing (a task's first probes: estimate p(x) and
    route it), reeval (later probes re-estimating a routed task's p(x)), selection (an evaluation
    whose result chooses a policy), eval (Avg@k/Pass@k that only reports), overhead (work whose
    amount depends on how the run executes, not on the configuration: snapshot images rebuilt
    by each process or worker; recorded, never billed)."""
    task_id: str | None = None
    """Task the work was for, if one."""
    iteration: int | None = None
    """Trainer iteration, if any."""
    stage: str | None = None
    """Training phase (e.g. stage1, hybrid, vanilla, sft, eval)."""
    ts: float | None = None
    """Unix time the record was written (informational; never part of totals)."""

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise LedgerError(f"mode {self.mode!r} not in {MODES}")
        if self.purpose not in PURPOSES:
            raise LedgerError(f"purpose {self.purpose!r} not in {PURPOSES}")
        if self.mode == "eval" and self.purpose not in EVALUATION_PURPOSES:
            raise LedgerError(
                f"mode 'eval' needs purpose {' or '.join(map(repr, EVALUATION_PURPOSES))}, "
                f"got {self.purpose!r}"
            )
        for name in INT_COUNTERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise LedgerError(f"{name} must be a non-negative int, got {value!r}")
        for name in FLOAT_COUNTERS:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise LedgerError(f"{name} must be a number, got {value!r}")
            number = float(value) if isinstance(value, float) or abs(value) < 2**1000 else math.inf
            if not math.isfinite(number) or number < 0:
                raise LedgerError(f"{name} must be finite and non-negative, got {value!r}")
            object.__setattr__(self, name, number)
        if self.is_eval and self.training_samples:
            raise LedgerError(
                f"evaluation never trains: training_samples must be 0 for purpose {self.purpose}"
            )
        if self.task_id is not None and not isinstance(self.task_id, str):
            raise LedgerError(f"task_id must be a string, got {self.task_id!r}")
        if self.stage is not None and not isinstance(self.stage, str):
            raise LedgerError(f"stage must be a string, got {self.stage!r}")
        if self.iteration is not None and (
            isinstance(self.iteration, bool) or not isinstance(self.iteration, int)
        ):
            raise LedgerError(f"iteration must be an int, got {self.iteration!r}")

    @property
    def is_eval(self) -> bool:
        """An evaluation (reporting or selecting), never training cost."""
        return self.purpose in EVALUATION_PURPOSES

    def to_dict(self) -> dict[str, Any]:
        """Non-default fields only (tags always kept), JSON-ready."""
        out: dict[str, Any] = {"mode": self.mode, "purpose": self.purpose}
        for f in fields(self):
            if f.name in out:
                continue
            value = getattr(self, f.name)
            if value is not None and value != f.default:
                out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CostRecord:
        if not isinstance(data, dict):
            raise LedgerError(f"a record must be a JSON object, got {data!r}")
        known = {f.name for f in fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise LedgerError(f"unknown record field(s) {sorted(unknown)}")
        try:
            return cls(**data)
        except TypeError as exc:  # missing mode/purpose
            raise LedgerError(str(exc)) from None


@dataclass(frozen=True)
class CostTotals(Counters):
    """Summed counters of a set of records (``records`` = how many)."""

    records: int = 0

    @classmethod
    def of(cls, records: Iterable[CostRecord]) -> CostTotals:
        sums: dict[str, Any] = {name: 0 for name in INT_COUNTERS}
        sums.update({name: 0.0 for name in FLOAT_COUNTERS})
        n = 0
        for r in records:
            n += 1
            for name in COUNTERS:
                sums[name] += getattr(r, name)
        return cls(records=n, **sums)

    def plus(self, other: Counters) -> CostTotals:
        """Counters added, and the record counts when ``other`` is a total too."""
        more = other.records if isinstance(other, CostTotals) else 0
        return replace(super().plus(other), records=self.records + more)

    def to_dict(self) -> dict[str, float | int]:
        return {"records": self.records, **self.counters()}


TagFilter = str | int | None | Collection[str | int | None]


def _matches(record: CostRecord, where: dict[str, TagFilter]) -> bool:
    for tag, wanted in where.items():
        value = getattr(record, tag)
        if isinstance(wanted, (str, int)) or wanted is None:
            if value != wanted:
                return False
        elif value not in wanted:
            return False
    return True


def _check_tags(names: Iterable[str]) -> None:
    bad = [n for n in names if n not in TAGS]
    if bad:
        raise LedgerError(f"unknown tag(s) {bad}; valid tags: {', '.join(TAGS)}")


@dataclass(frozen=True)
class LoadResult:
    """What :func:`read_ledger` found in a file."""

    records: list[CostRecord]
    offsets: list[int]
    """Byte offset just past each record's newline."""
    torn_tail: bytes | None
    """Bytes after the last committed record (a record torn by a crash), or None."""


def read_ledger(path: str | Path) -> LoadResult:
    """Read a JSONL ledger without modifying it; a torn last line is reported, not raised."""
    data = Path(path).read_bytes() if Path(path).exists() else b""
    records: list[CostRecord] = []
    offsets: list[int] = []
    pos = 0
    lines = data.split(b"\n")
    for lineno, line in enumerate(lines, 1):
        last = lineno == len(lines)
        if last:  # bytes after the final newline: empty, or a torn record
            return LoadResult(records, offsets, line if line else None)
        try:
            if not line.strip():
                raise ValueError("empty line")
            record = CostRecord.from_dict(json.loads(line))
        except (ValueError, RecursionError) as exc:  # JSON, UTF-8, LedgerError; deep nesting
            if lineno == len(lines) - 1 and not lines[-1]:
                # Newline-terminated but unparseable last line: cannot come from a crash of our
                # single-write append, but be lenient: report it as torn too.
                return LoadResult(records, offsets, line + b"\n")
            raise LedgerError(f"{path}: line {lineno} is not a valid record: {exc}") from None
        pos += len(line) + 1
        records.append(record)
        offsets.append(pos)
    raise AssertionError("unreachable")  # pragma: no cover - split() yields >= 1 element


class Ledger:
    """Append-only cost ledger, persisted as JSONL (or in memory when ``path`` is None).

    Opening an existing file loads its records (a torn last line is reported in
    :attr:`torn_tail` and, unless ``readonly``, cut off so new records start on a clean line).
    """

    def __init__(
        self, path: str | Path | None = None, *, readonly: bool = False, fsync: bool = True
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.readonly = readonly
        self.fsync = fsync
        self._records: list[CostRecord] = []
        self._offsets: list[int] = []
        self.torn_tail: bytes | None = None
        self._fh: IO[bytes] | None = None
        self._batching = False
        if self.path is None:
            return
        loaded = read_ledger(self.path)
        self._records, self._offsets, self.torn_tail = (
            loaded.records,
            loaded.offsets,
            loaded.torn_tail,
        )
        if self.torn_tail is not None:
            log.warning(
                "ledger %s: dropping a torn last record (%d bytes): %r",
                self.path,
                len(self.torn_tail),
                self.torn_tail[:80],
            )
        if readonly:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(self.path, "ab")  # noqa: SIM115 - kept open for appends, closed in close()
        if self.torn_tail is not None:
            self._cut(self._offsets[-1] if self._offsets else 0)

    # -- writing ---------------------------------------------------------------------------------
    def append(self, record: CostRecord) -> CostRecord:
        """Append one record; on return it is on disk (flushed and fsynced), or inside
        :meth:`batch`, once the batch ends."""
        if self.readonly:
            raise LedgerError("ledger opened read-only")
        if not isinstance(record, CostRecord):
            raise LedgerError(f"expected a CostRecord, got {type(record).__name__}")
        with critical():  # a Ctrl-C waits for the whole line (and the bookkeeping)
            if self._fh is not None:
                line = json.dumps(record.to_dict(), separators=(",", ":"), allow_nan=False) + "\n"
                data = line.encode("utf-8")
                self._fh.write(data)
                if not self._batching:
                    self._commit()
                self._offsets.append((self._offsets[-1] if self._offsets else 0) + len(data))
            self._records.append(record)
        return record

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Appends inside the block are committed together when it ends (one flush and one
        ``fsync`` instead of one per record; the bytes written are the same). A crash inside
        loses what the OS had not yet written of the block: whole records, and at most one torn
        last line, reported and cut off on load like any torn tail. Nested blocks commit with
        the outermost."""
        outer = not self._batching
        self._batching = True
        try:
            yield
        finally:
            if outer:
                self._batching = False
                with critical():
                    self._commit()

    def _commit(self) -> None:
        if self._fh is not None:
            self._fh.flush()
            if self.fsync:
                os.fsync(self._fh.fileno())

    def add(self, mode: str, purpose: str, **fields_: Any) -> CostRecord:
        """Build a :class:`CostRecord` from keywords (``ts`` defaults to now) and append it."""
        fields_.setdefault("ts", time.time())
        return self.append(CostRecord(mode=mode, purpose=purpose, **fields_))

    def truncate_to(self, n_records: int) -> None:
        """Keep only the first ``n_records`` records (in memory and on disk).

        Used on resume: the trainer's checkpoint stores ``len(ledger)``.
        """
        if self.readonly:
            raise LedgerError("ledger opened read-only")
        if not 0 <= n_records <= len(self._records):
            raise LedgerError(
                f"cannot truncate a ledger of {len(self._records)} records to {n_records}"
            )
        del self._records[n_records:]
        if self.path is not None:
            del self._offsets[n_records:]
            self._cut(self._offsets[-1] if self._offsets else 0)

    def _cut(self, size: int) -> None:
        assert self._fh is not None
        self._fh.flush()
        os.truncate(self._fh.fileno(), size)
        os.fsync(self._fh.fileno())

    def close(self) -> None:
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- reading ---------------------------------------------------------------------------------
    @property
    def records(self) -> tuple[CostRecord, ...]:
        return tuple(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __iter__(self) -> Iterator[CostRecord]:
        return iter(tuple(self._records))

    def select(self, **where: TagFilter) -> list[CostRecord]:
        """Records whose tags match: ``mode="suffix"``, ``purpose=("train", "routing")``, ..."""
        _check_tags(where)
        return [r for r in self._records if _matches(r, where)]

    def totals(self, **where: TagFilter) -> CostTotals:
        """Summed counters of the records matching every given tag (all records if none)."""
        return CostTotals.of(self.select(**where))

    def totals_by(self, *keys: str, **where: TagFilter) -> dict[tuple[Any, ...], CostTotals]:
        """Totals grouped by a combination of tags: ``totals_by("mode", "purpose")`` ->
        ``{("suffix", "train"): CostTotals, ...}`` (keys in first-seen order)."""
        if not keys:
            raise LedgerError(f"totals_by needs at least one tag of {TAGS}")
        _check_tags(keys)
        groups: dict[tuple[Any, ...], list[CostRecord]] = {}
        for r in self.select(**where):
            groups.setdefault(tuple(getattr(r, k) for k in keys), []).append(r)
        return {k: CostTotals.of(rs) for k, rs in groups.items()}

    def training_cost(self, **where: TagFilter) -> CostTotals:
        """Totals of the training work (purposes train, routing and reeval)."""
        _check_tags(where)
        return CostTotals.of(
            r for r in self._records if r.purpose in BILLED_PURPOSES and _matches(r, where)
        )

    def selection_cost(self, **where: TagFilter) -> CostTotals:
        """Totals of the evaluations that chose something (purpose selection)."""
        return self.totals(**where, purpose="selection")

    def eval_cost(self, **where: TagFilter) -> CostTotals:
        """Totals of the evaluations that only report (purpose eval)."""
        return self.totals(**where, purpose="eval")
