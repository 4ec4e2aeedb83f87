"""The TRL example (adaroll/examples/trl_phone.py) for two steps: TRL's real
``GRPOTrainer``, the tiny Qwen2 model, the real phone env. Checks that the second step's Suffix
rows were restored from checkpoints (ahead of TRL's resets, by the prefetch threads) and billed,
and that docs/integrations.md shows exactly the example's code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from adaroll.examples import trl_phone

pytestmark = pytest.mark.usefixtures("module_one_torch_thread")

ROOT = Path(__file__).resolve().parents[2]
MARKERS = re.compile(r"# --- docs:trl begin ---\n(.*?)# --- docs:trl end ---", re.S)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    return trl_phone.main(tmp_path_factory.mktemp("trl-phone"), steps=2, num_generations=2, tasks=2)


def test_suffix_rows_are_restored_from_checkpoints_and_billed(run):
    hub, summary = run["hub"], run["summary"]
    assert run["trainer"].state.global_step == 2
    records = list(hub.ledger)
    routing = [r for r in records if r.purpose == "routing"]
    suffix = [r for r in records if r.mode == "suffix" and r.purpose == "train"]
    assert [r.iteration for r in routing] == [1, 1] and [r.iteration for r in suffix] == [2, 2]
    assert all(r.restores == 2 and r.policy_samples >= 2 for r in suffix)  # G branches per row
    assert hub.sessions_opened["suffix"] == sum(r.restores for r in suffix) == 4
    assert hub.starts.prefetcher.taken == 4  # every branch was restored ahead of its reset
    # the snapshot images: built by replaying each checkpoint's prefix once, billed at first use
    store = hub.starts.checkpoints
    built = [r.replayed_steps for r in records if r.mode == "suffix" and r.purpose == "overhead"]
    first_use = [len(store.get(j.checkpoint_id).history) for j in hub.feed.plans[1]]
    assert built == [sum(first_use)] and [r.replayed_steps for r in suffix] == first_use
    assert sum(r.env_steps for r in records) == hub.env_steps  # every env step is on the bill
    assert summary["routes"]["suffix"] == 2


def test_docs_show_the_example_code():
    example = MARKERS.search(Path(trl_phone.__file__).read_text())
    docs = MARKERS.search((ROOT / "docs" / "integrations.md").read_text())
    assert example is not None and docs is not None
    assert docs.group(1) == example.group(1)
