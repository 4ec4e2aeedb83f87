"""Actions: the model's validation, the text format's round trip, the strict parser, M(a, b)."""

from __future__ import annotations

import ast
import inspect
import json
import string

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import adaroll.actions as actions_mod
from adaroll.actions import (
    ACTION_DOCS,
    DIRECTIONS,
    KEYS,
    PAPER_MATCHER,
    Action,
    ActionError,
    ActionKind,
    ActionMatcher,
    ActionParseError,
    action_format_help,
    actions_equivalent,
    format_action,
    normalised_edit_distance,
    parse_action,
)

# -- strategies -----------------------------------------------------------------------------------

coord = st.floats(min_value=0.0, max_value=1.0, allow_nan=False, allow_infinity=False)
texts = st.text(max_size=60)  # includes quotes, backslashes, control chars, non-ASCII
apps = st.text(min_size=1, max_size=30).filter(lambda s: s.strip() != "")


@st.composite
def coord_swipes(draw: st.DrawFn) -> Action:
    x, y, x2, y2 = (draw(coord) for _ in range(4))
    if (x, y) == (x2, y2):
        x2 = 1.0 - x if x != 0.5 else 0.0
    return Action(ActionKind.SWIPE, x=x, y=y, x2=x2, y2=y2)


def point(kind: ActionKind) -> st.SearchStrategy[Action]:
    return st.builds(lambda x, y: Action(kind, x=x, y=y), coord, coord)


any_action: st.SearchStrategy[Action] = st.one_of(
    point(ActionKind.TAP),
    point(ActionKind.DOUBLE_TAP),
    point(ActionKind.LONG_PRESS),
    point(ActionKind.HOVER),
    st.sampled_from(DIRECTIONS).map(Action.swipe),
    coord_swipes(),
    texts.map(Action.type_text),
    st.sampled_from(KEYS).map(Action.press),
    st.sampled_from(["ctrl+a", "shift+tab", "ctrl+shift+z", "alt+left", "meta+9"]).map(
        Action.press
    ),
    apps.map(lambda a: Action(ActionKind.OPEN_APP, app=a)),
    st.just(Action(ActionKind.WAIT)),
    st.just(Action.done()),
    texts.map(Action.done),
)


# -- the Action model -----------------------------------------------------------------------------


def test_ints_become_floats_and_negative_zero_is_canonical() -> None:
    a = Action.tap(0, 1)
    assert a.x == 0.0 and isinstance(a.x, float) and isinstance(a.y, float)
    b = Action.tap(-0.0, 0.5)
    assert b == Action.tap(0.0, 0.5)
    assert format_action(b) == format_action(Action.tap(0.0, 0.5)) == "tap(0, 0.5)"


@pytest.mark.parametrize(
    "kwargs",
    [
        {"kind": "fly"},
        {"kind": ActionKind.TAP, "x": 0.5},  # y missing
        {"kind": ActionKind.TAP, "x": 1.01, "y": 0.5},
        {"kind": ActionKind.TAP, "x": -0.01, "y": 0.5},
        {"kind": ActionKind.TAP, "x": float("nan"), "y": 0.5},
        {"kind": ActionKind.TAP, "x": True, "y": 0.5},
        {"kind": ActionKind.TAP, "x": "0.5", "y": 0.5},
        {"kind": ActionKind.TAP, "x": 0.5, "y": 0.5, "text": "hi"},  # field not used by tap
        {"kind": ActionKind.SWIPE, "direction": "north"},
        {"kind": ActionKind.SWIPE, "x": 0.5, "y": 0.5, "x2": 0.5, "y2": 0.5},
        {"kind": ActionKind.TYPE},
        {"kind": ActionKind.KEY, "key": "power"},
        {"kind": ActionKind.OPEN_APP, "app": "   "},
        {"kind": ActionKind.WAIT, "text": "x"},
    ],
)
def test_invalid_actions_are_rejected(kwargs: dict[str, object]) -> None:
    with pytest.raises(ActionError):
        Action(**kwargs)  # type: ignore[arg-type]


@settings(deadline=None)
@given(any_action)
def test_dict_round_trip(a: Action) -> None:
    assert Action.from_dict(json.loads(json.dumps(a.to_dict()))) == a


def test_from_dict_rejects_unknown_fields() -> None:
    with pytest.raises(ActionError, match="unknown"):
        Action.from_dict({"kind": "tap", "x": 0.5, "y": 0.5, "z": 1})
    with pytest.raises(ActionError, match="kind"):
        Action.from_dict({"x": 0.5})


# -- text format ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("tap(0.43, 0.71)", Action.tap(0.43, 0.71)),
        ("  Click( 0.43 ,0.71 )  ", Action.tap(0.43, 0.71)),
        ("tap(1, 0)", Action.tap(1.0, 0.0)),
        ("tap(.5, 5e-1)", Action.tap(0.5, 0.5)),
        ("double_tap(0.1, 0.2)", Action(ActionKind.DOUBLE_TAP, x=0.1, y=0.2)),
        ("long_press(0.1, 0.2)", Action(ActionKind.LONG_PRESS, x=0.1, y=0.2)),
        ("swipe(up)", Action.swipe("up")),
        ("scroll(DOWN)", Action.swipe("down")),
        ("drag(0.5, 0.8, 0.5, 0.2)", Action(ActionKind.SWIPE, x=0.5, y=0.8, x2=0.5, y2=0.2)),
        ('type("hello \\"world\\"")', Action.type_text('hello "world"')),
        ('type("")', Action.type_text("")),
        ('type("a\\nb\\u00e9")', Action.type_text("a\nb\u00e9")),
        ("key(back)", Action.press("back")),
        ('key("Enter")', Action.press("enter")),
        ("key(ctrl+a)", Action.press("ctrl+a")),
        ("key( Ctrl + Shift + Z )", Action.press("ctrl+shift+z")),
        ('key("shift+tab")', Action.press("shift+tab")),
        ("hover(0.25, 0.75)", Action.hover(0.25, 0.75)),
        ('open_app("Contacts")', Action(ActionKind.OPEN_APP, app="Contacts")),
        ("wait()", Action(ActionKind.WAIT)),
        ("done()", Action.done()),
        ('answer("42")', Action.done("42")),
    ],
)
def test_parse_examples(text: str, expected: Action) -> None:
    assert parse_action(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "tap",
        "tap(0.5)",
        "tap(0.5, 0.5, 0.5)",
        "tap(0.5 0.5)",
        "tap(0.5,, 0.5)",
        "tap(0.5, 0.5,)",
        "tap(0.5, 0.5))",
        "tap(1.5, 0.5)",
        "tap(-0.1, 0.5)",
        "tap(nan, 0.5)",
        "tap(inf, 0.5)",
        "tap(1e999, 0.5)",
        "tap(0x1, 0.5)",
        "tap(1_0, 0.5)",
        "tap(\u0660.5, 0.5)",  # Arabic-Indic digit: the format is ASCII only
        'tap("0.5", 0.5)',
        "fly(0.5, 0.5)",
        "swipe(north)",
        "swipe(up, down)",
        "swipe(0.5, 0.5, 0.5, 0.5)",
        "type(hello)",
        "type('hello')",
        'type("unterminated)',
        'type("bad \\x escape")',
        'type("raw\ncontrol")',
        "key(power)",
        "key()",
        'open_app("")',
        "wait(1)",
        "key(shift+ctrl+a)",
        "key(ctrl+ctrl+a)",
        "key(hyper+a)",
        "key(ctrl+ab)",
        "key(ctrl+)",
        "key(a)",
        "hover(0.5)",
        "hover(1.5, 0.5)",
        "done(42)",
        "__import__('os')",
        "tap(0.5, 0.5); key(back)",
        "tap(0.5, 0.5)" + " " * 5000,
    ],
)
def test_parse_rejects(text: str) -> None:
    with pytest.raises(ActionParseError):
        parse_action(text)


def test_parse_rejects_non_strings() -> None:
    with pytest.raises(ActionParseError):
        parse_action(b"tap(0.5, 0.5)")  # type: ignore[arg-type]
    with pytest.raises(ActionParseError):
        parse_action(None)  # type: ignore[arg-type]


def test_key_chords_name_what_is_wrong() -> None:
    with pytest.raises(ActionParseError, match="in the order ctrl\\+alt\\+shift\\+meta"):
        parse_action("key(shift+ctrl+a)")
    with pytest.raises(ActionParseError, match="'ab' is neither a key name nor a letter"):
        parse_action("key(ctrl+ab)")
    with pytest.raises(ActionError, match="modifiers must be distinct and from ctrl"):
        Action.press("super+a")
    assert PAPER_MATCHER(Action.press("ctrl+a"), Action.press("ctrl+a"))
    assert not PAPER_MATCHER(Action.press("ctrl+a"), Action.press("backspace"))
    assert PAPER_MATCHER(Action.hover(0.5, 0.5), Action.hover(0.53, 0.5))
    assert not PAPER_MATCHER(Action.hover(0.5, 0.5), Action.tap(0.5, 0.5))


def test_parse_error_is_a_value_error_with_a_clear_message() -> None:
    with pytest.raises(ValueError, match="unknown action 'fly'.*valid actions: tap"):
        parse_action("fly(0.5, 0.5)")
    with pytest.raises(ActionParseError, match="outside the normalised range"):
        parse_action("tap(2, 0.5)")


@settings(max_examples=500, deadline=None)
@given(any_action)
def test_round_trip(a: Action) -> None:
    text = format_action(a)
    assert parse_action(text) == a
    assert a.to_text() == text
    assert format_action(parse_action(text)) == text  # the text is canonical


@settings(deadline=None)
@given(any_action, any_action)
def test_equal_actions_have_equal_text(a: Action, b: Action) -> None:
    assert (a == b) == (format_action(a) == format_action(b))


# Random strings, and random strings built from the format's own pieces (which reach deep into
# the parser): only ActionParseError may ever come out.
_PIECES = [
    "tap",
    "click",
    "double_tap",
    "long_press",
    "swipe",
    "scroll",
    "drag",
    "type",
    "key",
    "open_app",
    "wait",
    "done",
    "answer",
    "TAP",
    "(",
    ")",
    ",",
    " ",
    '"',
    "\\",
    "\\u00",
    "\\ud800",
    "\\n",
    "0",
    "1",
    "0.5",
    ".5",
    "-0",
    "+1",
    "1e5",
    "1e-400",
    "1e999",
    "nan",
    "inf",
    "e",
    "up",
    "back",
    "x",
    "\n",
    "\x00",
    "\u0660",
    "\u00e9",
]


def _assert_parses_or_parse_error(text: str) -> None:
    try:
        a = parse_action(text)
    except ActionParseError:
        return
    assert isinstance(a, Action)
    assert parse_action(format_action(a)) == a


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=80))
def test_fuzz_random_text(text: str) -> None:
    _assert_parses_or_parse_error(text)


@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map("".join))
def test_fuzz_action_like_text(text: str) -> None:
    _assert_parses_or_parse_error(text)


@settings(max_examples=1000, deadline=None)
@given(st.text(alphabet=string.printable, max_size=40))
def test_fuzz_call_with_random_body(body: str) -> None:
    for name in ("tap", "swipe", "type", "key", "done"):
        _assert_parses_or_parse_error(f"{name}({body})")


def test_no_eval_or_exec_in_actions_module() -> None:
    tree = ast.parse(inspect.getsource(actions_mod))
    names = {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}
    attrs = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    # builtins that run code (re.compile, an attribute, is fine)
    assert not names & {"eval", "exec", "compile", "__import__", "globals"}
    assert not attrs & {"eval", "exec", "literal_eval", "__import__"}
    imported = {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }
    assert "ast" not in imported and "pickle" not in imported


def test_format_help_documents_every_kind() -> None:
    help_text = action_format_help()
    assert set(ACTION_DOCS) == set(ActionKind)
    for syntax, _ in ACTION_DOCS.values():
        assert syntax in help_text


# -- the matcher M(a, b) --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        (Action.tap(0.50, 0.50), Action.tap(0.55, 0.50), True),  # exactly 5% of width: inclusive
        (Action.tap(0.50, 0.50), Action.tap(0.45, 0.55), True),  # exactly 5% on both axes
        (Action.tap(0.00, 1.00), Action.tap(0.05, 0.95), True),  # at the screen border
        (Action.tap(0.50, 0.50), Action.tap(0.5501, 0.50), False),  # just over in x
        (Action.tap(0.50, 0.50), Action.tap(0.50, 0.4499), False),  # just over in y
        (Action.tap(0.50, 0.50), Action.tap(0.54, 0.56), False),  # per axis, not Euclidean
        (Action.tap(0.50, 0.50), Action(ActionKind.DOUBLE_TAP, x=0.5, y=0.5), False),
        (
            Action(ActionKind.LONG_PRESS, x=0.2, y=0.2),
            Action(ActionKind.LONG_PRESS, x=0.24, y=0.16),
            True,
        ),
    ],
)
def test_point_tolerance(a: Action, b: Action, same: bool) -> None:
    assert PAPER_MATCHER(a, b) is same
    assert PAPER_MATCHER(b, a) is same


def test_float_noise_does_not_break_the_inclusive_boundary() -> None:
    assert 0.55 - 0.50 > 0.05  # 0.05000000000000004
    assert PAPER_MATCHER(Action.tap(0.50, 0.30), Action.tap(0.55, 0.35))
    assert PAPER_MATCHER(Action.tap(0.15, 0.85), Action.tap(0.1, 0.9))


def test_configurable_tolerances() -> None:
    m = ActionMatcher(tol_x=0.1, tol_y=0.02)
    assert m(Action.tap(0.5, 0.5), Action.tap(0.6, 0.52))
    assert not m(Action.tap(0.5, 0.5), Action.tap(0.5, 0.53))
    with pytest.raises(ValueError):
        ActionMatcher(tol_x=-0.1)
    with pytest.raises(ValueError):
        ActionMatcher(text_mode="fuzzy")


def _swipe(x: float, y: float, x2: float, y2: float) -> Action:
    return Action(ActionKind.SWIPE, x=x, y=y, x2=x2, y2=y2)


@pytest.mark.parametrize(
    ("a", "direction"),
    [
        (_swipe(0.5, 0.8, 0.5, 0.2), "up"),  # y grows downwards
        (_swipe(0.5, 0.2, 0.5, 0.8), "down"),
        (_swipe(0.8, 0.5, 0.2, 0.5), "left"),
        (_swipe(0.2, 0.5, 0.8, 0.5), "right"),
        (_swipe(0.2, 0.5, 0.8, 0.3), "right"),  # dominant axis wins
        (_swipe(0.5, 0.5, 0.6, 0.2), "up"),
        (_swipe(0.2, 0.2, 0.4, 0.4), "down"),  # a diagonal tie counts as vertical
        (_swipe(0.4, 0.4, 0.2, 0.2), "up"),
        (Action.swipe("left"), "left"),
    ],
)
def test_swipe_direction_from_coordinates(a: Action, direction: str) -> None:
    assert a.swipe_direction == direction
    assert PAPER_MATCHER(a, Action.swipe(direction))
    others = [d for d in DIRECTIONS if d != direction]
    assert not any(PAPER_MATCHER(a, Action.swipe(d)) for d in others)


def test_swipes_match_by_direction_not_distance() -> None:
    assert PAPER_MATCHER(_swipe(0.1, 0.9, 0.1, 0.1), _swipe(0.9, 0.6, 0.9, 0.5))
    with pytest.raises(ActionError):
        _ = Action.tap(0.5, 0.5).swipe_direction


def test_text_modes() -> None:
    a, b = Action.type_text("Hello World"), Action.type_text("completely different")
    assert PAPER_MATCHER(a, b)  # paper: all text inputs are equivalent
    exact = ActionMatcher(text_mode="exact")
    assert exact(a, Action.type_text("Hello World")) and not exact(
        a, Action.type_text("hello world")
    )
    soft = ActionMatcher(text_mode="soft")  # edit distance <= 0.2 after case/space folding
    assert soft(a, Action.type_text("  hello   world "))
    assert soft(a, Action.type_text("Hello Wrld"))  # 1 edit / 11
    assert not soft(a, b)
    # boundary: 2 edits over 10 characters is exactly 0.2, inclusive
    assert normalised_edit_distance("abcdefghij", "abcdefghXY") == pytest.approx(0.2)
    assert soft(Action.type_text("abcdefghij"), Action.type_text("abcdefghXY"))
    assert not soft(Action.type_text("abcdefghij"), Action.type_text("abcdefgXYZ"))
    assert not ActionMatcher(text_mode="soft", text_max_distance=0.0)(
        a, Action.type_text("Hello Wrld")
    )


def test_edit_distance() -> None:
    assert normalised_edit_distance("", "") == 0.0
    assert normalised_edit_distance("abc", "") == 1.0
    assert normalised_edit_distance("kitten", "sitting") == pytest.approx(3 / 7)


def test_keys_apps_and_terminal_actions() -> None:
    assert PAPER_MATCHER(Action.press("back"), Action.press("back"))
    assert not PAPER_MATCHER(Action.press("back"), Action.press("home"))
    app = lambda name: Action(ActionKind.OPEN_APP, app=name)  # noqa: E731
    assert PAPER_MATCHER(app("Contacts"), app(" contacts "))
    assert not PAPER_MATCHER(app("Contacts"), app("Clock"))
    assert PAPER_MATCHER(Action.done("yes"), Action.done())  # same kind is the same decision
    assert PAPER_MATCHER(Action(ActionKind.WAIT), Action(ActionKind.WAIT))
    assert not PAPER_MATCHER(Action(ActionKind.WAIT), Action.done())
    assert not PAPER_MATCHER(Action.press("up"), Action.swipe("up"))
    assert actions_equivalent(Action.tap(0.5, 0.5), Action.tap(0.52, 0.48))
    assert not actions_equivalent(
        Action.tap(0.5, 0.5), Action.tap(0.52, 0.48), ActionMatcher(tol_x=0.01, tol_y=0.01)
    )


@settings(deadline=None)
@given(any_action, any_action)
def test_matcher_is_reflexive_and_symmetric(a: Action, b: Action) -> None:
    for m in (PAPER_MATCHER, ActionMatcher(text_mode="soft"), ActionMatcher(text_mode="exact")):
        assert m(a, a)
        assert m(a, b) == m(b, a)
