"""docs/browsergym.md's example run uses only settings of the run CI executes end to end."""

from __future__ import annotations

import shlex
from pathlib import Path

from tests.test_run_browsergym_e2e import OVERRIDES

DOC = Path(__file__).resolve().parents[3] / "docs" / "browsergym.md"


def test_the_documented_run_is_part_of_the_end_to_end_run() -> None:
    line = next(
        line for line in DOC.read_text().splitlines() if line.strip().startswith("adaroll run")
    )
    words = shlex.split(line)
    sets = [words[i + 1] for i, word in enumerate(words) if word == "--set"]
    assert sets[0] == "env.name=browsergym" and "--quick" in words
    assert set(sets) <= set(OVERRIDES)
