"""The long-horizon family: >= 30 templates of 12-40 expert steps over >= 5 apps, experts that
solve unseen seeds on the clean and the noisy device and take over from their own states,
pools of 200 per split through the ``templates`` option, failing seeds dropped with a logged
reason, and default pools that never see the family."""

from __future__ import annotations

import hashlib
import logging
import re
from random import Random
from types import MappingProxyType
from typing import Any

import pytest
from typer.testing import CliRunner

from adaroll.actions import Action
from adaroll.cli import app
from adaroll.config import ConfigError
from adaroll.envs import get_suite
from adaroll.envs.base import TaskSpec, run_expert
from adaroll.envs.mobile import MobileEnv, MobileTaskSuite
from adaroll.envs.mobile.suite import expert_length
from adaroll.envs.mobile.tasks import LONG_TEMPLATES, TEMPLATES, instantiate
from adaroll.envs.mobile.tasks.long import LongTemplate, check_parts
from adaroll.envs.mobile.tasks.long.parts import Part, goal, look, next_action
from adaroll.envs.mobile.world import Apps

LONG = sorted(LONG_TEMPLATES)
UNSEEN = (7_000_003, 7_000_011, 7_000_029)
"""Seeds outside every split's range and the length seeds: new to the experts."""


def test_lengths_lists_30_long_templates_over_5_apps() -> None:
    result = CliRunner().invoke(app, ["envs", "list", "mobile", "--lengths"])
    assert result.exit_code == 0, result.output
    lines = [line.split() for line in result.stdout.splitlines()]
    assert {fields[0] for fields in lines} == set(TEMPLATES) | set(LONG_TEMPLATES)  # one line each
    long = {f[0]: (float(f[-1]), f[2].split(",")) for f in lines if 12 <= float(f[-1]) <= 40}
    assert len(long) >= 30, sorted(long)
    assert len({a for _, apps in long.values() for a in apps}) >= 5
    assert all(12 <= long[name][0] <= 40 for name in LONG), {n: long.get(n) for n in LONG}


def test_lengths_names_the_envs_that_measure_their_experts() -> None:
    result = CliRunner().invoke(app, ["envs", "list", "web", "--lengths"])
    assert result.exit_code == 2 and "mobile and apps" in result.output


@pytest.mark.parametrize("device", ["clean", "noisy"])
def test_experts_solve_unseen_seeds(device: str) -> None:
    env, suite = MobileEnv(device=device), MobileTaskSuite()
    for template in LONG:
        for seed in UNSEEN:
            task = TaskSpec("mobile", template, seed)
            actions, ok = run_expert(env, suite, task)
            assert ok, f"{task.id} on {device}: {[a.to_text() for a in actions][-8:]}"
            assert 12 <= len(actions) <= 45, (task.id, len(actions))
            if device == "clean":
                assert len(actions) == instantiate(task).expert_steps


def test_every_goal_part_is_open_at_reset() -> None:
    """Each part adds work: none holds before the episode, and the parts are well formed."""
    for template in LONG:
        tpl = LONG_TEMPLATES[template]
        assert isinstance(tpl, LongTemplate) and tpl.family == "long"
        for seed in (5, 6):
            inst = instantiate(TaskSpec("mobile", template, seed))
            parts = tpl.parts(inst.params)
            check_parts(parts)
            assert not any(p.goal(inst.phone.apps) for p in parts if p.goal is not None), (
                template,
                seed,
            )


@pytest.mark.parametrize(
    "template", ["long.code_to_device_name", "long.meeting_from_message", "long.shop_buy_three"]
)
def test_expert_takes_over_from_every_state_of_its_trajectory(template: str) -> None:
    """Checkpoints at every step: restored on the noisy device, the expert finishes from each."""
    env, suite = MobileEnv(device="noisy"), MobileTaskSuite()
    task = TaskSpec("mobile", template, 21)
    actions, ok = run_expert(env, suite, task)
    assert ok
    env.reset(options={"task": task})
    for k, action in enumerate(actions):
        branch = env.branch(env.get_state())
        remaining = 0
        while True:
            _, _, terminated, truncated, info = branch.step(suite.expert_action(branch))
            remaining += 1
            if terminated or truncated:
                break
        assert info["success"] and remaining == len(actions) - k, (template, k)
        env.step(action)


def test_a_look_is_done_once_a_later_part_begins() -> None:
    """A look changes no data: the expert opens the next part's app from the seen screen, and
    a look followed by a part in its own app is refused."""
    seen = Part("Mail", lambda x: None)
    later = goal("Notes", lambda x: Action.press("back"), lambda w: False)
    action = next_action([seen, later], _expert_at_home())
    assert action.kind.value == "open_app" and action.app == "Notes"
    with pytest.raises(ValueError, match="part 0 looks at Mail"):
        check_parts([look("Mail", lambda x: None), goal("Mail", lambda x: None, lambda w: False)])
    with pytest.raises(ValueError, match="part 0 looks at Mail"):
        check_parts([look("Mail", lambda x: None)])


def _expert_at_home() -> Any:
    from adaroll.envs.mobile.expert import Expert

    return Expert(instantiate(TaskSpec("mobile", "long.notes_three", 0)).phone)


def _split_ids(suite: MobileTaskSuite) -> str:
    ids = [
        t.id
        for name in ("pretrain", "train", "val", "heldout", "heldout-templates")
        for t in suite.split(name)
    ]
    return hashlib.sha256("\n".join(ids).encode()).hexdigest()[:16]


def test_default_pools_never_see_the_long_family() -> None:
    suite = get_suite("mobile", {"device": "noisy"})
    for name in ("pretrain", "train", "val", "heldout", "heldout-templates"):
        assert {t.template for t in suite.split(name)} <= set(TEMPLATES)
    assert set(suite.trainable_templates()) | set(suite.heldout_templates()) == set(TEMPLATES)
    # The default pools as they were before the family existed (computed at 6edc8e0).
    assert _split_ids(suite) == DEFAULT_SPLITS_SHA
    assert set(suite.templates()) == set(TEMPLATES) | set(LONG_TEMPLATES)  # posable, not pooled


DEFAULT_SPLITS_SHA = "f770b1b629ea6011"


def test_templates_option_selects_the_pools() -> None:
    chosen = ["long.notes_three", "long.mail_triage", "settings.wifi", "notes.rename"]
    suite = get_suite(
        "mobile",
        {"device": "noisy"},
        templates=chosen,
        n_train=12,
        n_val=6,
        n_heldout=6,
        n_heldout_templates=3,
        n_pretrain=9,
    )
    assert suite.templates() == sorted(chosen)
    train = {t.template for t in suite.split("train")}
    assert train == {
        "long.notes_three",
        "long.mail_triage",
        "settings.wifi",
    }  # notes.rename is held out
    assert {t.template for t in suite.split("heldout-templates")} == {"notes.rename"}
    for name in ("val", "heldout", "pretrain"):
        assert {t.template for t in suite.split(name)} <= train
    only_long = get_suite(
        "mobile", {}, templates=["long.notes_three"], n_train=2, n_val=2, n_heldout=2, n_pretrain=2
    )
    assert only_long.split("heldout-templates") == []
    with pytest.raises(ConfigError, match="unknown mobile task template.*long.nope"):
        get_suite("mobile", {}, templates=["long.nope", "settings.wifi"])
    with pytest.raises(ConfigError, match="templates must be a non-empty list"):
        get_suite("mobile", {}, templates=[])


def test_pools_of_200_long_tasks_per_split() -> None:
    suite = get_suite(
        "mobile",
        {"device": "noisy"},
        templates=LONG,
        n_train=200,
        n_val=200,
        n_heldout=200,
        n_heldout_templates=0,
        n_pretrain=0,
    )
    splits = {name: suite.split(name) for name in ("train", "val", "heldout")}
    assert {name: len(set(tasks)) for name, tasks in splits.items()} == {
        "train": 200,
        "val": 200,
        "heldout": 200,
    }
    assert not set(splits["train"]) & set(splits["val"]) and not set(splits["val"]) & set(
        splits["heldout"]
    )
    assert not set(splits["train"]) & set(splits["heldout"])
    assert {t.template for t in splits["train"]} == set(LONG)
    assert suite.dropped == []  # every drawn seed verified on the clean and the noisy device


class _Flaky(LongTemplate):
    """A long template whose expert gives up on odd seeds (a stand-in for an expert bug)."""

    name = "long.test_flaky"
    apps = ("Notes",)
    instruction = 'Create a note titled "{title}"'

    def setup(self, rng: Random, world: Apps) -> tuple[dict[str, Any], Apps]:
        return {"title": "Flaky", "odd": rng.random() < 0.5}, world

    def parts(self, p: MappingProxyType) -> list[Part]:
        from adaroll.envs.mobile.tasks.long.parts import sub

        return [sub("notes.create", title=p["title"])]

    def expert(self, x: Any, p: MappingProxyType) -> Action:
        return Action.done() if p["odd"] else super().expert(x, p)


def test_a_seed_whose_expert_fails_is_dropped_with_its_reason(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setitem(LONG_TEMPLATES, _Flaky.name, _Flaky())
    with caplog.at_level(logging.WARNING, logger="adaroll.envs.mobile.suite"):
        suite = get_suite(
            "mobile",
            {"device": "noisy"},
            templates=[_Flaky.name],
            n_train=6,
            n_val=0,
            n_heldout=0,
            n_heldout_templates=0,
            n_pretrain=0,
        )
        train = suite.split("train")
    assert len(train) == 6 and not any(instantiate(t).params["odd"] for t in train)
    assert suite.dropped and all(
        instantiate(TaskSpec.from_id(tid)).params["odd"] for tid, _ in suite.dropped
    )
    for task_id, reason in suite.dropped:
        assert re.match(r"expert failed on the (clean|noisy) device after 1 steps", reason), reason
        assert any(task_id in r.getMessage() and reason in r.getMessage() for r in caplog.records)
    with pytest.raises(ValueError, match=r"long.test_flaky#\d+.*fails on the noisy device"):
        expert_length(_Flaky.name, "noisy", seeds=tuple(s for s in range(1_000_000, 1_000_050)))


def test_expert_collection_checkpoints_every_step_of_a_long_task() -> None:
    from adaroll.experts import collect_experts

    suite = get_suite(
        "mobile",
        {"device": "noisy"},
        templates=["long.shop_buy_three", "long.trip_from_message"],
        n_train=4,
        n_val=0,
        n_heldout=0,
        n_pretrain=0,
    )
    tasks = suite.split("train")
    collection = collect_experts(lambda: MobileEnv(device="noisy"), suite, tasks, progress=False)
    assert all(run.success for run in collection.runs)
    lengths = [len(run.actions) for run in collection.runs]
    assert min(lengths) >= 12 and len(collection.store) == sum(lengths)  # one checkpoint per step


def test_long_experts_follow_the_short_ones_rules() -> None:
    """As for the default family: screens of <= 40 elements, taps a policy can attribute from
    the element list alone, and typed text quoted in the instruction (unless it was read in
    another app)."""
    from adaroll.actions import ActionKind

    env, suite = MobileEnv(), MobileTaskSuite()
    for template in LONG:
        cross_app = "cross_app" in LONG_TEMPLATES[template].tags
        for seed in (0, 1):
            task = TaskSpec("mobile", template, seed)
            env.reset(options={"task": task})
            quoted = re.findall(r'"([^"]*)"', instantiate(task).instruction)
            while True:
                elements = env.observe().elements
                assert len(elements) <= 40
                action = suite.expert_action(env)
                if action.kind in (ActionKind.TAP, ActionKind.LONG_PRESS):
                    hits = [
                        e
                        for e in elements
                        if "clickable" in e.flags
                        and e.bounds[0] <= action.x <= e.bounds[2]
                        and e.bounds[1] <= action.y <= e.bounds[3]
                    ]
                    chosen = min(
                        hits,
                        key=lambda e: (
                            (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1]),
                            e.id,
                        ),
                    )
                    assert chosen.id == env.view.hit(action.x, action.y), (
                        task.id,
                        action.to_text(),
                    )  # type: ignore[arg-type]
                if action.kind is ActionKind.TYPE and not cross_app:
                    assert any(action.text.strip(", ") in q for q in quoted), (
                        task.id,
                        action.text,
                        quoted,
                    )  # type: ignore[union-attr]
                _, _, terminated, truncated, _ = env.step(action)
                if terminated or truncated:
                    break
