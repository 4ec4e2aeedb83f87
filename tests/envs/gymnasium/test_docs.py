"""docs/envs.md shows the shipped adapters whole, not copies that could drift from them; its
reference of hooks, element flags and key names is what the code says; and the run command it
gives is the configuration the end-to-end test runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import adaroll.envs.gymnasium.examples.frozen_lake as frozen_lake
import adaroll.envs.gymnasium.examples.taxi as taxi
from adaroll.actions import KEYS
from adaroll.envs.base import ELEMENT_FLAGS
from adaroll.envs.gymnasium import GymAdapter
from adaroll.envs.gymnasium.reference import BEGIN, END, hooks, render
from tests.test_run_gymnasium_e2e import OVERRIDES

DOC = Path(__file__).resolve().parents[3] / "docs" / "envs.md"


def test_the_worked_examples_are_the_shipped_adapters_whole() -> None:
    blocks = re.findall(r"```python\n(.*?)```\n", DOC.read_text(), flags=re.S)
    shipped = [Path(m.__file__).read_text() for m in (frozen_lake, taxi)]
    assert blocks == shipped  # imports included: a block runs as it is


def test_the_reference_is_generated_from_the_code() -> None:
    text = DOC.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    assert text[start:end] == render(), "regenerate: python -m adaroll.envs.gymnasium.reference"
    documented = {signature.split("(")[0].split(":")[0] for signature, _, _ in hooks()}
    public = {n for n in vars(GymAdapter) if not n.startswith("_") and n != "copies_state"}
    assert documented == public  # every hook, with its signature and default
    assert all(f"`{flag}`" in text for flag in ELEMENT_FLAGS)
    assert all(f"`{key}`" in text for key in KEYS)


def test_the_documented_run_is_the_one_the_end_to_end_test_runs() -> None:
    line = next(
        line for line in DOC.read_text().splitlines() if line.strip().startswith("adaroll run")
    )
    words = shlex.split(line)
    sets = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
    assert sets == ["env.name=gymnasium", "env.options={id: FrozenLake-v1, adapter: frozen_lake}"]
    assert set(sets) <= set(OVERRIDES) and "--quick" in words


def test_the_documented_envs_check_printout_is_the_shipped_taxi_adapters() -> None:
    text = DOC.read_text()
    printed = text[text.index("$ adaroll envs check") :].split("```")[0]
    for template in taxi.TEMPLATES:
        assert re.search(rf"^  {template} +33 elements  expert 3/3 verified", printed, re.M)
