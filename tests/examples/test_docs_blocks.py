"""docs/integrations.md shows the examples' code as shipped: every ``# --- docs:NAME begin ---``
block of adaroll/examples/ appears in the docs between the same markers, line for line (so the
docs' blocks are complete, imports included, and run as the tests run them)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(
    r"# --- docs:(?P<name>[\w-]+) begin ---\n(?P<body>.*?)# --- docs:(?P=name) end ---", re.S
)


def blocks(text: str) -> dict[str, str]:
    """Each marked block of ``text`` by name."""
    found: dict[str, str] = {}
    for match in BLOCK.finditer(text):
        assert match["name"] not in found, f"two blocks named {match['name']}"
        found[match["name"]] = match["body"]
    return found


def test_the_docs_show_every_example_block_as_shipped() -> None:
    docs = blocks((ROOT / "docs" / "integrations.md").read_text())
    shipped: dict[str, str] = {}
    for path in sorted((ROOT / "adaroll" / "examples").glob("*.py")):
        for name, body in blocks(path.read_text()).items():
            assert name not in shipped, f"two example files have a block named {name}"
            shipped[name] = body
            assert docs.get(name) == body, f"docs/integrations.md's {name} block != {path.name}'s"
    assert {"trl", "trl-pretrained", "verl", "verl-pretrained", "train-tasks", "warm-start"} <= set(
        shipped
    )
    assert set(docs) == set(shipped), "a docs block that no example ships"
