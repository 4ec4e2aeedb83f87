"""Which curated MiniWoB++ templates a web policy can learn from what it is given: the
observation grounds the instruction, and the scripted expert acts inside the small policy's
action space.

Two checks, run on real expert episodes (``tests/envs/web/test_experts.py`` runs both on every
curated template, :func:`adaroll.policies.coverage.expert_coverage` drives them):

* **grounding** (:func:`grounding_gap`): every element the expert taps or hovers is identified
  by what the element list shows. An element is identified when its text shares a word with
  the instruction (``"green"`` - a box's colour, :mod:`adaroll.envs.web.dom` - for "the shades
  of green"), when every other element on that screen with its description (role and text) is
  one the expert also acts on in the episode, or sits in a row (elements level with it) that
  lacks the instruction's words that its own row has (one star icon per e-mail), when it is a
  text field (addressed by the label beside it), or when the instruction counts positions
  ("the 2nd textbox"). Before the element list named colours, click-shades' boxes were
  text-less look-alikes and failed this;
* **action space** (:meth:`adaroll.policies.small.SmallPolicy.action_space_gap`): the policy's
  sampler can produce every expert action - a tap on a pointer option at the point the expert
  taps (within the paper's 5% tolerance), a string its ``type`` head draws from (the web's
  sources: :data:`adaroll.envs.web.suite.POLICY_TYPE_SOURCES`), a key it has.

:data:`UNREPRESENTABLE` records the curated templates that fail (with why); the test keeps the
record exact both ways. A web experiment profile refuses them when it is built
(:func:`check_representable`), before any browser starts.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from adaroll.actions import POINT_KINDS, Action
from adaroll.config import ConfigError
from adaroll.envs.base import Observation, UIElement

_WORD = re.compile(r"[^\W_]+")
_ORDINAL = re.compile(r"\b(\d+(st|nd|rd|th)|first|second|third|fourth|fifth|last)\b", re.I)

UNREPRESENTABLE: dict[str, str] = {
    "enter-date": "the expert taps a date field's month segment and types digits "
    "(MMDDYYYY) that neither the instruction nor the page holds",
    "enter-time": "the expert taps a time field's hour segment and types digits and A/P that "
    "neither the instruction nor the page holds",
    "enter-text-2": "the typed text is the quoted one in upper or lower case, not a span of "
    "the instruction",
    "text-transform": "the typed captcha is split into per-letter spans: no element text holds it",
    "simple-arithmetic": "the typed answer is a computed sum, not a string on the page",
    "form-sequence": "the slider is set by tapping a point of its track, not an element's centre",
    "use-spinner": "the spinner's up and down buttons look alike in the element list (text-less "
    "icon sprites)",
    "form-sequence-3": "the custom dropdown and its button are tapped away from the centres of "
    "the elements the list shows",
}
"""Curated templates outside the small web policy's reach, with the reason (kept exact by
``tests/envs/web/test_experts.py``)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.casefold()))


def _description(e: UIElement) -> tuple[str, str]:
    return (e.role, " ".join(e.text.casefold().split()))


def _target(elements: Sequence[UIElement], x: float, y: float) -> int | None:
    """The smallest element containing (x, y), clickable first (the small policy's tap rule)."""
    inside = [
        e for e in elements if e.bounds[0] <= x <= e.bounds[2] and e.bounds[1] <= y <= e.bounds[3]
    ]
    if not inside:
        return None

    def key(e: UIElement) -> tuple[bool, float, int]:
        area = (e.bounds[2] - e.bounds[0]) * (e.bounds[3] - e.bounds[1])
        return ("clickable" not in e.flags, area, e.id)

    return min(inside, key=key).id


def _row_words(elements: Sequence[UIElement], e: UIElement) -> frozenset[str]:
    """Words of the elements level with ``e`` (their vertical extent holds its centre)."""
    y = (e.bounds[1] + e.bounds[3]) / 2
    return frozenset().union(*(_words(o.text) for o in elements if o.bounds[1] <= y <= o.bounds[3]))


def _hit(e: UIElement, episode: Iterable[Action]) -> bool:
    return any(
        a.kind in POINT_KINDS
        and a.x is not None
        and a.y is not None
        and e.bounds[0] <= a.x <= e.bounds[2]
        and e.bounds[1] <= a.y <= e.bounds[3]
        for a in episode
    )


def grounding_gap(
    instruction: str, observation: Observation, action: Action, episode: Sequence[Action] = ()
) -> str | None:
    """Why ``observation`` does not identify the element ``action`` acts on (None: it does, or
    the action acts on no element). ``episode``: every expert action of the episode."""
    if action.kind not in POINT_KINDS or action.x is None or action.y is None:
        return None
    elements = observation.elements
    i = _target(elements, action.x, action.y)
    if i is None:
        return f"{action.to_text()} hits no listed element"
    e = next(el for el in elements if el.id == i)
    said = _words(instruction)
    if _words(e.text) & said or "editable" in e.flags or _ORDINAL.search(instruction):
        return None
    twins = [
        o
        for o in elements
        if o.id != e.id and _description(o) == _description(e) and not _hit(o, episode)
    ]
    if not twins:
        return None
    # look-alikes in rows of their own (one star per e-mail): the row names what it is about
    named = _row_words(elements, e) & said
    if all(not named <= (_row_words(elements, o) & said) for o in twins):
        return None
    return (
        f"{action.to_text()} acts on element {e.id} ({e.role} {e.text!r}), which "
        f"{len(twins)} other element(s) the expert leaves alone look alike, and the "
        "instruction names none of its words"
    )


def check_representable(templates: Iterable[str], where: str) -> None:
    """Refuse templates recorded in :data:`UNREPRESENTABLE` (a :class:`ConfigError` naming each
    with its reason and ``where`` they were asked for)."""
    bad = [t for t in templates if t in UNREPRESENTABLE]
    if bad:
        reasons = "; ".join(f"{t}: {UNREPRESENTABLE[t]}" for t in bad)
        raise ConfigError(f"{where}: template(s) the small web policy cannot act on - {reasons}")
