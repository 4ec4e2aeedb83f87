"""Experts for forms: radio buttons, checkboxes and lists to select, and text, password, date,
time, slider, spinner, autocomplete and dropdown fields to fill before submitting."""

from __future__ import annotations

import json
import re

from adaroll.actions import Action
from adaroll.envs.web.experts.page import (
    ExpertError,
    Page,
    _fill_then,
    _quoted,
    _sel,
    _toggle_then,
    expert,
)

# -- selections ---------------------------------------------------------------------------------


@expert("click-option")
def _click_option(p: Page) -> Action:
    m = re.match(r"Select (.*) and click Submit\.", p.utterance)
    assert m is not None
    radio = f"X.all('#boxes input').find(i => X.text(i.parentElement) === {json.dumps(m.group(1))})"
    if not p.js(f"{radio}.checked"):
        return p.act_on(radio)
    return p.act_on(_sel("#subbtn"))


@expert("click-checkboxes", "click-checkboxes-transfer", "click-checkboxes-large")
def _click_checkboxes(p: Page) -> Action:
    m = re.match(r"Select (.*) and click Submit\.", p.utterance)
    assert m is not None
    wanted = [] if m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    return _toggle_then(
        p,
        "#area input[type=checkbox]",
        "[X.text(e.parentElement), e.checked]",
        lambda name: name in wanted,
        _sel("#subbtn"),
    )


@expert("choose-list")
def _choose_list(p: Page) -> Action:
    m = re.match(r"Select (.*) from the list and click Submit\.", p.utterance)
    assert m is not None
    item = m.group(1)
    st = p.js(
        "(() => { const s = X.q('#options'); return {i: s.selectedIndex, f: document."
        "activeElement === s, o: Array.from(s.options).map(o => o.text)}; })()"
    )
    target = st["o"].index(item)
    if st["i"] != target:
        if not st["f"]:
            return p.act_on(_sel("#options"))
        # type-ahead selects the first option starting with the typed text; arrows do the rest
        first = next(i for i, o in enumerate(st["o"]) if o.lower().startswith(item.lower()))
        if st["i"] != first and abs(first - target) < abs(st["i"] - target):
            return Action.type_text(item)
        return Action.press("down" if st["i"] < target else "up")
    return p.act_on(_sel("#area button"))


# -- text entry -----------------------------------------------------------------------------------


@expert("enter-text", "enter-text-dynamic")
def _enter_text(p: Page) -> Action:
    (text,) = _quoted(p.utterance)[:1]
    return _fill_then(p, [(_sel("#tt"), text)], _sel("#subbtn"))


@expert("enter-text-2")
def _enter_text_2(p: Page) -> Action:
    (text,) = _quoted(p.utterance)[:1]
    text = text.upper() if "upper case" in p.utterance else text.lower()
    return _fill_then(p, [(_sel("#tt"), text)], _sel("#subbtn"))


@expert("enter-password")
def _enter_password(p: Page) -> Action:
    (pw,) = _quoted(p.utterance)[:1]
    return _fill_then(p, [(_sel("#password"), pw), (_sel("#verify"), pw)], _sel("#subbtn"))


@expert("login-user")
def _login_user(p: Page) -> Action:
    user, pw = _quoted(p.utterance)[:2]
    return _fill_then(p, [(_sel("#username"), user), (_sel("#password"), pw)], _sel("#subbtn"))


@expert("login-user-popup")
def _login_user_popup(p: Page) -> Action:
    if p.exists(_sel("#popup")):
        return p.act_on(_sel("#popup-cancel"))
    return _login_user(p)


@expert("form-sequence-2")
def _form_sequence_2(p: Page) -> Action:
    m = re.search(
        r"Check the (\d)\w\w radio button and enter the number \"(-?\d+)\" into the "
        r"(\d)\w\w textbox",
        p.utterance,
    )
    assert m is not None
    radio, number, box = m.groups()
    if not p.js(f"X.all('#area input[type=radio]')[{int(radio) - 1}].checked"):
        return p.act_on(f"X.all('#area input[type=radio]')[{int(radio) - 1}]")
    return _fill_then(p, [(_sel(f"#input-{box}"), number)], _sel("#subbtn"))


@expert("form-sequence")
def _form_sequence(p: Page) -> Action:
    m = re.search(r"Select (-?\d+) with the slider, click the (\d)\w\w checkbox", p.utterance)
    assert m is not None
    target, box = int(m.group(1)), int(m.group(2))
    st = p.js(
        "(() => { const s = $('#slider'); return {v: s.slider('value'), min: "
        "s.slider('option', 'min'), max: s.slider('option', 'max'), f: document."
        "activeElement === X.q('#slider .ui-slider-handle')}; })()"
    )
    if st["v"] != target:
        if st["f"]:
            return Action.press("right" if st["v"] < target else "left")
        # jQuery UI maps a click at fraction f of the track to the nearest step; f = 1 is the
        # track's right edge, which hit-testing puts outside it: keep the tap one pixel inside
        # (a step is many pixels wide, so the value is the same)
        inset = 1.0 / max(2.0, float(p.js("X.q('#slider').getBoundingClientRect().width")))
        frac = (target - st["min"]) / (st["max"] - st["min"])
        return p.act_on(_sel("#slider"), fx=min(max(frac, inset), 1 - inset), fy=0.5)
    for i in (1, 2, 3):
        if p.js(f"X.q('#checkbox-{i}').checked") != (i == box):
            return p.act_on(_sel(f"#checkbox-{i}"))
    return p.act_on(_sel("#subbtn"))


@expert("enter-date")
def _enter_date(p: Page) -> Action:
    m = re.search(r"(\d\d)/(\d\d)/(\d{4})", p.utterance)
    assert m is not None
    mm, dd, yyyy = m.groups()
    st = p.js("({v: X.q('#tt').value, f: document.activeElement === X.q('#tt')})")
    if st["v"] != f"{yyyy}-{mm}-{dd}":
        if not st["f"]:
            return p.act_on(_sel("#tt"), fx=0.1, fy=0.5)  # the month segment
        return Action.type_text(f"{mm}{dd}{yyyy}")
    return p.act_on(_sel("#subbtn"))


@expert("enter-time")
def _enter_time(p: Page) -> Action:
    m = re.search(r"Enter (\d{1,2}):(\d\d) (AM|PM)", p.utterance)
    assert m is not None
    hour, minute, ampm = int(m.group(1)), m.group(2), m.group(3)
    h24 = hour % 12 + (12 if ampm == "PM" else 0)
    st = p.js("({v: X.q('#tt').value, f: document.activeElement === X.q('#tt')})")
    if st["v"] != f"{h24:02d}:{minute}":
        if not st["f"]:
            return p.act_on(_sel("#tt"), fx=0.1, fy=0.5)  # the hour segment
        return Action.type_text(f"{hour:02d}{minute}{ampm[0]}")
    return p.act_on(_sel("#subbtn"))


@expert("use-autocomplete", "use-autocomplete-nodelay")
def _use_autocomplete(p: Page) -> Action:
    quoted = _quoted(p.utterance)
    start, end = quoted[0], (quoted[1] if len(quoted) > 1 else "")
    item = p.js(
        f"ITEMS.find(i => i.startsWith({json.dumps(start)}) && i.endsWith({json.dumps(end)}))"
    )
    if item is None:
        raise ExpertError(f"no item starts with {start!r} and ends with {end!r}")
    menu_item = (
        f"X.all('.ui-autocomplete .ui-menu-item').find(li => X.shown(li) && "
        f"X.text(li) === {json.dumps(item)})"
    )
    if p.js("X.q('#tags').value") != item:
        # as a person does: type the given start, pick the item from the suggestions (typing
        # the whole item, a string the instruction does not hold, is the fallback)
        if p.exists(menu_item):
            return p.act_on(menu_item)
        action = p.fill(_sel("#tags"), start) or p.fill(_sel("#tags"), item)
        assert action is not None
        return action
    if p.exists(menu_item):
        return p.act_on(menu_item)
    if p.exists("X.q('.ui-autocomplete')"):
        return Action.press("escape")
    return p.act_on(_sel("#subbtn"))


@expert("use-spinner")
def _use_spinner(p: Page) -> Action:
    """The page blocks keyboard entry into the spinner: its arrow buttons step the value."""
    m = re.search(r"Select (-?\d+) with the spinner", p.utterance)
    assert m is not None
    target = int(m.group(1))
    raw = p.js("X.q('#spinner').value")
    value = int(raw) if re.fullmatch(r"-?\d+", raw or "") else 0
    if value < target:
        return p.act_on(_sel("#area .ui-spinner-up"))
    if value > target:
        return p.act_on(_sel("#area .ui-spinner-down"))
    return p.act_on(_sel("#subbtn"))


@expert("form-sequence-3")
def _form_sequence_3(p: Page) -> Action:
    m = re.search(
        r'Choose (.+) from the dropdown, then click the button labeled "(\w+)"', p.utterance
    )
    assert m is not None
    option, button = m.groups()
    if p.js("X.q('#dropdown').value") != option:
        item = f"X.all('.selectric-items li').find(li => X.text(li) === {json.dumps(option)})"
        if p.exists(item):
            return p.act_on(item)
        return p.act_on(_sel(".selectric"))
    return p.act_on(f"X.all('#buttons button').find(b => X.text(b) === {json.dumps(button)})")


_MOVIE_FIELDS = (("genre", "Genre"), ("director", "Director"), ("year", "Year|Date"))


@expert("multi-orderings", "multi-layouts")
def _multi_layouts(p: Page) -> Action:
    """Three text fields in shuffled rows of one of several layouts: each field is found by
    the label text of its row, the submit control is the last clickable of the form."""
    m = re.search(r"Search for (\S+) movies directed by (.+) from year (\d+)\.", p.utterance)
    assert m is not None
    values = dict(zip(("genre", "director", "year"), m.groups(), strict=True))
    for key, label in _MOVIE_FIELDS:
        field = (
            f"X.all('#area input[type=text]').find(i => {{ let r = i.parentElement;"
            f" while (r && !X.text(r)) r = r.parentElement;"
            f" return r && /{label}/.test(X.text(r)); }})"
        )
        action = p.fill(field, values[key])
        if action is not None:
            return action
    return p.act_on("X.all('#area button, #area .final, #area .ui-submit').pop()")
