"""A synthetic GUI-like task family for policy tests (no environment needed).

Each example is one decision on a contacts-like screen: a title, a scrollable list of rows
with made-up names (and phone numbers), a few buttons and sometimes a focused text field. The
expert's action depends on matching instruction text against element text:

* ``open``:   'Open the contact "NAME"' -> tap the row whose text is NAME;
* ``call``:   'Call NAME now' (unquoted) -> tap that row;
* ``scroll``: the named row is not on screen -> swipe up;
* ``message``: a focused text field and 'Send "TEXT" to NAME' -> type TEXT;
* ``phone``:  'What is the phone number of "NAME"?' -> done(phone shown next to NAME).

Names are random syllable strings; ``name_pool(seed)`` pools with different seeds are
disjoint, so a policy trained on one pool is tested on names it has never seen.
"""

from __future__ import annotations

import random

from adaroll.actions import Action, ActionKind
from adaroll.envs.base import Observation, UIElement
from adaroll.policies.base import Context

SYLLABLES = [c + v for c in "bdfgklmnprstvz" for v in "aeiou"]
WORDS = [
    "hello",
    "see",
    "you",
    "soon",
    "lunch",
    "at",
    "noon",
    "call",
    "me",
    "back",
    "thanks",
    "running",
    "late",
    "meeting",
    "moved",
    "tomorrow",
    "great",
    "news",
    "ok",
]
TEMPLATES = ("open", "call", "scroll", "message", "phone")


def name_pool(seed: int, n: int = 300) -> list[str]:
    """``n`` distinct capitalised names; pools of different seeds share no name."""
    rng = random.Random(seed)
    out: set[str] = set()
    while len(out) < n:
        k = rng.choice((2, 3))
        name = "".join(rng.choice(SYLLABLES) for _ in range(k)).capitalize()
        # the seed's parity decides the last letter's class, making pools disjoint
        name += "x" if seed % 2 else "q"
        out.add(name)
    return sorted(out)


def make_example(rng: random.Random, names: list[str], template: str) -> tuple[Context, Action]:
    shown = rng.sample(names, rng.randint(6, 10))
    target = rng.choice(shown)
    rows_top = 0.12
    h = 0.07
    els: list[UIElement] = [UIElement(0, "text", "Contacts", (0.0, 0.03, 1.0, 0.09))]
    phones: dict[str, str] = {}
    for j, name in enumerate(shown):
        top = rows_top + j * h
        els.append(
            UIElement(
                len(els),
                "list_item",
                name,
                (0.0, top, 0.7, top + h),
                frozenset({"clickable", "enabled"}),
            )
        )
        phone = f"555-{rng.randint(1000, 9999)}"
        phones[name] = phone
        els.append(UIElement(len(els), "text", phone, (0.7, top, 1.0, top + h)))
    for j, label in enumerate(("Add", "Search", "Menu")):
        els.append(
            UIElement(
                len(els),
                "button",
                label,
                (0.33 * j, 0.93, 0.33 * j + 0.3, 0.99),
                frozenset({"clickable", "enabled"}),
            )
        )
    history: tuple[Action, ...] = ()
    if template == "open":
        instruction = f'Open the contact "{target}"'
    elif template == "call":
        instruction = f"Call {target} now"
    elif template == "scroll":
        hidden = rng.choice([n for n in names if n not in shown])
        instruction = f'Open the contact "{hidden}"'
        return Context(instruction, Observation(tuple(els), (1080, 2400))), Action.swipe("up")
    elif template == "message":
        text = " ".join(rng.sample(WORDS, rng.randint(1, 3)))
        instruction = f'Send "{text}" to {target}'
        els.append(
            UIElement(
                len(els),
                "text_field",
                "Message",
                (0.05, 0.85, 0.95, 0.91),
                frozenset({"clickable", "enabled", "editable", "focused"}),
            )
        )
        history = (Action.tap(0.35, 0.5), Action.tap(0.5, 0.88))
        return Context(
            instruction, Observation(tuple(els), (1080, 2400)), history
        ), Action.type_text(text)
    elif template == "phone":
        instruction = f'What is the phone number of "{target}"?'
        return Context(instruction, Observation(tuple(els), (1080, 2400))), Action.done(
            phones[target]
        )
    else:
        raise ValueError(template)
    el = next(e for e in els if e.text == target)
    x, y = el.center
    return Context(instruction, Observation(tuple(els), (1080, 2400)), history), Action(
        ActionKind.TAP, x=x, y=y
    )


def make_examples(
    seed: int, n: int, names: list[str], templates: tuple[str, ...] = TEMPLATES
) -> list[tuple[Context, Action]]:
    rng = random.Random(seed)
    return [make_example(rng, names, templates[i % len(templates)]) for i in range(n)]
