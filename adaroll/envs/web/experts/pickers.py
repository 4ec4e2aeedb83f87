"""Experts for jQuery UI date pickers, and book-flight: a form of two airport autocompletes
and a date picker, then the cheapest or shortest flight of the results."""

from __future__ import annotations

import json
import re

from adaroll.actions import Action, ActionKind
from adaroll.envs.web.experts.page import Page, _sel, expert

# -- date picker ---------------------------------------------------------------------------------

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]


def _pick_date(p: Page, input_js: str, month: int, day: int, year: int) -> Action | None:
    """Next action to pick ``month/day/year`` in a jQuery UI datepicker bound to ``input_js``;
    None when the input holds that date."""
    want = f"{month:02d}/{day:02d}/{year}"
    if p.js(f"{input_js}.value") == want:
        return None
    if not p.exists("X.q('#ui-datepicker-div')"):
        return p.act_on(input_js)
    shown = p.js("[X.text(X.q('.ui-datepicker-month')), X.text(X.q('.ui-datepicker-year'))]")
    shown_index = int(shown[1]) * 12 + _MONTHS.index(shown[0])
    want_index = year * 12 + month - 1
    if shown_index > want_index:
        return p.act_on(_sel(".ui-datepicker-prev"))
    if shown_index < want_index:
        return p.act_on(_sel(".ui-datepicker-next"))
    return p.act_on(
        f"X.all('#ui-datepicker-div td[data-handler=selectDay] a').find(a => X.text(a) === '{day}')"
    )


@expert("choose-date", "choose-date-easy", "choose-date-medium", "choose-date-nodelay")
def _choose_date(p: Page) -> Action:
    m = re.search(r"(\d\d)/(\d\d)/(\d{4})", p.utterance)
    assert m is not None
    action = _pick_date(p, _sel("#datepicker"), int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return action or p.act_on(_sel("#subbtn"))


# -- book-flight -----------------------------------------------------------------------------------


@expert("book-flight", "book-flight-nodelay")
def _book_flight(p: Page) -> Action:
    m = re.search(
        r"Book the (cheapest|shortest) one-way flight from: (.+) to: (.+) on "
        r"(\d\d)/(\d\d)/(\d{4})\.",
        p.utterance,
    )
    assert m is not None
    goal, origin, dest = m.group(1), m.group(2), m.group(3)
    month, day, year = int(m.group(4)), int(m.group(5)), int(m.group(6))
    if p.exists(_sel("#menu")):
        for field_id, place in (("flight-from", origin), ("flight-to", dest)):
            action = _autocomplete_place(p, field_id, place)
            if action is not None:
                return action
        action = _pick_date(p, _sel("#datepicker"), month, day, year)
        if action is not None:
            return action
        return p.act_on(_sel("#search"))
    key = "data-price" if goal == "cheapest" else "data-duration"
    attr = ".flight-price" if goal == "cheapest" else ".time-duration"
    return p.act_on(
        f"(() => {{ const fs = X.all('#results .flight'); let best = null, bv = "
        f"Infinity; for (const f of fs) {{ const v = parseInt(X.q('{attr}', f)"
        f".getAttribute('{key}')); if (v < bv) {{ bv = v; best = f; }} }}"
        " return X.q('.flight-price', best); })()"
    )


def _airport_matches(entry: str, place: str) -> bool:
    city, _, code = entry.rpartition(" (")
    return place in (city, code.rstrip(")"))


def _autocomplete_place(p: Page, field_id: str, place: str) -> Action | None:
    field = _sel(f"#{field_id}")
    value = p.js(f"{field}.value")
    if place in value and p.js(f"DOMESTIC_FLIGHTS.indexOf({json.dumps(value)}) >= 0"):
        return None
    items = p.js(
        "X.all('.ui-autocomplete').filter(u => X.shown(u)).flatMap(u => "
        "X.all('.ui-menu-item', u)).map(li => X.text(li))"
    )
    for i, text in enumerate(items):
        if _airport_matches(text, place):
            pick = p.act_on(
                f"X.all('.ui-autocomplete').filter(u => X.shown(u)).flatMap(u => "
                f"X.all('.ui-menu-item', u))[{i}]"
            )
            if pick.kind is ActionKind.SWIPE:
                # below the fold of a long menu (a bare code matches city names too): narrow
                # the search to "(CODE)", a string the instruction does not hold (rare)
                return p.fill(field, f"({place})") or pick
            return pick
    # the place as the instruction gives it, which the policy can type too
    action = p.fill(field, place)
    if action is not None:
        return action
    # typed, but the menu does not show a match (yet): retype to reopen the search
    return Action.press("backspace")
