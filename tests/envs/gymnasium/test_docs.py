"""docs/envs.md shows the shipped adapter, not a copy that could drift from it, and the run
command it gives is the configuration the end-to-end test runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import adaroll.envs.gymnasium.examples.frozen_lake as frozen_lake
from tests.test_run_gymnasium_e2e import OVERRIDES

DOC = Path(__file__).resolve().parents[3] / "docs" / "envs.md"


def test_the_worked_example_is_the_shipped_adapter_from_its_class_to_the_end() -> None:
    blocks = re.findall(r"```python\n(.*?)```\n", DOC.read_text(), flags=re.S)
    assert len(blocks) == 1
    source = Path(frozen_lake.__file__).read_text()
    assert blocks[0].startswith(
        '@ADAPTERS.register("frozen_lake")\nclass FrozenLakeAdapter(GymAdapter):'
    )
    assert source.endswith(blocks[0])


def test_the_documented_run_is_the_one_the_end_to_end_test_runs() -> None:
    line = next(
        line for line in DOC.read_text().splitlines() if line.strip().startswith("adaroll run")
    )
    words = shlex.split(line)
    sets = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
    assert sets == ["env.name=gymnasium", "env.options={id: FrozenLake-v1, adapter: frozen_lake}"]
    assert set(sets) <= set(OVERRIDES) and "--quick" in words
