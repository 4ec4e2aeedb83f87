"""The cost ledger: validation, totals by tag, JSONL round trip, crashes and resume."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from adaroll.training import ledger as ledger_mod
from adaroll.training.ledger import (
    CostRecord,
    CostTotals,
    Ledger,
    LedgerError,
    read_ledger,
)

RECORDS = [
    CostRecord(
        "onestep",
        "train",
        training_samples=8,
        policy_samples=8,
        wall_seconds=0.25,
        task_id="t1",
        iteration=0,
        stage="stage1",
    ),
    CostRecord(
        "root",
        "routing",
        policy_samples=40,
        env_steps=40,
        wall_seconds=1.5,
        task_id="t1",
        iteration=1,
        stage="hybrid",
    ),
    CostRecord(
        "suffix",
        "train",
        training_samples=30,
        policy_samples=30,
        env_steps=30,
        restores=8,
        restore_seconds=0.8,
        replayed_steps=0,
        wall_seconds=2.0,
        invalid_samples=2,
        task_id="t2",
        iteration=1,
        stage="hybrid",
    ),
    CostRecord(
        "suffix",
        "train",
        policy_samples=24,
        env_steps=24,
        restores=8,
        restore_seconds=0.7,
        wall_seconds=1.25,
        faults=1,
        task_id="t1",
        iteration=2,
        stage="hybrid",
    ),  # a zero-variance group: drawn, never trained on
    CostRecord("eval", "eval", policy_samples=100, env_steps=100, wall_seconds=3.0, stage="eval"),
    CostRecord(
        "vanilla",
        "train",
        training_samples=64,
        policy_samples=64,
        env_steps=64,
        wall_seconds=4.0,
        task_id="t2",
        iteration=3,
        stage="vanilla",
    ),
]


def _fill(ledger: Ledger) -> Ledger:
    for r in RECORDS:
        ledger.append(r)
    return ledger


# -- records --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"mode": "warmup", "purpose": "train"}, "mode 'warmup' not in"),
        ({"mode": "root", "purpose": "play"}, "purpose 'play' not in"),
        # evaluation work is never training cost
        (
            {"mode": "eval", "purpose": "train"},
            "mode 'eval' needs purpose 'selection' or 'eval', got 'train'",
        ),
        (
            {"mode": "root", "purpose": "eval", "training_samples": 1},
            "evaluation never trains: training_samples must be 0 for purpose eval",
        ),
        (
            {"mode": "root", "purpose": "train", "env_steps": -1},
            "env_steps must be a non-negative int, got -1",
        ),
        (
            {"mode": "root", "purpose": "train", "env_steps": 1.5},
            "env_steps must be a non-negative int",
        ),
        (
            {"mode": "root", "purpose": "train", "faults": True},
            "faults must be a non-negative int, got True",
        ),
        (
            {"mode": "root", "purpose": "train", "wall_seconds": float("nan")},
            "wall_seconds must be finite and non-negative, got nan",
        ),
        (
            {"mode": "root", "purpose": "train", "restore_seconds": -0.1},
            "restore_seconds must be finite",
        ),
        (
            {"mode": "root", "purpose": "train", "restore_seconds": True},
            "restore_seconds must be a number, got True",
        ),
        (
            {"mode": "root", "purpose": "train", "wall_seconds": "1.5"},
            "wall_seconds must be a number",
        ),
        # an int too large for a float is rejected as infinite, not by an OverflowError
        (
            {"mode": "root", "purpose": "train", "wall_seconds": 2**1030},
            "wall_seconds must be finite",
        ),
        (
            {"mode": "root", "purpose": "train", "iteration": "3"},
            "iteration must be an int, got '3'",
        ),
        ({"mode": "root", "purpose": "train", "task_id": 3}, "task_id must be a string, got 3"),
        ({"mode": "root", "purpose": "train", "stage": 1}, "stage must be a string, got 1"),
    ],
)
def test_invalid_records(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(LedgerError, match=message):
        CostRecord(**kwargs)  # type: ignore[arg-type]


def test_int_seconds_are_kept_as_floats() -> None:
    assert CostRecord("root", "train", wall_seconds=5000).wall_seconds == 5000.0
    assert CostRecord("root", "train", restore_seconds=2**999).restore_seconds == float(2**999)


def test_record_dict_round_trip() -> None:
    for r in RECORDS:
        assert CostRecord.from_dict(r.to_dict()) == r
    assert RECORDS[0].to_dict() == {
        "mode": "onestep",
        "purpose": "train",
        "training_samples": 8,
        "policy_samples": 8,
        "wall_seconds": 0.25,
        "task_id": "t1",
        "iteration": 0,
        "stage": "stage1",
    }
    with pytest.raises(LedgerError, match="unknown"):
        CostRecord.from_dict({"mode": "root", "purpose": "train", "steps": 3})
    with pytest.raises(LedgerError, match="purpose"):  # the missing field is named
        CostRecord.from_dict({"mode": "root"})
    with pytest.raises(LedgerError, match=r"a record must be a JSON object, got \[1\]"):
        CostRecord.from_dict([1])  # type: ignore[arg-type]
    assert CostRecord("root", "train", wall_seconds=2).wall_seconds == 2.0


# -- totals ---------------------------------------------------------------------------------------


def test_totals_by_tag() -> None:
    ledger = _fill(Ledger())
    everything = ledger.totals()
    assert everything.records == 6
    assert everything.policy_samples == 8 + 40 + 30 + 24 + 100 + 64
    assert everything.env_steps == 40 + 30 + 24 + 100 + 64

    suffix = ledger.totals(mode="suffix")
    assert suffix == CostTotals(
        records=2,
        training_samples=30,
        policy_samples=54,
        env_steps=54,
        restores=16,
        restore_seconds=1.5,
        wall_seconds=3.25,
        invalid_samples=2,
        faults=1,
    )
    assert ledger.totals(mode="suffix", task_id="t1").policy_samples == 24
    assert ledger.totals(purpose=("train", "routing")).records == 5
    assert ledger.totals(iteration=1).env_steps == 70
    assert ledger.totals(task_id=None).records == 1  # the untagged eval record
    assert ledger.totals(mode="sft").records == 0

    by = ledger.totals_by("mode", "purpose")
    assert list(by) == [
        ("onestep", "train"),
        ("root", "routing"),
        ("suffix", "train"),
        ("eval", "eval"),
        ("vanilla", "train"),
    ]
    assert by[("suffix", "train")] == suffix
    assert sum(by.values(), CostTotals()) == everything
    by_stage = ledger.totals_by("stage", purpose="train")
    assert {k: v.training_samples for k, v in by_stage.items()} == {
        ("stage1",): 8,
        ("hybrid",): 30,
        ("vanilla",): 64,
    }
    with pytest.raises(LedgerError, match="valid tags: mode, purpose, task_id, iteration, stage"):
        ledger.totals(kind="root")
    with pytest.raises(LedgerError, match="totals_by needs at least one tag"):
        ledger.totals_by()


def test_totals_as_a_dict_name_every_counter() -> None:
    totals = _fill(Ledger()).totals(mode="suffix")
    assert totals.to_dict() == {
        "records": 2,
        "training_samples": 30,
        "policy_samples": 54,
        "env_steps": 54,
        "restores": 16,
        "restore_seconds": 1.5,
        "replayed_steps": 0,
        "wall_seconds": 3.25,
        "invalid_samples": 2,
        "faults": 1,
        "restore_fallbacks": 0,
    }


def test_evaluation_is_never_training_cost() -> None:
    ledger = _fill(Ledger())
    train = ledger.training_cost()
    assert train.records == 5
    assert train.env_steps == 40 + 30 + 24 + 64
    assert train.training_samples == 8 + 30 + 64
    assert ledger.eval_cost() == CostTotals(
        records=1, policy_samples=100, env_steps=100, wall_seconds=3.0
    )
    assert train + ledger.eval_cost() == ledger.totals()
    assert ledger.training_cost(mode="suffix") == ledger.totals(mode="suffix")
    # an evaluation pass done with root rollouts is still evaluation
    ledger.add("root", "eval", policy_samples=7, env_steps=7)
    assert ledger.training_cost() == train
    # the evaluation cost filters by tags like the other totals
    assert ledger.eval_cost(stage="eval") == CostTotals(
        records=1, policy_samples=100, env_steps=100, wall_seconds=3.0
    )
    assert ledger.eval_cost(mode="root").env_steps == 7


def test_selection_is_billed_apart_from_training_and_reporting() -> None:
    """A selecting evaluation (Stage I's best policy) is neither training cost nor a report."""
    ledger = _fill(Ledger())
    train, reports = ledger.training_cost(), ledger.eval_cost()
    ledger.add("eval", "selection", policy_samples=16, env_steps=16, stage="stage1")
    ledger.add("root", "overhead", env_steps=5, stage="stage1")  # recorded, on no bill
    assert ledger.selection_cost() == CostTotals(records=1, policy_samples=16, env_steps=16)
    assert ledger.selection_cost(stage="stage1").env_steps == 16
    assert ledger.selection_cost(stage="hybrid") == CostTotals()
    assert ledger.training_cost() == train and ledger.eval_cost() == reports
    with pytest.raises(LedgerError, match="valid tags"):
        ledger.selection_cost(kind="eval")
    with pytest.raises(LedgerError, match="evaluation never trains: .* for purpose selection"):
        ledger.add("eval", "selection", training_samples=1)


# -- persistence ----------------------------------------------------------------------------------


def test_round_trip_gives_identical_totals(tmp_path: Path) -> None:
    path = tmp_path / "run" / "ledger.jsonl"
    with Ledger(path) as ledger:
        _fill(ledger)
        ledger.add("sft", "train", training_samples=5, wall_seconds=0.1 + 0.2)
        before = (
            ledger.records,
            ledger.totals(),
            ledger.totals_by("mode", "purpose", "task_id"),
            ledger.training_cost(),
        )
    # one compact JSON object per line (the documented on-disk format)
    assert path.read_text().splitlines()[0] == (
        '{"mode":"onestep","purpose":"train","training_samples":8,"policy_samples":8,'
        '"wall_seconds":0.25,"task_id":"t1","iteration":0,"stage":"stage1"}'
    )
    again = Ledger(path)
    assert again.torn_tail is None
    assert (
        again.records,
        again.totals(),
        again.totals_by("mode", "purpose", "task_id"),
        again.training_cost(),
    ) == before
    assert again.records[-1].ts is not None  # add() stamps the time
    assert len(path.read_text().splitlines()) == 7


def count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file descriptors the ledger fsyncs from now on (each fsync still happens)."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(ledger_mod.os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    return synced


def test_each_record_is_on_disk_when_append_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = count_fsyncs(monkeypatch)
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    for i, r in enumerate(RECORDS, 1):
        ledger.append(r)
        assert len(synced) == i
        assert read_ledger(path).records == list(RECORDS[:i])  # readable by another process now
    ledger.close()


def test_a_batch_is_committed_once_when_it_ends_with_the_same_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    synced = count_fsyncs(monkeypatch)
    one_by_one, batched = tmp_path / "one.jsonl", tmp_path / "batched.jsonl"
    with Ledger(one_by_one) as ledger:
        for r in RECORDS:
            ledger.append(r)
    synced.clear()
    ledger = Ledger(batched)
    with ledger.batch():
        for r in RECORDS[:2]:
            ledger.append(r)
        with ledger.batch():  # a nested batch commits with the outer one
            ledger.append(RECORDS[2])
        assert synced == []
        assert len(ledger) == 3  # the records are there for totals at once
    assert len(synced) == 1
    assert read_ledger(batched).records == list(RECORDS[:3])
    for r in RECORDS[3:]:  # after the batch: one fsync per record again
        ledger.append(r)
    assert len(synced) == 1 + len(RECORDS) - 3
    ledger.close()
    assert batched.read_bytes() == one_by_one.read_bytes()
    reopened = Ledger(batched)
    assert list(reopened.records) == RECORDS and reopened.torn_tail is None


def test_a_batch_commits_what_was_appended_when_the_block_raises(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = Ledger(path)
    with pytest.raises(RuntimeError), ledger.batch():
        ledger.append(RECORDS[0])
        raise RuntimeError("the iteration failed after billing one group")
    assert read_ledger(path).records == [RECORDS[0]]
    ledger.close()


def test_in_memory_ledger_batches_too() -> None:
    ledger = Ledger()
    with ledger.batch():
        ledger.append(RECORDS[0])
    assert ledger.records == (RECORDS[0],)


def test_every_crash_point_loses_at_most_the_record_being_written(tmp_path: Path) -> None:
    full = tmp_path / "full.jsonl"
    with Ledger(full, fsync=False) as ledger:
        _fill(ledger)
    data = full.read_bytes()
    ends = [i + 1 for i, b in enumerate(data) if b == ord("\n")]
    torn = tmp_path / "torn.jsonl"
    for cut in range(len(data) + 1):
        torn.write_bytes(data[:cut])
        loaded = read_ledger(torn)
        committed = sum(e <= cut for e in ends)
        assert loaded.records == RECORDS[:committed]
        assert loaded.offsets == ends[:committed]  # where an append would continue
        assert (loaded.torn_tail is None) == (cut in ends or cut == 0)


def test_torn_last_line_is_reported_and_cut_before_appending(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        _fill(ledger)
    good = path.read_bytes()
    path.write_bytes(good + b'{"mode":"root","purpose":"train","env_st')

    readonly = Ledger(path, readonly=True)
    assert readonly.records == tuple(RECORDS)
    assert readonly.torn_tail == b'{"mode":"root","purpose":"train","env_st'
    assert path.read_bytes().endswith(b"env_st")  # read-only: the file is untouched
    with pytest.raises(LedgerError, match="^ledger opened read-only$"):
        readonly.add("root", "train")
    with pytest.raises(LedgerError, match="^ledger opened read-only$"):
        readonly.truncate_to(0)

    with caplog.at_level(logging.WARNING, logger="adaroll.training.ledger"):
        ledger = Ledger(path)
    assert "torn" in caplog.text and str(path) in caplog.text  # which file, and what is dropped
    assert (
        "(40 bytes)" in caplog.text
        and repr(b'{"mode":"root","purpose":"train","env_st') in caplog.text
    )
    assert ledger.torn_tail is not None and len(ledger) == len(RECORDS)
    assert path.read_bytes() == good  # cut back to the last committed record
    ledger.add("root", "train", env_steps=3)
    ledger.close()
    reloaded = Ledger(path, readonly=True)
    assert reloaded.torn_tail is None and len(reloaded) == len(RECORDS) + 1
    assert reloaded.totals().env_steps == sum(r.env_steps for r in RECORDS) + 3


def test_a_complete_record_without_its_newline_is_not_committed(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(
        b'{"mode":"root","purpose":"train","env_steps":3}\n{"mode":"root","purpose":"train"}'
    )
    loaded = read_ledger(path)
    assert [r.env_steps for r in loaded.records] == [3]
    assert loaded.torn_tail == b'{"mode":"root","purpose":"train"}'


def test_garbage_last_line_with_newline_is_treated_as_torn(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b'{"mode":"root","purpose":"train","env_steps":3}\n\x00\x00\x00\n')
    loaded = read_ledger(path)
    assert len(loaded.records) == 1 and loaded.torn_tail == b"\x00\x00\x00\n"
    assert loaded.offsets == [len(b'{"mode":"root","purpose":"train","env_steps":3}\n')]


@pytest.mark.parametrize(
    "middle",
    [b"not json", b'{"mode":"root"}', b"", b'{"mode":"root","purpose":"train","x":1}', b"[1, 2]"],
)
def test_corruption_before_the_last_line_raises(tmp_path: Path, middle: bytes) -> None:
    path = tmp_path / "ledger.jsonl"
    ok = b'{"mode":"root","purpose":"train","env_steps":3}\n'
    path.write_bytes(ok + middle + b"\n" + ok)
    with pytest.raises(
        LedgerError, match="line 2 is not a valid record: " + ("empty line$" if not middle else "")
    ):
        Ledger(path)


def test_a_file_holding_only_a_torn_record_opens_empty(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    path.write_bytes(b'{"mode":"ro')
    ledger = Ledger(path)
    assert len(ledger) == 0 and ledger.torn_tail == b'{"mode":"ro'
    assert path.read_bytes() == b""  # cut to nothing: the first append starts the file
    ledger.add("root", "train", env_steps=2)
    ledger.close()
    assert [r.env_steps for r in read_ledger(path).records] == [2]


def test_a_new_ledger_creates_its_directories_and_close_releases_the_file(tmp_path: Path) -> None:
    path = tmp_path / "runs" / "seed0" / "ledger.jsonl"
    ledger = Ledger(path)
    assert path.exists() and ledger.torn_tail is None
    assert _open_descriptors_of(path) == 1
    ledger.close()
    assert _open_descriptors_of(path) == 0
    ledger.close()  # closing twice is fine


def _open_descriptors_of(path: Path) -> int:
    """How many of this process's file descriptors point at ``path``."""
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if _link_target(fd) == str(path.resolve()))


def _link_target(fd: Path) -> str | None:
    try:
        return os.readlink(fd)
    except OSError:  # closed meanwhile (e.g. the descriptor listing the directory itself)
        return None


def test_truncate_to_a_checkpointed_count(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    ledger = _fill(Ledger(path))
    checkpointed = 3
    ledger.truncate_to(checkpointed)
    assert ledger.records == tuple(RECORDS[:3])
    assert read_ledger(path).records == RECORDS[:3]
    ledger.add("suffix", "train", env_steps=5)  # appends continue on a clean line
    ledger.close()

    resumed = Ledger(path)
    assert len(resumed) == 4 and resumed.records[-1].env_steps == 5
    resumed.truncate_to(len(resumed))  # no-op
    assert len(Ledger(path, readonly=True)) == 4
    resumed.truncate_to(0)
    assert path.read_bytes() == b"" and len(resumed) == 0
    with pytest.raises(LedgerError, match="cannot truncate a ledger of 0 records to 1"):
        resumed.truncate_to(1)
    resumed.close()


def test_resume_after_crash_with_torn_tail_then_truncate(tmp_path: Path) -> None:
    path = tmp_path / "ledger.jsonl"
    with Ledger(path) as ledger:
        _fill(ledger)
    with open(path, "ab") as fh:
        fh.write(b'{"mode":"suff')
    resumed = Ledger(path)
    resumed.truncate_to(2)
    resumed.add("root", "train", env_steps=1)
    resumed.close()
    assert [r.mode for r in Ledger(path, readonly=True)] == ["onestep", "root", "root"]


def test_in_memory_ledger() -> None:
    assert Ledger().torn_tail is None
    ledger = _fill(Ledger())
    ledger.truncate_to(1)
    assert ledger.records == (RECORDS[0],) and ledger.path is None
    with pytest.raises(LedgerError, match="expected a CostRecord, got dict"):
        ledger.append({"mode": "root"})  # type: ignore[arg-type]


def test_missing_file_is_an_empty_ledger(tmp_path: Path) -> None:
    assert len(Ledger(tmp_path / "nope.jsonl", readonly=True)) == 0
    assert not (tmp_path / "nope.jsonl").exists()
