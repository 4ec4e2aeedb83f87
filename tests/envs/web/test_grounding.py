"""Representability without a browser: the grounding rule on hand-made element lists, the web
policy's action space on unquoted spans, and the refusal of unrepresentable templates (issue 29).
The same checks on real expert episodes of every curated template: test_experts.py."""

from __future__ import annotations

import pytest

from adaroll.actions import Action, ActionKind
from adaroll.config import ConfigError, load_config
from adaroll.envs.base import Observation, UIElement
from adaroll.envs.web import MiniWoBSuite
from adaroll.envs.web.grounding import UNREPRESENTABLE, check_representable, grounding_gap
from adaroll.envs.web.miniwob import curated_tasks
from adaroll.experiments.profiles import PROFILES
from adaroll.experiments.runner import Unit, overrides_for
from adaroll.policies.base import Context
from adaroll.policies.small import SmallPolicy

SHADES = "Select all the shades of green and press Submit."


def _boxes(colours: list[str]) -> Observation:
    """click-shades-like: a row of boxes (text = their colour name, or '' when unnamed) and Submit."""
    els = [
        UIElement(i, "box", c, (0.1 * i, 0.4, 0.1 * i + 0.08, 0.5)) for i, c in enumerate(colours)
    ]
    els.append(
        UIElement(
            len(els), "button", "Submit", (0.3, 0.8, 0.7, 0.9), frozenset({"clickable", "enabled"})
        )
    )
    return Observation(tuple(els), (160, 210))


def _tap(obs: Observation, i: int) -> Action:
    x, y = obs.elements[i].center
    return Action.tap(x, y)


def test_text_less_look_alike_boxes_are_not_grounded_and_named_colours_are():
    unnamed = _boxes(["", "", "", ""])
    episode = (_tap(unnamed, 0), _tap(unnamed, 2))  # the expert picks boxes 0 and 2 only
    gap = grounding_gap(SHADES, unnamed, episode[0], episode)
    assert gap is not None and "element 0" in gap and "look alike" in gap
    named = _boxes(["green", "red", "green", "blue"])
    assert grounding_gap(SHADES, named, _tap(named, 0), episode) is None
    # a named box the instruction does not mention, with a look-alike the expert leaves alone
    wrong = _boxes(["red", "green", "red", "blue"])
    assert grounding_gap(SHADES, wrong, _tap(wrong, 0), (_tap(wrong, 0),)) is not None


def test_look_alikes_are_grounded_by_their_row_by_position_words_or_by_all_being_targets():
    stars = Observation(
        (
            UIElement(0, "text", "Alice", (0.0, 0.1, 0.5, 0.2)),
            UIElement(1, "icon", "star", (0.8, 0.1, 0.9, 0.2)),
            UIElement(2, "text", "Bob", (0.0, 0.3, 0.5, 0.4)),
            UIElement(3, "icon", "star", (0.8, 0.3, 0.9, 0.4)),
        ),
        (160, 210),
    )
    tap = _tap(stars, 3)
    assert grounding_gap("Mark Bob's email as important.", stars, tap, (tap,)) is None
    assert grounding_gap("Mark the email as important.", stars, tap, (tap,)) is not None
    assert grounding_gap("Click the 2nd icon.", stars, tap, (tap,)) is None
    both = (_tap(stars, 1), tap)
    assert grounding_gap("Mark every email as important.", stars, tap, both) is None
    assert grounding_gap(SHADES, stars, Action.type_text("x"), ()) is None  # acts on no element


def test_the_web_policy_can_type_unquoted_spans_as_written_and_the_default_policy_cannot():
    instruction = "Book the cheapest one-way flight from: Marion, IL to: PIE on 10/15/2016."
    field = UIElement(
        0,
        "textbox",
        "From",
        (0.1, 0.1, 0.9, 0.2),
        frozenset({"clickable", "enabled", "editable", "focused"}),
    )
    ctx = Context(instruction, Observation((field,), (160, 210)))
    web = SmallPolicy(**MiniWoBSuite().policy_hints())
    for text in ("Marion, IL", "PIE", "Marion"):
        assert web.action_space_gap(ctx, Action.type_text(text)) is None, text
    assert "not a candidate" in web.action_space_gap(ctx, Action.type_text("Marion IL (MWA)"))
    phone = SmallPolicy(kinds=web.config.kinds, keys=web.config.keys)  # the default text sources
    assert phone.config.type_sources == ("quoted",)
    assert phone.action_space_gap(ctx, Action.type_text("Marion, IL")) is not None


def test_a_tap_away_from_the_centre_or_on_a_covered_element_is_outside_the_action_space():
    slider = UIElement(0, "slider", "", (0.1, 0.3, 0.9, 0.35), frozenset({"clickable", "enabled"}))
    covered = UIElement(1, "generic", "", (0.4, 0.6, 0.6, 0.7), frozenset({"clickable"}))
    cover = UIElement(2, "button", "OK", (0.45, 0.62, 0.55, 0.68), frozenset({"clickable"}))
    ctx = Context("Select 7 with the slider.", Observation((slider, covered, cover), (160, 210)))
    web = SmallPolicy(**MiniWoBSuite().policy_hints())
    assert web.action_space_gap(ctx, Action.tap(0.5, 0.325)) is None
    assert "not the same point" in web.action_space_gap(ctx, Action.tap(0.15, 0.325))
    assert "covered" in web.action_space_gap(ctx, Action.tap(0.42, 0.61))
    assert "not among the policy's kinds" in web.action_space_gap(
        ctx, Action(ActionKind.OPEN_APP, app="x")
    )


def test_unrepresentable_templates_are_curated_and_refused_by_name_before_any_browser():
    assert set(UNREPRESENTABLE) <= set(curated_tasks())
    with pytest.raises(ConfigError, match="enter-date: the expert taps a date field"):
        check_representable(["login-user", "enter-date"], "here")
    with pytest.raises(ConfigError, match=r"env.suite_options.templates.*enter-text-2"):
        MiniWoBSuite(templates=["login-user", "enter-text-2"], representable_only=True)
    assert MiniWoBSuite(templates=["enter-text-2"]).templates() == ["enter-text-2"]  # opt-in
    kept = set(MiniWoBSuite(representable_only=True).templates())
    assert kept == set(curated_tasks()) - set(UNREPRESENTABLE)


@pytest.mark.parametrize("profile", sorted(p for p, prof in PROFILES.items() if prof.env == "web"))
def test_a_web_profile_with_an_unrepresentable_template_is_refused_at_config_load(profile):
    overrides = overrides_for(PROFILES[profile], False, Unit("default", 0, ("base",)))
    cfg = load_config(None, overrides)
    assert cfg.env.suite_options["representable_only"] is True
    pools = next(o for o in overrides if o.startswith("env.suite_options="))
    bad = [
        o if o is not pools else pools.replace("templates: [", "templates: [form-sequence, ")
        for o in overrides
    ]
    with pytest.raises(ConfigError, match="form-sequence: the slider"):
        MiniWoBSuite(**load_config(None, bad).env.suite_options)


def test_web_long_tasks_trains_long_templates_for_at_least_half_of_its_own():
    from adaroll.envs import get_suite
    from adaroll.envs.web.miniwob import get_task

    cfg = load_config(
        None, overrides_for(PROFILES["web-long-tasks"], False, Unit("default", 0, ("base",)))
    )
    suite = get_suite("web", {}, **cfg.env.suite_options)
    trained = suite.train_templates()
    long = [t for t in trained if get_task(t).expert_steps >= 8]
    assert len(trained) >= 6 and 2 * len(long) >= len(trained), (trained, long)
    assert cfg.env.snapshot_backend == "criu" and not set(trained) & set(UNREPRESENTABLE)
