"""GUI actions: one typed model, one text format, one strict parser, one equivalence matcher.

Every action is documented once, in ``ACTION_DOCS``; that table is the source of both the
prompt text shown to language-model policies (:func:`action_format_help`) and the parser.

Text format (one action per string, surrounding whitespace ignored)::

    tap(0.43, 0.71)            click(x, y) is accepted as an alias of tap
    double_tap(0.43, 0.71)
    long_press(0.43, 0.71)
    hover(0.43, 0.71)          web only: move the pointer there without pressing
    swipe(up)                  finger moves up (content scrolls down); also down/left/right
    swipe(0.5, 0.8, 0.5, 0.2)  from (x1, y1) to (x2, y2); scroll(...) and drag(...) are aliases
    type("hello \\"world\\"")    JSON string literal
    key(back)                  one of KEYS
    key(ctrl+a)                web only: a chord, MODIFIERS joined by "+" to a key or letter
    open_app("Contacts")
    wait()
    done()                     or done("answer text") to finish with an answer

Coordinates are normalised to [0, 1] of the screen/viewport (x to the right, y downwards).
Parsing never evaluates anything; any malformed string raises :class:`ActionParseError`.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from enum import StrEnum


class ActionKind(StrEnum):
    TAP = "tap"
    DOUBLE_TAP = "double_tap"
    LONG_PRESS = "long_press"
    SWIPE = "swipe"
    TYPE = "type"
    KEY = "key"
    OPEN_APP = "open_app"
    WAIT = "wait"
    DONE = "done"
    HOVER = "hover"
    """Web only: the pointer moves to (x, y) and stays (opens menus that react to the mouse)."""


POINT_KINDS = frozenset(
    {ActionKind.TAP, ActionKind.DOUBLE_TAP, ActionKind.LONG_PRESS, ActionKind.HOVER}
)
DIRECTIONS = ("up", "down", "left", "right")
KEYS = (
    "back",
    "home",
    "enter",
    "recent",
    "tab",
    "escape",
    "backspace",
    "delete",
    "space",
    "up",
    "down",
    "left",
    "right",
    "page_up",
    "page_down",
    "volume_up",
    "volume_down",
)
MODIFIERS = ("ctrl", "alt", "shift", "meta")
"""Chord modifiers, in the canonical order of a chord's text (``ctrl+shift+z``)."""
_CHORD_KEY = re.compile(r"[a-z0-9]")
ALIASES = {
    "click": ActionKind.TAP,
    "scroll": ActionKind.SWIPE,
    "drag": ActionKind.SWIPE,
    "answer": ActionKind.DONE,
}

ACTION_DOCS: dict[ActionKind, tuple[str, str]] = {
    ActionKind.TAP: ("tap(x, y)", "tap/click the point (x, y); x, y in [0, 1]"),
    ActionKind.DOUBLE_TAP: ("double_tap(x, y)", "double-tap the point (x, y)"),
    ActionKind.LONG_PRESS: ("long_press(x, y)", "press and hold the point (x, y)"),
    ActionKind.SWIPE: (
        "swipe(direction) | swipe(x1, y1, x2, y2)",
        "move the finger up/down/left/right (swipe(up) scrolls content down), or from one point "
        "to another",
    ),
    ActionKind.TYPE: ('type("text")', "type text into the focused field (JSON string literal)"),
    ActionKind.KEY: (
        "key(name)",
        "press a key: "
        + ", ".join(KEYS)
        + "; web only: a chord of "
        + "/".join(MODIFIERS)
        + " with a key or letter joined by '+', e.g. key(ctrl+a) selects all text of a field",
    ),
    ActionKind.OPEN_APP: ('open_app("name")', "open an app by its name"),
    ActionKind.WAIT: ("wait()", "do nothing for one step"),
    ActionKind.DONE: ('done() | done("answer")', "finish the task, optionally with an answer"),
    ActionKind.HOVER: (
        "hover(x, y)",
        "web only: move the mouse pointer to (x, y) without pressing (opens hover menus)",
    ),
}


class ActionParseError(ValueError):
    """The one error raised for any string that is not a valid action."""


class ActionError(ValueError):
    """An Action was constructed with invalid fields (bad kind/coordinate/key/...)."""


def key_error(key: object) -> str | None:
    """Why ``key`` is not a valid key name or chord (None when it is one)."""
    if key in KEYS:
        return None
    valid = f"valid keys: {', '.join(KEYS)}, or a chord such as ctrl+a"
    if not isinstance(key, str) or "+" not in key:
        return f"unknown key {key!r}; {valid}"
    *mods, base = key.split("+")
    if not set(mods) <= set(MODIFIERS) or len(set(mods)) != len(mods):
        return f"key chord {key!r}: modifiers must be distinct and from {', '.join(MODIFIERS)}"
    if mods != sorted(mods, key=MODIFIERS.index):
        return f"key chord {key!r}: write modifiers in the order {'+'.join(MODIFIERS)}"
    if base not in KEYS and not _CHORD_KEY.fullmatch(base):
        return f"key chord {key!r}: {base!r} is neither a key name nor a letter/digit; {valid}"
    return None


def is_chord(key: str | None) -> bool:
    """``key`` is a modifier chord (``ctrl+a``), not a plain key name."""
    return key is not None and "+" in key


def _check_coord(name: str, value: float | None) -> None:
    if value is None:
        raise ActionError(f"coordinate {name} is required")
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ActionError(f"coordinate {name} must be a number, got {value!r}")
    if not math.isfinite(value) or not 0.0 <= value <= 1.0:
        raise ActionError(f"coordinate {name}={value!r} is outside the normalised range [0, 1]")


@dataclass(frozen=True)
class Action:
    """One GUI action. Only the fields its kind uses may be set (validated on construction)."""

    kind: ActionKind
    x: float | None = None
    y: float | None = None
    x2: float | None = None
    y2: float | None = None
    direction: str | None = None
    text: str | None = None
    key: str | None = None
    app: str | None = None

    def __post_init__(self) -> None:
        try:
            kind = ActionKind(self.kind)
        except ValueError:
            valid = ", ".join(k.value for k in ActionKind)
            raise ActionError(f"unknown action kind {self.kind!r}; valid kinds: {valid}") from None
        object.__setattr__(self, "kind", kind)
        for name in ("x", "y", "x2", "y2"):
            value = getattr(self, name)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                # ints -> float; -0.0 -> 0.0 so that equal actions have one canonical text
                try:
                    object.__setattr__(self, name, float(value) + 0.0)
                except OverflowError:  # an int beyond float range
                    raise ActionError(
                        f"coordinate {name} is outside the normalised range [0, 1]"
                    ) from None
        used = self._validate()
        set_fields = {
            n
            for n in ("x", "y", "x2", "y2", "direction", "text", "key", "app")
            if getattr(self, n) is not None
        }
        extra = set_fields - set(used)
        if extra:
            raise ActionError(f"{kind.value} does not take field(s) {sorted(extra)}")

    def _validate(self) -> tuple[str, ...]:
        kind = self.kind
        if kind in POINT_KINDS:
            _check_coord("x", self.x)
            _check_coord("y", self.y)
            return ("x", "y")
        if kind is ActionKind.SWIPE:
            if self.direction is not None:
                if self.direction not in DIRECTIONS:
                    raise ActionError(f"swipe direction {self.direction!r} not in {DIRECTIONS}")
                return ("direction",)
            for name in ("x", "y", "x2", "y2"):
                _check_coord(name, getattr(self, name))
            if (self.x, self.y) == (self.x2, self.y2):
                raise ActionError("swipe start and end points are identical")
            return ("x", "y", "x2", "y2")
        if kind is ActionKind.TYPE:
            if not isinstance(self.text, str):
                raise ActionError("type needs a text string")
            return ("text",)
        if kind is ActionKind.KEY:
            error = key_error(self.key)
            if error is not None:
                raise ActionError(error)
            return ("key",)
        if kind is ActionKind.OPEN_APP:
            if not isinstance(self.app, str) or not self.app.strip():
                raise ActionError("open_app needs a non-empty app name")
            return ("app",)
        if kind is ActionKind.DONE:
            if self.text is not None and not isinstance(self.text, str):
                raise ActionError("done's answer must be a string")
            return ("text",)
        return ()

    # -- convenience constructors -------------------------------------------------------------
    @classmethod
    def tap(cls, x: float, y: float) -> Action:
        return cls(ActionKind.TAP, x=x, y=y)

    @classmethod
    def hover(cls, x: float, y: float) -> Action:
        return cls(ActionKind.HOVER, x=x, y=y)

    @classmethod
    def swipe(cls, direction: str) -> Action:
        return cls(ActionKind.SWIPE, direction=direction)

    @classmethod
    def type_text(cls, text: str) -> Action:
        return cls(ActionKind.TYPE, text=text)

    @classmethod
    def press(cls, key: str) -> Action:
        return cls(ActionKind.KEY, key=key)

    @classmethod
    def done(cls, answer: str | None = None) -> Action:
        return cls(ActionKind.DONE, text=answer)

    # -- derived properties -------------------------------------------------------------------
    @property
    def swipe_direction(self) -> str:
        """Discretised finger direction of a swipe: the dominant axis of its motion."""
        if self.kind is not ActionKind.SWIPE:
            raise ActionError(f"{self.kind.value} has no swipe direction")
        if self.direction is not None:
            return self.direction
        assert None not in (self.x, self.y, self.x2, self.y2)
        dx = self.x2 - self.x  # type: ignore[operator]
        dy = self.y2 - self.y  # type: ignore[operator]
        if abs(dx) > abs(dy):
            return "right" if dx > 0 else "left"
        return "down" if dy > 0 else "up"

    def to_text(self) -> str:
        return format_action(self)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {"kind": self.kind.value}
        for name in ("x", "y", "x2", "y2", "direction", "text", "key", "app"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        return out

    @classmethod
    def from_dict(cls, data: dict[str, object]) -> Action:
        if not isinstance(data, dict) or "kind" not in data:
            raise ActionError(f"an action dict needs a 'kind', got {data!r}")
        allowed = {"kind", "x", "y", "x2", "y2", "direction", "text", "key", "app"}
        unknown = set(data) - allowed
        if unknown:
            raise ActionError(f"unknown action field(s) {sorted(unknown)}")
        return cls(**data)  # type: ignore[arg-type]


# -- text format --------------------------------------------------------------------------------


def _num(value: float | None) -> str:
    assert value is not None
    text = repr(float(value))
    return text[:-2] if text.endswith(".0") else text


def format_action(action: Action) -> str:
    """The canonical text of an action; ``parse_action(format_action(a)) == a``."""
    k = action.kind
    if k in POINT_KINDS:
        return f"{k.value}({_num(action.x)}, {_num(action.y)})"
    if k is ActionKind.SWIPE:
        if action.direction is not None:
            return f"swipe({action.direction})"
        coords = ", ".join(_num(v) for v in (action.x, action.y, action.x2, action.y2))
        return f"swipe({coords})"
    if k is ActionKind.TYPE:
        return f"type({json.dumps(action.text, ensure_ascii=False)})"
    if k is ActionKind.KEY:
        return f"key({action.key})"
    if k is ActionKind.OPEN_APP:
        return f"open_app({json.dumps(action.app, ensure_ascii=False)})"
    if k is ActionKind.DONE and action.text is not None:
        return f"done({json.dumps(action.text, ensure_ascii=False)})"
    return f"{k.value}()"


_CALL = re.compile(r"\A\s*([A-Za-z_]+)\s*\((.*)\)\s*\Z", re.DOTALL)
_TOKEN = re.compile(
    r"""\s*(?:
        (?P<string>"(?:[^"\\\x00-\x1f]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*")
      | (?P<number>[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)
      | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
    )\s*""",
    re.VERBOSE,
)
MAX_ACTION_TEXT = 4096
_CHORD_TEXT = re.compile(r"\s*[A-Za-z0-9_]+(?:\s*\+\s*[A-Za-z0-9_]+)+\s*")


def _tokenize_args(body: str) -> list[tuple[str, str]]:
    args: list[tuple[str, str]] = []
    if not body.strip():
        return args
    pos = 0
    while True:
        m = _TOKEN.match(body, pos)
        if m is None or m.end() == pos:
            raise ActionParseError(
                f"cannot read an argument at position {pos}: {body[pos:][:30]!r}"
            )
        kind = m.lastgroup
        assert kind is not None
        args.append((kind, m.group(kind)))
        pos = m.end()
        if pos == len(body):
            return args
        if body[pos] != ",":
            raise ActionParseError(f"expected ',' between arguments at position {pos}")
        pos += 1


def _expect(args: list[tuple[str, str]], kinds: tuple[str, ...], name: str) -> list[str]:
    got = tuple(k for k, _ in args)
    if got != kinds:
        raise ActionParseError(
            f"{name} takes ({', '.join(kinds) or 'nothing'}), got ({', '.join(got) or 'nothing'})"
        )
    return [v for _, v in args]


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ActionParseError(f"coordinate {text!r} is not finite")
    return value


def _string(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise ActionParseError(f"bad string literal {text[:40]!r}: {exc}") from None
    assert isinstance(value, str)
    return value


def parse_action(text: str) -> Action:
    """Parse one action in the text format; raise :class:`ActionParseError` on anything else."""
    if not isinstance(text, str):
        raise ActionParseError(f"expected a string, got {type(text).__name__}")
    if len(text) > MAX_ACTION_TEXT:
        raise ActionParseError(f"action text longer than {MAX_ACTION_TEXT} characters")
    m = _CALL.match(text)
    if m is None:
        raise ActionParseError(f"not an action call like tap(0.5, 0.5): {text[:60]!r}")
    name, body = m.group(1).lower(), m.group(2)
    try:
        kind = ALIASES.get(name) or ActionKind(name)
    except ValueError:
        valid = ", ".join([k.value for k in ActionKind] + sorted(ALIASES))
        raise ActionParseError(f"unknown action {name!r}; valid actions: {valid}") from None
    if kind is ActionKind.KEY and _CHORD_TEXT.fullmatch(body):
        # key(ctrl+a): "+" is no argument token; the chord is read as one name
        try:
            return Action(kind, key="+".join(p.strip() for p in body.split("+")).lower())
        except ActionError as exc:
            raise ActionParseError(str(exc)) from None
    args = _tokenize_args(body)
    try:
        if kind in POINT_KINDS:
            x, y = _expect(args, ("number", "number"), name)
            return Action(kind, x=_float(x), y=_float(y))
        if kind is ActionKind.SWIPE:
            if len(args) == 1:
                (direction,) = _expect(args, ("name",), name)
                return Action(kind, direction=direction.lower())
            x1, y1, x2, y2 = _expect(args, ("number",) * 4, name)
            return Action(kind, x=_float(x1), y=_float(y1), x2=_float(x2), y2=_float(y2))
        if kind is ActionKind.TYPE:
            (s,) = _expect(args, ("string",), name)
            return Action(kind, text=_string(s))
        if kind is ActionKind.KEY:
            if len(args) == 1 and args[0][0] == "string":
                return Action(kind, key=_string(args[0][1]).lower())
            (key,) = _expect(args, ("name",), name)
            return Action(kind, key=key.lower())
        if kind is ActionKind.OPEN_APP:
            (s,) = _expect(args, ("string",), name)
            return Action(kind, app=_string(s))
        if kind is ActionKind.DONE:
            if not args:
                return Action(kind)
            (s,) = _expect(args, ("string",), name)
            return Action(kind, text=_string(s))
        _expect(args, (), name)
        return Action(kind)
    except ActionError as exc:
        raise ActionParseError(str(exc)) from None


def action_format_help() -> str:
    """The action-format description for prompts, generated from ``ACTION_DOCS``."""
    lines = ["Answer with exactly one action; coordinates are fractions of the screen in [0, 1]."]
    for syntax, doc in ACTION_DOCS.values():
        lines.append(f"- {syntax}: {doc}")
    return "\n".join(lines)


# -- equivalence M(a, b) ------------------------------------------------------------------------


def normalised_edit_distance(a: str, b: str) -> float:
    """Levenshtein distance divided by the longer length (0 = equal, 1 = nothing shared)."""
    if a == b:
        return 0.0
    if not a or not b:
        return 1.0
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i]
        for j, cb in enumerate(b, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
        prev = cur
    return prev[-1] / max(len(a), len(b))


def normalise_text(text: str) -> str:
    """Case-folded, whitespace-collapsed text: what soft matching and partial credit compare."""
    return " ".join(text.casefold().split())


def text_similarity(a: str, b: str) -> float:
    """``1 - normalised_edit_distance`` of the normalised texts: 1 = same text, 0 = nothing shared."""
    return 1.0 - normalised_edit_distance(normalise_text(a), normalise_text(b))


# Float noise (0.55 - 0.50 = 0.05000000000000004) must not break the inclusive 5% boundary.
_BOUNDARY_SLACK = 1e-9


@dataclass(frozen=True)
class ActionMatcher:
    """The action-equivalence relation M(a, b) (paper defaults).

    Point actions match when of the same kind and within ``tol_x``/``tol_y`` (inclusive) in
    normalised coordinates; swipes by discretised direction; keys by name; apps by name
    (case-insensitive); wait/done by kind. Text inputs: ``text_mode="any"`` (paper: every two
    ``type`` actions match), ``"soft"`` (normalised edit distance <= ``text_max_distance`` after
    case-folding and whitespace collapsing) or ``"exact"``.

    :meth:`reward` is the OneStep reward against the expert's action: ``1[M(a, a^E)]`` (paper),
    or with ``partial_text_credit`` a ``type`` sample against a ``type`` expert action earns
    :func:`text_similarity` instead - near-miss texts ("jon smith" for "John Smith") then rank
    above unrelated ones inside a group, which a 0/1 reward cannot express.
    """

    tol_x: float = 0.05
    tol_y: float = 0.05
    text_mode: str = "any"
    text_max_distance: float = 0.2
    partial_text_credit: bool = False

    def __post_init__(self) -> None:
        if self.text_mode not in ("any", "soft", "exact"):
            raise ValueError(f"text_mode must be any/soft/exact, got {self.text_mode!r}")
        if self.tol_x < 0 or self.tol_y < 0:
            raise ValueError("tolerances must be non-negative")
        if not 0.0 <= self.text_max_distance <= 1.0:
            raise ValueError(f"text_max_distance must be in [0, 1], got {self.text_max_distance}")

    def texts_match(self, a: str, b: str) -> bool:
        if self.text_mode == "any":
            return True
        if self.text_mode == "exact":
            return a == b
        distance = normalised_edit_distance(normalise_text(a), normalise_text(b))
        return distance <= self.text_max_distance + _BOUNDARY_SLACK

    def reward(self, sample: Action | None, expert: Action) -> float:
        """OneStep reward of ``sample`` (``None``: unparseable, 0) against the expert's action,
        in [0, 1]: ``1[M(sample, expert)]``, or the text similarity of two ``type`` actions
        when ``partial_text_credit`` is set (whatever ``text_mode`` says)."""
        if sample is None:
            return 0.0
        both_type = sample.kind is ActionKind.TYPE and expert.kind is ActionKind.TYPE
        if self.partial_text_credit and both_type:
            assert sample.text is not None and expert.text is not None
            return text_similarity(sample.text, expert.text)
        return float(self(sample, expert))

    def __call__(self, a: Action, b: Action) -> bool:
        if a.kind is not b.kind:
            return False
        kind = a.kind
        if kind in POINT_KINDS:
            assert a.x is not None and b.x is not None and a.y is not None and b.y is not None
            return (
                abs(a.x - b.x) <= self.tol_x + _BOUNDARY_SLACK
                and abs(a.y - b.y) <= self.tol_y + _BOUNDARY_SLACK
            )
        if kind is ActionKind.SWIPE:
            return a.swipe_direction == b.swipe_direction
        if kind is ActionKind.TYPE:
            assert a.text is not None and b.text is not None
            return self.texts_match(a.text, b.text)
        if kind is ActionKind.KEY:
            return a.key == b.key
        if kind is ActionKind.OPEN_APP:
            assert a.app is not None and b.app is not None
            return a.app.strip().casefold() == b.app.strip().casefold()
        return True  # wait, done: same kind is the same decision


PAPER_MATCHER = ActionMatcher()


def actions_equivalent(a: Action, b: Action, matcher: ActionMatcher | None = None) -> bool:
    return (matcher or PAPER_MATCHER)(a, b)
