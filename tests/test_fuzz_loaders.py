"""Every parser and loader on >= 10,000 generated inputs each: only its documented errors.

| input                          | entry point                    | documented error      |
|--------------------------------|--------------------------------|-----------------------|
| model output text              | ``parse_action``               | ``ActionParseError``  |
| action records                 | ``Action.from_dict``           | ``ActionError``       |
| config dicts, YAML files, ``--set`` overrides | ``load_config`` | ``ConfigError``       |
| checkpoint (trajectory) files  | ``CheckpointStore.load``       | ``CheckpointFileError`` |
| cost ledgers                   | ``read_ledger``                | ``LedgerError``       |
| metrics logs                   | ``read_jsonl``                 | ``JsonlError``        |
| pivot sets                     | ``PivotSet.load``              | ``PivotFileError``    |
| task ids                       | ``TaskSpec.from_id``           | ``ValueError``        |

Inputs come from seeded generators (reproducible, no shrinking needed): byte-level corruption
of real files (flips, inserts of JSON-significant bytes, deletions, truncation, duplicated and
swapped lines, deep nesting, invalid UTF-8) and structure-aware mutation of real records (a
field deleted, added or replaced by a value of another type, huge or non-finite). Whatever
loads must also be usable: it round-trips, or its records are of the documented types.
"""

from __future__ import annotations

import json
import random
import string
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from adaroll.actions import Action, ActionError, ActionParseError, format_action, parse_action
from adaroll.checkpoints import CheckpointFileError, CheckpointStore
from adaroll.config import ConfigError, RunConfig, dump_config, load_config
from adaroll.envs import get_suite, make_env_factory
from adaroll.envs.base import TaskSpec
from adaroll.experts import collect_experts
from adaroll.jsonl import JsonlError, JsonlLog, read_jsonl
from adaroll.training.ledger import CostRecord, Ledger, LedgerError, read_ledger
from adaroll.training.pivot_scoring import PivotFileError, PivotSet

N = 10_000
SEED = 7

# -- generators -------------------------------------------------------------------------------------

ODD_VALUES: list[Any] = [
    None,
    True,
    False,
    0,
    -1,
    1,
    2**63,
    -(2**70),
    10**400,
    0.5,
    -0.0,
    1e308,
    float("nan"),
    float("inf"),
    -float("inf"),
    "",
    "x",
    "0.5",
    "\u0000",
    "\ud800",
    "mobile:a#1",
    [],
    [1, 2],
    [[[]]],
    {},
    {"a": 1},
    {"kind": "tap"},
]
ODD_BYTES = [
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b",",
    b":",
    b"\n",
    b"\r",
    b"\\",
    b"\x00",
    b"\xff",
    b"\xc3",
    b"NaN",
    b"-Infinity",
    b"1e999",
    b"null",
    b"true",
    b"-",
    b"0",
    b" ",
    b"[" * 3000,
    b'{"a":' * 2000,
    "\u00e9".encode(),
]


def mutate_bytes(data: bytes, rng: random.Random) -> bytes:
    """One to three random corruptions of ``data``."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 3)):
        op = rng.randrange(8)
        pos = rng.randint(0, len(out))
        if op == 0 and out:  # flip a byte
            i = rng.randrange(len(out))
            out[i] = rng.randrange(256)
        elif op == 1:  # insert something JSON-significant
            out[pos:pos] = rng.choice(ODD_BYTES)
        elif op == 2:  # delete a range
            del out[pos : pos + rng.randint(1, 40)]
        elif op == 3:  # truncate (a torn write)
            del out[pos:]
        elif op in (4, 5):  # duplicate or swap lines
            lines = bytes(out).split(b"\n")
            i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
            if op == 4:
                lines.insert(j, lines[i])
            else:
                lines[i], lines[j] = lines[j], lines[i]
            out = bytearray(b"\n".join(lines))
        elif op == 6:  # a blank or whitespace line
            out[pos:pos] = rng.choice([b"\n", b"\n\n", b" \n", b"\t\n"])
        else:  # random bytes
            out[pos:pos] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 8)))
    return bytes(out)


def random_json(rng: random.Random, depth: int = 0) -> Any:
    r = rng.random()
    if depth > 2 or r < 0.6:
        return rng.choice(ODD_VALUES)
    if r < 0.8:
        return [random_json(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    return {
        rng.choice(["a", "kind", "x", "id", "0"]): random_json(rng, depth + 1)
        for _ in range(rng.randint(0, 3))
    }


def mutate_json(obj: Any, rng: random.Random, keys: list[str]) -> Any:
    """A copy of ``obj`` with one node deleted, added to or replaced (structure-aware)."""
    obj = json.loads(json.dumps(obj))
    containers: list[Any] = []

    def collect(node: Any) -> None:
        if isinstance(node, (dict, list)):
            containers.append(node)
            for child in node.values() if isinstance(node, dict) else node:
                collect(child)

    collect(obj)
    if not containers:
        return random_json(rng)
    node = rng.choice(containers)
    slots = list(node) if isinstance(node, dict) else list(range(len(node)))
    op = rng.randrange(3)
    if op == 0 and slots:
        del node[rng.choice(slots)]
    elif op == 1 and isinstance(node, dict):
        node[rng.choice(keys)] = random_json(rng)
    elif op == 1:
        node.append(random_json(rng))
    elif slots:
        node[rng.choice(slots)] = random_json(rng)
    return obj


class _Files:
    """Each input in a new file, removed after use (rewriting one file in place is slow on
    ext4, which flushes a truncated-and-rewritten file)."""

    def __init__(self, directory: Path, name: str) -> None:
        self.directory, self.name, self.count = directory, name, 0
        self.path = directory / name

    def write(self, data: bytes) -> Path:
        if self.path.exists():
            self.path.unlink()
        self.count += 1
        self.path = self.directory / f"{self.count}.{self.name}"
        self.path.write_bytes(data)
        return self.path


def _only(
    errors: type[BaseException] | tuple[type[BaseException], ...], call: Callable[[], Any]
) -> Any:
    """``call()``'s result, or None when it raised one of ``errors`` (anything else fails)."""
    try:
        return call()
    except errors as exc:
        assert str(exc), "an error must say what is wrong"
        return None


# -- actions ----------------------------------------------------------------------------------------

ACTION_TEXTS = [
    "tap(0.5, 0.25)",
    "long_press(0, 1)",
    "double_tap(.5,.5)",
    "swipe(up)",
    "swipe(0.1, 0.2, 0.3, 0.4)",
    'type("hello \\"x\\"")',
    "key(back)",
    'key("enter")',
    'open_app("Settings")',
    "wait()",
    "done()",
    'done("42")',
    "click(0.2, 0.3)",
]


def test_fuzz_action_parser_mutated_texts() -> None:
    rng = random.Random(SEED)
    parsed = 0
    for _ in range(N):
        text = mutate_bytes(rng.choice(ACTION_TEXTS).encode(), rng).decode("utf-8", "replace")
        action = _only(ActionParseError, lambda text=text: parse_action(text))
        if action is not None:
            parsed += 1
            assert parse_action(format_action(action)) == action
    assert 0 < parsed < N  # the generator reaches both outcomes


def test_fuzz_action_records() -> None:
    rng = random.Random(SEED + 1)
    valid = [parse_action(t).to_dict() for t in ACTION_TEXTS]
    keys = ["kind", "x", "y", "x2", "y2", "direction", "text", "key", "app", "bogus"]
    built = 0
    for i in range(N):
        record = mutate_json(rng.choice(valid), rng, keys) if i % 4 else random_json(rng)
        action = _only(ActionError, lambda r=record: Action.from_dict(r))
        if action is not None:
            built += 1
            assert Action.from_dict(action.to_dict()) == action
    assert 0 < built < N


# -- configs ----------------------------------------------------------------------------------------

_DEFAULTS = RunConfig().model_dump(mode="json")


def _paths(node: Any, prefix: str = "") -> list[str]:
    if not isinstance(node, dict):
        return [prefix]
    return [prefix] * bool(prefix) + [
        p for k, v in node.items() for p in _paths(v, f"{prefix}.{k}".lstrip("."))
    ]


CONFIG_PATHS = _paths(_DEFAULTS)
YAML_VALUES = [
    "1",
    "-3",
    "0.5",
    "1e9",
    ".nan",
    "-.inf",
    "true",
    "null",
    "~",
    "[]",
    "{}",
    "[1, 2]",
    "{a: 1}",
    "x",
    "'0.3'",
    "[unclosed",
    "{a: [",
    "&a [*a]",
    "*nope",
    "!!python/object:os.system",
    "'",
    ": :",
    "- a",
    "{api_key: sk-x}",
    "hybrid",
    "stage1",
    "mobile",
    "[train]",
]


def _random_config_dict(rng: random.Random) -> Any:
    if rng.random() < 0.1:
        return random_json(rng)
    return (
        mutate_json(_DEFAULTS, rng, [*CONFIG_PATHS, "api_key", "bogus"])
        if rng.random() < 0.5
        else {rng.choice(CONFIG_PATHS).split(".")[0]: random_json(rng)}
    )


def test_fuzz_config_dicts() -> None:
    rng = random.Random(SEED + 2)
    loaded = 0
    for _ in range(N // 4):
        data = _random_config_dict(rng)
        if not isinstance(data, dict):
            data = {"seed": data}
        cfg = _only(ConfigError, lambda d=data: load_config(d))
        if cfg is not None:
            loaded += 1
        if cfg is not None and loaded % 25 == 1:  # (a YAML dump and load take ~20 ms)
            # what a run directory stores reloads to the same config
            assert dump_config(load_config(yaml.safe_load(dump_config(cfg)))) == dump_config(cfg)
    assert 0 < loaded < N // 4


SMALL_CONFIG = """seed: 3
env: {name: mobile, suite_options: {n_train: 6, n_pretrain: 24}}
policy: {kind: small, history: 2, options: {}}
rl:
  budget: {iterations: 2}
  grpo: {group_size: 4, lr: 0.001}
  scheduler: {tau_low: 0.25, tau_high: 0.75}
configurations: [base, sft, base_hybrid]
"""


def _yaml_mapping(data: bytes) -> dict[str, Any] | None:
    """What a config file's bytes hold when they are UTF-8 YAML of a mapping (an empty
    document is the empty mapping), else None: a file load_config must reject."""
    try:
        loaded = yaml.safe_load(data.decode("utf-8")) or {}
    except (UnicodeDecodeError, yaml.YAMLError, RecursionError):
        return None
    return loaded if isinstance(loaded, dict) else None


def test_fuzz_config_files(tmp_path: Path) -> None:
    """A file loads exactly when its mapping loads as a dict, to the same config; a file that is
    not UTF-8 YAML of a mapping raises ConfigError."""
    rng = random.Random(SEED + 3)
    base = SMALL_CONFIG.encode()  # the full dump parses ~10x slower: PyYAML is pure Python
    small = yaml.safe_load(SMALL_CONFIG)
    files = _Files(tmp_path, "config.yaml")
    loaded = unreadable = 0
    for i in range(N // 4):
        if i % 2 == 0:
            data = mutate_bytes(base, rng)
        else:
            data = yaml.safe_dump(
                mutate_json(small, rng, [*CONFIG_PATHS, "api_key", "bogus"])
            ).encode()
        path = files.write(data)
        cfg = _only(ConfigError, lambda p=path: load_config(p))
        mapping = _yaml_mapping(data)
        if mapping is None:
            assert cfg is None, f"{data!r} is not a YAML mapping yet loaded"
            unreadable += 1
            continue
        expected = _only(ConfigError, lambda m=mapping: load_config(m))
        assert (cfg is None) == (expected is None) and cfg == expected, data
        loaded += cfg is not None
    assert loaded > N // 40 and unreadable > N // 40 and loaded + unreadable < N // 4


def test_the_unmutated_config_file_loads_its_values(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(SMALL_CONFIG)
    cfg = load_config(path)
    assert cfg.seed == 3 and cfg.env.name == "mobile" and cfg.env.suite_options["n_train"] == 6
    assert cfg.rl.grpo.group_size == 4 and cfg.rl.grpo.lr == 0.001 and cfg.rl.budget.iterations == 2
    assert cfg.configurations == ("base", "sft", "base_hybrid")


def test_fuzz_config_overrides() -> None:
    rng = random.Random(SEED + 4)
    loaded = 0
    for _ in range(N // 2):
        overrides = []
        for _ in range(rng.randint(1, 3)):
            key = rng.choice(
                [*CONFIG_PATHS, "bogus.path", "", ".", "rl..lr", "seed.x", "policy.options.api_key"]
            )
            value = (
                rng.choice(YAML_VALUES)
                if rng.random() < 0.8
                else "".join(rng.choice(string.printable) for _ in range(rng.randint(0, 12)))
            )
            overrides.append(rng.choice([f"{key}={value}", f"{key} = {value}", key, f"={value}"]))
        cfg = _only(ConfigError, lambda o=overrides: load_config(None, o))
        loaded += cfg is not None
    assert 0 < loaded < N // 2


# -- checkpoint (trajectory) files ------------------------------------------------------------------


@pytest.fixture(scope="module")
def checkpoint_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three real mobile checkpoints (their screens cut to six elements: a short file makes the
    byte-level corruptions land in every field, and keeps 10,000 loads fast)."""
    suite = get_suite("mobile", n_train=1)
    collection = collect_experts(
        make_env_factory("mobile"), suite, suite.split("train"), progress=False
    )
    rows = [c.to_dict() for c in collection.store][:3]
    assert len(rows) == 3
    for row in rows:
        row["observation"]["elements"] = row["observation"]["elements"][:6]
    path = tmp_path_factory.mktemp("ckpt") / "checkpoints.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert len(CheckpointStore.load(path)) == 3
    return path


def mutated_file(data: bytes, records: list[Any], keys: Any, rng: random.Random, i: int) -> bytes:
    """Every other input: random byte damage, or one record's JSON mutated (valid JSON lines)."""
    if i % 2:
        return mutate_bytes(data, rng)
    rows = list(records)
    j = rng.randrange(len(rows))
    rows[j] = mutate_json(rows[j], rng, keys)
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def test_fuzz_checkpoint_files(checkpoint_file: Path, tmp_path: Path) -> None:
    rng = random.Random(SEED + 5)
    data = checkpoint_file.read_bytes()
    records = [json.loads(line) for line in data.splitlines()]
    keys = sorted({k for r in records for k in r} | {"elements", "bounds", "flags", "bogus"})
    files = _Files(tmp_path, "checkpoints.jsonl")
    loaded = 0
    for i in range(N):
        path = files.write(mutated_file(data, records, keys, rng, i))
        try:
            store = CheckpointStore.load(path)
        except CheckpointFileError as exc:
            assert str(path) in str(exc) and ":" in str(exc).removeprefix(
                str(path)
            )  # names the line
            continue
        loaded += 1
        for c in store:  # whatever loads is usable: it saves and reloads equal
            assert CheckpointStore([c]).get(c.id).to_dict() == c.to_dict()
            assert len(c.history) == c.step < c.trajectory_length
    assert 0 < loaded < N


def test_checkpoint_error_names_file_and_line(checkpoint_file: Path, tmp_path: Path) -> None:
    lines = checkpoint_file.read_text().splitlines()
    row = json.loads(lines[1])
    row["observation"]["elements"][0]["bounds"] = [0, 0, 1]
    path = tmp_path / "checkpoints.jsonl"
    path.write_text("\n".join([lines[0], json.dumps(row), *lines[2:]]) + "\n")
    with pytest.raises(CheckpointFileError, match=r"checkpoints\.jsonl:2: .*bounds must be four"):
        CheckpointStore.load(path)
    path.write_bytes(b"\xff\xfe\n")
    with pytest.raises(CheckpointFileError, match=r":1: .*utf-8"):
        CheckpointStore.load(path)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        CheckpointStore.load(tmp_path / "missing.jsonl")


# -- the cost ledger and the metrics log ------------------------------------------------------------


def _ledger_bytes(tmp: Path) -> bytes:
    path = tmp / "ledger.jsonl"
    with Ledger(path) as ledger:
        ledger.add("eval", "eval", policy_samples=8, env_steps=8, stage="s", iteration=0)
        ledger.add(
            "suffix",
            "train",
            training_samples=4,
            policy_samples=4,
            env_steps=9,
            restores=4,
            restore_seconds=0.25,
            task_id="mobile:a#1",
            stage="s",
            iteration=1,
        )
        ledger.add(
            "root",
            "routing",
            policy_samples=2,
            env_steps=5,
            faults=1,
            task_id="mobile:b#2",
            stage="s",
            iteration=1,
        )
        ledger.add("onestep", "train", training_samples=8, policy_samples=8, wall_seconds=0.5)
    return path.read_bytes()


def test_fuzz_ledger_files(tmp_path: Path) -> None:
    rng = random.Random(SEED + 6)
    data = _ledger_bytes(tmp_path)
    records = [json.loads(line) for line in data.splitlines()]
    keys = [*records[1], "faults", "bogus"]
    files = _Files(tmp_path, "ledger.jsonl")
    loaded = torn = 0
    for i in range(N):
        path = files.write(mutated_file(data, records, keys, rng, i))
        result = _only(LedgerError, lambda p=path: read_ledger(p))
        if result is None:
            continue
        loaded += 1
        torn += result.torn_tail is not None
        assert all(isinstance(r, CostRecord) for r in result.records)
        assert len(result.offsets) == len(result.records)
        if i % 50 == 0:  # opening for append cuts a torn tail; the file then reloads cleanly
            with Ledger(path) as ledger:
                assert ledger.records == tuple(result.records)
            assert read_ledger(path).torn_tail is None
    assert 0 < loaded < N and torn > 0


def test_fuzz_metrics_logs(tmp_path: Path) -> None:
    rng = random.Random(SEED + 7)
    source = tmp_path / "metrics.jsonl"
    log = JsonlLog(source)
    for i in range(4):
        log.append({"kind": "iteration", "iteration": i, "loss": 0.5 * i, "routes": {"root": i}})
    data = source.read_bytes()
    files = _Files(tmp_path, "metrics.jsonl")
    loaded = 0
    for _ in range(N):
        path = files.write(mutate_bytes(data, rng))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a torn last line is dropped with a warning
            result = _only(JsonlError, lambda p=path: read_jsonl(p))
        if result is not None:
            loaded += 1
            records, good = result
            assert all(isinstance(r, dict) for r in records) and 0 <= good <= len(path.read_bytes())
    assert 0 < loaded < N


def test_fuzz_pivot_files(tmp_path: Path) -> None:
    rng = random.Random(SEED + 9)
    source = tmp_path / "pivots.json"
    PivotSet(
        {"t#1@0": 0.5, "t#1@1": float("nan"), "u#2@0": 0.75},
        {"t#1": ["t#1@0"], "u#2": []},
        24,
        {"t#1": 0.45, "u#2": 0.45},
        {"t#1": {"t#1@0": 0.5, "t#1@1": 0.0}},
    ).save(source)
    data = source.read_bytes()
    record = json.loads(data)
    keys = [*record, "t#1", "u#2@0", "bogus"]
    files = _Files(tmp_path, "pivots.json")
    loaded = 0
    for i in range(N):
        blob = (
            mutate_bytes(data, rng)
            if i % 2
            else json.dumps(mutate_json(record, rng, keys)).encode()
        )
        path = files.write(blob)
        try:
            pivots = PivotSet.load(path)
        except PivotFileError as exc:
            assert str(exc).startswith(f"{path}: ")
            continue
        loaded += 1
        assert isinstance(pivots.policy_samples, int) and pivots.policy_samples >= 0
        assert all(c in pivots.scores for ids in pivots.pivots.values() for c in ids)
        pivots.save(path)  # whatever loads saves and reloads equal
        assert json.dumps(PivotSet.load(path).__dict__) == json.dumps(pivots.__dict__)
    assert 0 < loaded < N


# -- task ids ---------------------------------------------------------------------------------------


def test_fuzz_task_ids() -> None:
    rng = random.Random(SEED + 8)
    pieces = [
        "mobile",
        "web",
        ":",
        "#",
        "1",
        "-2",
        "x",
        "settings.wifi",
        "",
        " ",
        "#1#2",
        "\u0660",
        "1e3",
    ]
    parsed = 0
    for _ in range(N):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        spec = _only(ValueError, lambda t=text: TaskSpec.from_id(t))
        if spec is not None:
            parsed += 1
            assert isinstance(spec.seed, int) and TaskSpec.from_id(spec.id) == spec
    assert 0 < parsed < N
