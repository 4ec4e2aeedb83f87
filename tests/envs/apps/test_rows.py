"""Template rows without a browser: placeholders filled in from what a seed drew, draws taken in
order, the judge's goal made of the judged milestones, and every registered row building."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from adaroll.envs.apps.suite import content_problem
from adaroll.envs.apps.tasks.base import register
from adaroll.envs.apps.tasks.catalog import all_templates, get_template
from adaroll.envs.apps.tasks.draws import among, derived
from adaroll.envs.apps.tasks.fill import fill_in, ref
from adaroll.envs.apps.tasks.judge import Expect, Text
from adaroll.envs.apps.tasks.plan import Fill, Loc, Shows, Tap, button, field_
from adaroll.envs.apps.tasks.rows import Opens, Row, Work
from adaroll.envs.apps.tasks.world import World


@dataclass(frozen=True)
class Person:
    name: str


def test_fill_in_formats_text_keeps_refs_typed_and_rebuilds_nested_dataclasses():
    params = {"m": {"id": 12, "subject": "Lunch"}, "to": Person("Ana"), "qty": 3}
    expect = Expect(
        "update",
        "mail",
        "messages",
        {"subject": Text("Re: {m[subject]}"), "reply_to": ref("m", "id"), "qty": ref("qty")},
        key="{m[id]}",
        what="for {to.name}",
    )
    filled = fill_in(expect, params)
    assert filled == Expect(
        "update",
        "mail",
        "messages",
        {"subject": Text("Re: Lunch"), "reply_to": 12, "qty": 3},
        key="12",
        what="for Ana",
    )
    menu = Tap(button("Move"), until=Shows(Loc("li", text="{to.name}").child("b", "{qty}")))
    assert fill_in(menu, params) == Tap(
        button("Move"), until=Shows(Loc("li", text="Ana").child("b", "3"))
    )
    check = Tap(button("Send"), until=len)  # a function is kept as it is
    assert fill_in(check, params).until is len


def test_a_row_draws_in_order_fills_its_plan_and_judges_only_judged_milestones():
    seen = []

    def first(w, rng, p):
        seen.append("first")
        return {"id": 7, "title": "Plan"}

    def page(record, *later):
        return (Tap(Loc(f"#r{record['id']}")), *(Tap(Loc(view)) for view in later))

    row = Row(
        "notes.example",
        "an example",
        max_steps=5,
        start=("notes", "#/"),
        draws={
            "n": first,
            ("a", "b"): derived(lambda p: (p["n"]["id"], "x")),
            "word": among("one", "two"),
        },
        instruction='Rename "{n[title]}" to "{word}" ({a}{b}).',
        plan=(
            Work(
                "opened",
                (Expect("update", "notes", "notes", {"read": 1}, key="{n[id]}"),),
                (Opens(page, "n", ("#later{a}",)),),
                judged=False,
            ),
            Work(
                "renamed {n[id]}",
                (Expect("update", "notes", "notes", {"title": Text("{word}")}, key="{n[id]}"),),
                (Fill(field_("Title"), "{word}"),),
            ),
        ),
    )
    spec = row.spec(World(random.Random(0)), random.Random(1))
    assert seen == ["first"]
    word = random.Random(1).choice(("one", "two"))
    assert spec.instruction == f'Rename "Plan" to "{word}" (7x).'
    assert [m.name for m in spec.plan] == ["opened", "renamed 7"]
    assert spec.plan[0].steps == (Tap(Loc("#r7")), Tap(Loc("#later7")))
    assert spec.plan[1].steps == (Fill(field_("Title"), word),)
    assert spec.goal == spec.plan[1].expects  # the milestone on the way is not judged
    assert row.template().apps == ("notes",)


def test_a_template_registered_twice_is_an_error():
    with pytest.raises(ValueError, match="registered twice"):
        register(get_template("mail.archive"))


@pytest.mark.parametrize("name", sorted(all_templates()))
def test_every_row_builds_on_its_seeds(name):
    for seed in range(3):
        assert content_problem(name, seed) == "", (name, seed)
