"""A run's final evaluations resume at the split they were in: each split is kept as it
finishes, and the resumed evaluation equals an uninterrupted one (each split has its own seed).
Real embedded phone env and a real (untrained) small policy."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adaroll.config import load_config
from adaroll.policies import make_policy
from adaroll.training import pipeline as pipeline_module
from adaroll.training.pipeline import Pipeline

OVERRIDES = (
    "env.suite_options={n_pretrain: 4, n_train: 3, n_heldout: 3, n_heldout_templates: 0}",
    "rl.eval.k=2",
)


def _pipeline(out: Path) -> Pipeline:
    out.mkdir()
    return Pipeline(load_config(None, list(OVERRIDES)), out, progress=False, say=lambda _: None)


def _policy(run: Pipeline):
    return make_policy(run.cfg.policy, seed=0)


def test_a_stopped_final_evaluation_resumes_at_its_split_and_equals_an_uninterrupted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _pipeline(tmp_path / "whole")
    want = whole.evaluate("base", _policy(whole))
    splits = list(whole.eval_tasks())
    assert len(splits) == 3 and set(want) == {f"{s}_{m}" for s in splits for m in ("avg", "pass")}

    run = _pipeline(tmp_path / "stopped")
    real, calls = pipeline_module.evaluate_split, []

    def stopped_in_the_second_split(*args, **kwargs):
        calls.append(kwargs["seed"])
        if len(calls) == 2:
            raise KeyboardInterrupt  # as a Ctrl-C in the middle of the second split
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline_module, "evaluate_split", stopped_in_the_second_split)
    with pytest.raises(KeyboardInterrupt):
        run.evaluate("base", _policy(run))
    evals = tmp_path / "stopped" / "evals"
    assert sorted(p.name for p in evals.iterdir()) == [f"base.{splits[0]}.json"]

    calls.clear()

    def counted(*args, **kwargs):
        calls.append(kwargs["seed"])
        return real(*args, **kwargs)

    monkeypatch.setattr(pipeline_module, "evaluate_split", counted)
    assert run.evaluate("base", _policy(run)) == want
    assert len(calls) == 2  # the first split was not evaluated again
    assert sorted(p.name for p in evals.iterdir()) == ["base.json"]
    assert json.loads((evals / "base.json").read_text()) == want

    # a stop between the row and the removal of its split rows: the next read removes them
    (evals / f"base.{splits[0]}.json").write_text("{}")
    assert run.evaluate("base", _policy(run)) == want
    assert sorted(p.name for p in evals.iterdir()) == ["base.json"]
