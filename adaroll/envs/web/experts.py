"""Scripted experts for the curated MiniWoB++ tasks.

Each expert is a function ``(page) -> Action`` that plans the *next* action from the page's
current state, so it can take over from any state (reset, a checkpoint, a policy's mistakes).
Experts are privileged: they read the DOM, page variables and ``core.getUtterance()`` through
:meth:`WebEnv.evaluate`; but they act only through the coordinate :class:`Action` model, like a
policy. A target is tapped at a point where ``document.elementFromPoint`` hits it (so covered
or clipped parts are avoided); an element scrolled out of its container is first brought into
view with ``swipe``.

Verification: ``python -m adaroll.envs.web.experts --seeds 5`` runs every curated task's expert
on seeds ``0..4`` through the env and reports the rate the task's own reward accepted.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from adaroll.actions import Action, ActionKind

if TYPE_CHECKING:
    from adaroll.envs.web.env import WebEnv


class ExpertError(RuntimeError):
    """The expert cannot plan an action from the current page (unexpected state)."""


HELPERS_JS = r"""
(() => {
  if (window.__adx) return;
  const W = 160, H = 210;
  const X = window.__adx = {};
  X.all = (sel, root) => Array.from((root || document).querySelectorAll(sel));
  X.q = (sel, root) => (root || document).querySelector(sel);
  X.text = (el) => el ? (el.textContent || '').replace(/\s+/g, ' ').trim() : '';
  X.shown = (el) => !!el && el.getClientRects().length > 0 &&
                    getComputedStyle(el).visibility !== 'hidden';
  X.box = (el) => {
    const r = el.getBoundingClientRect();
    let l = Math.max(r.left, 0), t = Math.max(r.top, 0);
    let rr = Math.min(r.right, W), b = Math.min(r.bottom, H);
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const pr = p.getBoundingClientRect();
        l = Math.max(l, pr.left); t = Math.max(t, pr.top);
        rr = Math.min(rr, pr.right); b = Math.min(b, pr.bottom);
      }
    }
    return (rr - l >= 1 && b - t >= 1) ? [l, t, rr, b] : null;
  };
  // a point (CSS px) inside el's visible box where el (or a descendant) is the hit element:
  // the requested one (fx, fy) if it hits, else the first of a grid that hits with a pixel to
  // spare on every side (a tap is rounded, and an element overlapping el may start right
  // there), else the first of the grid that hits at all
  X.hits = (el, x, y) => {
    const h = document.elementFromPoint(x, y);
    return !!h && (h === el || el.contains(h));
  };
  X.hit = (el, fx, fy) => {
    if (!X.shown(el)) return null;
    const b = X.box(el);
    if (!b) return null;
    const at = ([u, v]) => [b[0] + (b[2] - b[0]) * u, b[1] + (b[3] - b[1]) * v];
    if (fx !== undefined) {
      const [x, y] = at([fx, fy]);
      if (X.hits(el, x, y)) return [x, y];
    }
    const pts = [[0.5, 0.5]];
    for (const u of [0.3, 0.7, 0.15, 0.85]) for (const v of [0.5, 0.3, 0.7, 0.15, 0.85]) pts.push([u, v]);
    for (const v of [0.3, 0.7]) pts.push([0.5, v]);
    const spare = ([x, y]) => [[0, 0], [1, 0], [-1, 0], [0, 1], [0, -1]]
      .every(([dx, dy]) => X.hits(el, x + dx, y + dy));
    const robust = pts.map(at).find(spare);
    return robust || pts.map(at).find(([x, y]) => X.hits(el, x, y)) || null;
  };
  X.scrollParent = (el) => {
    for (let a = el.parentElement; a && a !== document.body; a = a.parentElement) {
      const cs = getComputedStyle(a);
      if (a.scrollHeight > a.clientHeight + 1 && /(auto|scroll)/.test(cs.overflowY)) return a;
    }
    return null;
  };
  // {x, y} normalised tap target, or {scroll: dir} to bring el into view, or {missing: why}
  X.target = (el, fx, fy) => {
    if (!el) return {missing: 'no such element'};
    if (!X.shown(el)) return {missing: 'element not displayed'};
    const p = X.hit(el, fx, fy);
    if (p) return {x: p[0] / W, y: p[1] / H};
    const sp = X.scrollParent(el);
    if (sp) {
      const r = el.getBoundingClientRect(), a = sp.getBoundingClientRect();
      const bottom = Math.min(a.bottom, H);
      if (r.top + r.height / 2 >= bottom - 1) return {scroll: 'up'};
      if (r.top + r.height / 2 <= a.top + 1) return {scroll: 'down'};
    }
    return {missing: 'element covered or off screen'};
  };
})();
"""

Expert = Callable[["Page"], Action]
EXPERTS: dict[str, Expert] = {}


def expert(*names: str) -> Callable[[Expert], Expert]:
    def add(fn: Expert) -> Expert:
        for name in names:
            EXPERTS[name] = fn
        return fn

    return add


def _r(v: float) -> float:
    return round(min(1.0, max(0.0, float(v))), 4)


class Page:
    """Privileged read access to the task page, for experts. Produces Actions only."""

    def __init__(self, env: WebEnv) -> None:
        self.env = env
        env.evaluate(HELPERS_JS)

    def js(self, body: str) -> Any:
        """Evaluate ``body`` (a JS expression) with ``X`` bound to the helper library."""
        return self.env.evaluate(f"((X) => ({body}))(window.__adx)")

    @property
    def utterance(self) -> str:
        return self.env.instruction

    def status(self) -> dict[str, Any]:
        return self.env.page_status()

    def act_on(self, el_js: str, fx: float | None = None, fy: float | None = None) -> Action:
        """Tap the element ``el_js`` evaluates to (at fractions ``fx, fy`` of its box when
        given), or swipe its scroll container to bring it into view."""
        args = f", {fx}, {fy}" if fx is not None else ""
        res = self.js(f"X.target({el_js}{args})")
        if "x" in res:
            return Action.tap(_r(res["x"]), _r(res["y"]))
        if "scroll" in res:
            return Action.swipe(res["scroll"])
        raise ExpertError(f"cannot reach {el_js}: {res.get('missing')}")

    def hover_on(self, el_js: str) -> Action:
        """Move the pointer over the element ``el_js`` (menus that open on mouse-over)."""
        action = self.act_on(el_js)
        if action.kind is ActionKind.TAP:
            assert action.x is not None and action.y is not None
            return Action.hover(action.x, action.y)
        return action

    def exists(self, el_js: str) -> bool:
        return bool(self.js(f"X.shown({el_js})"))

    def fill(self, el_js: str, value: str) -> Action | None:
        """Next action to make text field ``el_js`` hold ``value`` (None when it does).

        A wrong text is cleared as a person does, whatever its length: ``key(ctrl+a)`` selects
        it all, then ``type`` replaces the selection (or ``backspace`` deletes it). So is a
        right prefix with the caret not at its end (a tap puts the caret where it lands)."""
        st = self.js(f"(() => {{ const e = {el_js}; if (!e) return null;"
                     " const n = e.value.length, s = e.selectionStart, t = e.selectionEnd;"
                     " const all = s == null ? String(document.getSelection()) === e.value"
                     " : s === 0 && t === n;"
                     " return {v: e.value, f: document.activeElement === e, all: n > 0 && all,"
                     " end: s == null || (s === n && t === n)}; })()")  # fmt: skip
        if st is None:
            raise ExpertError(f"no field {el_js}")
        if st["v"] == value:
            return None
        if not st["f"]:
            return self.act_on(el_js)
        if st["all"]:
            return Action.type_text(value) if value else Action.press("backspace")
        if st["v"] and not (value.startswith(st["v"]) and st["end"]):
            return Action.press("ctrl+a")
        return Action.type_text(value[len(st["v"]) :])


def _quoted(text: str) -> list[str]:
    return re.findall(r'"([^"]*)"', text)


def _sel(css: str) -> str:
    return f"X.q({json.dumps(css)})"


# -- simple clicks ----------------------------------------------------------------------------------


@expert("click-button", "unicode-test")
def _click_button(p: Page) -> Action:
    (label,) = _quoted(p.utterance)[:1]
    return p.act_on(f"X.all('#area button').find(b => b.textContent === {json.dumps(label)})")


@expert("click-button-sequence")
def _click_button_sequence(p: Page) -> Action:
    pushed = p.js("buttonsPushed.length")
    return p.act_on(_sel("#subbtn" if pushed == 0 else "#subbtn2"))


@expert("click-test-transfer")
def _click_test_transfer(p: Page) -> Action:
    m = re.search(r"Click button (\w+)\.", p.utterance)
    assert m is not None
    return p.act_on(f"X.all('#area button').find(b => X.text(b) === {json.dumps(m.group(1))})")


@expert("click-test-2", "click-test")
def _click_test_2(p: Page) -> Action:
    return p.act_on(_sel("#subbtn"))


@expert("click-link")
def _click_link(p: Page) -> Action:
    (word,) = _quoted(p.utterance)[:1]
    return p.act_on(f"X.all('.alink').find(e => e.innerHTML === {json.dumps(word)})")


@expert("click-dialog")
def _click_dialog(p: Page) -> Action:
    return p.act_on(_sel(".ui-dialog-titlebar-close"))


@expert("click-dialog-2")
def _click_dialog_2(p: Page) -> Action:
    (label,) = _quoted(p.utterance)[:1]
    if label == "x":
        return p.act_on(_sel(".ui-dialog-titlebar-close"))
    return p.act_on(
        f"X.all('.ui-dialog-buttonpane button').find(b => X.text(b) === {json.dumps(label)})"
    )


@expert("click-tab")
def _click_tab(p: Page) -> Action:
    n = re.search(r"Tab #(\d)", p.utterance)
    assert n is not None
    return p.act_on(_sel(f'#area ul a[href="#tabs-{n.group(1)}"]'))


@expert("click-tab-2", "click-tab-2-easy", "click-tab-2-medium", "click-tab-2-hard")
def _click_tab_2(p: Page) -> Action:
    (word,) = _quoted(p.utterance)[-1:]
    links = f"X.all('.alink').filter(e => e.innerHTML === {json.dumps(word)})"
    if p.js(f"{links}.some(e => X.shown(e))"):
        return p.act_on(f"{links}.find(e => X.shown(e))")
    if not p.js(f"{links}.length"):  # -medium empties tab 2: then its tab is the answer
        return p.act_on("X.all('#area .ui-tab')[1]")
    tab = p.js(f"{links}[0].closest('[id^=tabs-]').id")
    return p.act_on(_sel(f'#area ul a[href="#{tab}"]'))


@expert("click-collapsible", "click-collapsible-nodelay")
def _click_collapsible(p: Page) -> Action:
    if p.js("$('.ui-accordion-content:visible').length") == 0:
        return p.act_on(_sel("#area h3"))
    return p.act_on(_sel("#subbtn"))


@expert("click-collapsible-2", "click-collapsible-2-nodelay")
def _click_collapsible_2(p: Page) -> Action:
    (word,) = _quoted(p.utterance)[-1:]
    links = f"X.all('.alink').filter(e => e.innerHTML === {json.dumps(word)})"
    if p.js(f"{links}.some(e => X.shown(e))"):
        return p.act_on(f"{links}.find(e => X.shown(e))")
    return p.act_on(f"{links}[0].closest('.ui-accordion-content').previousElementSibling")


@expert("click-widget")
def _click_widget(p: Page) -> Action:
    (kind,) = _quoted(p.utterance)[:1]
    return p.act_on(f"X.q('#area [data-type={kind}]')")


@expert("focus-text")
def _focus_text(p: Page) -> Action:
    return p.act_on(_sel("#tt"))


@expert("focus-text-2")
def _focus_text_2(p: Page) -> Action:
    m = re.search(r"the (\d)(?:st|nd|rd|th) input", p.utterance)
    assert m is not None
    return p.act_on(_sel(f"#tt{m.group(1)}"))


@expert("click-menu")
def _click_menu(p: Page) -> Action:
    """Open each submenu on the path by hovering its item (a click on an item that has a
    submenu selects it: a wrong answer), then tap the leaf."""
    m = re.fullmatch(r"Select (.+)", p.utterance)
    assert m is not None
    path = m.group(1).split(">")
    ul = "X.q('#menu')"
    for depth, name in enumerate(path):
        li = (f"Array.from({ul}.children).find(li => X.text(X.q(':scope > div', li)) === "
              f"{json.dumps(name)})")  # fmt: skip
        item = f"X.q(':scope > div', {li})"
        if depth == len(path) - 1:
            return p.act_on(item)
        ul = f"X.q(':scope > ul', {li})"
        if not p.exists(ul):
            return p.hover_on(item)
    raise ExpertError(f"empty menu path in {p.utterance!r}")


@expert("click-menu-2")
def _click_menu_2(p: Page) -> Action:
    labels = _quoted(p.utterance)
    if len(labels) > 1:
        label = labels[1]
    else:  # "... the item with the <icon> icon": the query shows the icon's class
        icon = p.js("[...X.q('#query .ui-icon').classList].find(c => c !== 'ui-icon')")
        label = p.js(f"X.text(X.q('#menu .{icon}').parentElement)")
    if not p.exists(_sel("#menu")):
        return p.act_on(_sel("#open-menu"))
    item = f"X.all('#menu div').find(d => X.text(d) === {json.dumps(label)})"
    outer = f"{item}.parentElement.parentElement.closest('li')"
    if p.js(f"{outer} !== null") and not p.exists(item):
        return p.hover_on(f"X.q(':scope > div', {outer})")
    return p.act_on(item)


@expert("click-color")
def _click_color(p: Page) -> Action:
    m = re.search(r"Click on the (\w+) colored box", p.utterance)
    assert m is not None
    return p.act_on(_sel(f'#area .color[data-color="{m.group(1)}"]'))


# -- selections ---------------------------------------------------------------------------------


@expert("click-option")
def _click_option(p: Page) -> Action:
    m = re.match(r"Select (.*) and click Submit\.", p.utterance)
    assert m is not None
    radio = (f"X.all('#boxes input').find(i => X.text(i.parentElement) === "
             f"{json.dumps(m.group(1))})")  # fmt: skip
    if not p.js(f"{radio}.checked"):
        return p.act_on(radio)
    return p.act_on(_sel("#subbtn"))


@expert("click-checkboxes", "click-checkboxes-transfer", "click-checkboxes-large")
def _click_checkboxes(p: Page) -> Action:
    m = re.match(r"Select (.*) and click Submit\.", p.utterance)
    assert m is not None
    wanted = [] if m.group(1) == "nothing" else [w.strip() for w in m.group(1).split(",")]
    return _toggle_then(p, "#area input[type=checkbox]", "[X.text(e.parentElement), e.checked]",
                        lambda name: name in wanted, _sel("#subbtn"))  # fmt: skip


def _toggle_then(p: Page, css: str, read_js: str, want: Callable[[Any], bool], submit_js: str) -> Action:
    """Tap the first of the elements ``css`` whose on/off state is not ``want(label)``, else
    submit; ``read_js`` maps an element ``e`` to ``[label, on]``."""
    items = f"X.all({json.dumps(css)})"
    for i, (label, on) in enumerate(p.js(f"{items}.map(e => {read_js})")):
        if on != want(label):
            return p.act_on(f"{items}[{i}]")
    return p.act_on(submit_js)


@expert("choose-list")
def _choose_list(p: Page) -> Action:
    m = re.match(r"Select (.*) from the list and click Submit\.", p.utterance)
    assert m is not None
    item = m.group(1)
    st = p.js("(() => { const s = X.q('#options'); return {i: s.selectedIndex, f: document."
              "activeElement === s, o: Array.from(s.options).map(o => o.text)}; })()")  # fmt: skip
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


def _fill_then(p: Page, fields: Iterable[tuple[str, str]], submit_js: str) -> Action:
    for el_js, value in fields:
        action = p.fill(el_js, value)
        if action is not None:
            return action
    return p.act_on(submit_js)


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
    m = re.search(r"Check the (\d)\w\w radio button and enter the number \"(-?\d+)\" into the "
                  r"(\d)\w\w textbox", p.utterance)  # fmt: skip
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
    st = p.js("(() => { const s = $('#slider'); return {v: s.slider('value'), min: "
              "s.slider('option', 'min'), max: s.slider('option', 'max'), f: document."
              "activeElement === X.q('#slider .ui-slider-handle')}; })()")  # fmt: skip
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
    item = p.js(f"ITEMS.find(i => i.startsWith({json.dumps(start)}) && "
                f"i.endsWith({json.dumps(end)}))")  # fmt: skip
    if item is None:
        raise ExpertError(f"no item starts with {start!r} and ends with {end!r}")
    action = p.fill(_sel("#tags"), item)
    if action is not None:
        return action
    menu_item = (f"X.all('.ui-autocomplete .ui-menu-item').find(li => X.shown(li) && "
                 f"X.text(li) === {json.dumps(item)})")  # fmt: skip
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
    m = re.search(r'Choose (.+) from the dropdown, then click the button labeled "(\w+)"',
                  p.utterance)  # fmt: skip
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
        field = (f"X.all('#area input[type=text]').find(i => {{ let r = i.parentElement;"
                 f" while (r && !X.text(r)) r = r.parentElement;"
                 f" return r && /{label}/.test(X.text(r)); }})")  # fmt: skip
        action = p.fill(field, values[key])
        if action is not None:
            return action
    return p.act_on("X.all('#area button, #area .final, #area .ui-submit').pop()")


# -- reading the page -------------------------------------------------------------------------------


@expert("find-word")
def _find_word(p: Page) -> Action:
    m = re.search(r"Find the (\d+)\w\w word in the paragraph", p.utterance)
    assert m is not None
    words = p.js("X.q('#area p').textContent.trim().split(/\\s+/)")
    word = re.sub(r"[^a-zA-Z0-9]", "", words[int(m.group(1)) - 1])  # the task ignores punctuation
    return _fill_then(p, [(_sel("#answer-input"), word)], _sel("#subbtn"))


@expert("text-transform")
def _text_transform(p: Page) -> Action:
    text = p.js("X.all('#captcha span').map(s => s.textContent).join('')")
    return _fill_then(p, [(_sel("#tt"), text)], _sel("#subbtn"))


@expert("read-table")
def _read_table(p: Page) -> Action:
    m = re.search(r"Enter the value of (.+) into the text field", p.utterance)
    assert m is not None
    value = p.js(f"X.text(X.all('#tab tr').find(r => X.text(r.cells[0]) === "
                 f"{json.dumps(m.group(1))}).cells[1])")  # fmt: skip
    return _fill_then(p, [(_sel("#tt"), value)], _sel("#subbtn"))


@expert("simple-arithmetic")
def _simple_arithmetic(p: Page) -> Action:
    m = re.fullmatch(r"(-?\d+) ([-+x]) (-?\d+) =", p.js("X.text(X.q('#math-problem'))"))
    assert m is not None
    a, op, b = int(m.group(1)), m.group(2), int(m.group(3))
    answer = a + b if op == "+" else a - b if op == "-" else a * b
    return _fill_then(p, [(_sel("#math-answer"), str(answer))], _sel("#subbtn"))


@expert("odd-or-even")
def _odd_or_even(p: Page) -> Action:
    rows = p.js("X.all('#numbers .row').map(r => [parseInt(X.text(X.q('.display-number', r))), "
                "X.q('button.selected', r) ? X.text(X.q('button.selected', r)) : null])")  # fmt: skip
    for i, (number, selected) in enumerate(rows):
        want = "Odd" if number % 2 else "Even"
        if selected != want:
            return p.act_on(f"X.q('button.{want.lower()}', X.all('#numbers .row')[{i}])")
    return p.act_on(_sel("#submit"))


@expert("click-shades")
def _click_shades(p: Page) -> Action:
    m = re.search(r"Select all the shades of (\w+)", p.utterance)
    assert m is not None
    return _toggle_then(p, "#area span", "[e.getAttribute('data-color'), e.classList.contains('selected')]",
                        lambda color: color == m.group(1), _sel("#area button"))  # fmt: skip


# -- date picker ---------------------------------------------------------------------------------

_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]  # fmt: skip


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
    return p.act_on(f"X.all('#ui-datepicker-div td[data-handler=selectDay] a')"
                    f".find(a => X.text(a) === '{day}')")  # fmt: skip


@expert("choose-date", "choose-date-easy", "choose-date-medium", "choose-date-nodelay")
def _choose_date(p: Page) -> Action:
    m = re.search(r"(\d\d)/(\d\d)/(\d{4})", p.utterance)
    assert m is not None
    action = _pick_date(p, _sel("#datepicker"), int(m.group(1)), int(m.group(2)), int(m.group(3)))
    return action or p.act_on(_sel("#subbtn"))


# -- multi-page tasks -------------------------------------------------------------------------------


@expert("navigate-tree")
def _navigate_tree(p: Page) -> Action:
    (name,) = _quoted(p.utterance)[-1:]
    spans = f"X.all('#tree span').filter(s => X.text(s) === {json.dumps(name)})"
    if p.js(f"{spans}.some(s => X.shown(s))"):
        return p.act_on(f"{spans}.find(s => X.shown(s))")
    # open the outermost collapsed folder on the way to the first match
    return p.act_on(f"(() => {{ let s = {spans}[0], top = null;"
                    " for (let ul = s.closest('ul'); ul && ul.id !== 'tree';"
                    " ul = ul.parentElement.closest('ul')) {"
                    " if (!X.shown(ul)) top = ul.previousElementSibling; } return top; })()")  # fmt: skip


@expert("search-engine")
def _search_engine(p: Page) -> Action:
    m = re.search(
        r'enter "(.*)" and press "Search", then find and click the (\d+)\w\w', p.utterance
    )
    assert m is not None
    term, pos = m.group(1), int(m.group(2))
    action = p.fill(_sel("#search-text"), term)
    if action is not None:
        return action
    if not p.js("X.all('#page-content a').length") or p.js(
        "X.all('#page-content a').some(a => a.getAttribute('data-result') === '-1')"
    ):
        return p.act_on(_sel("#search"))
    page = (pos - 1) // 3 + 1
    active = p.js("X.text(X.q('#pagination li.active a'))")
    if active != str(page):
        return p.act_on(f"X.all('#pagination a').find(a => X.text(a) === '{page}')")
    return p.act_on(_sel(f'#page-content a[data-result="{pos - 1}"]'))


@expert("social-media")
def _social_media(p: Page) -> Action:
    m = re.search(r'user (\S+), click on the "(.*)" button', p.utterance)
    assert m is not None
    user, label = m.groups()
    actions = {"Share via DM": "share", "Copy link to Tweet": "copy", "Embed Tweet": "embed",
               "Mute": "menu-user", "Block": "block-user", "Report": "report", "Reply": "reply",
               "Retweet": "retweet", "Like": "like"}  # fmt: skip
    cls = actions[label]
    media = f"X.all('#area .media').find(m => X.text(X.q('.username', m)) === {json.dumps(user)})"
    if cls in ("reply", "retweet", "like"):
        return p.act_on(f"X.q('.controls .{cls}', {media})")
    if p.js(f"X.q('.controls ul', {media}).classList.contains('hide')"):
        return p.act_on(f"X.q('.controls .more', {media})")
    return p.act_on(f"X.q('.controls ul li.{cls}', {media})")


@expert("social-media-some", "social-media-all")
def _social_media_some(p: Page) -> Action:
    m = re.search(r'Click the "(\w+)" button on (\d+|all) posts? by (\S+) and then', p.utterance)
    assert m is not None
    label, user = m.group(1), m.group(3)
    cls = label.lower()
    mine = (f"X.all('#area .media').filter(m => X.text(X.q('.username', m)) === "
            f"{json.dumps(user)}).map(m => X.q('.{cls}', m))")  # fmt: skip
    amount = p.js(f"{mine}.length") if m.group(2) == "all" else int(m.group(2))
    active = p.js(f"{mine}.filter(s => s.classList.contains('active')).length")
    if active < amount:
        return p.act_on(f"{mine}.find(s => !s.classList.contains('active'))")
    if active > amount:
        return p.act_on(f"{mine}.find(s => s.classList.contains('active'))")
    return p.act_on(_sel("#submitRow button"))


_EMAIL_PATTERNS = [
    (r"Find the email by (.+) and reply to them with the text \"(.*)\"\.", "reply"),
    (r"Find the email by (.+) and forward that email to (.+)\.", "forward"),
    (r"Find the email by (.+) and click the trash icon to delete it\.", "delete"),
    (r"Find the email by (.+) and click the star icon to mark it as important\.", "important"),
]


def _email_goal(p: Page) -> tuple[str, str, str]:
    """(action, sender name, reply text or forward recipient)."""
    fields = p.js("core.currentFields || null")
    if fields and "by" in fields and "to" in fields:
        return "forward", fields["by"], fields["to"]
    if fields and "task" in fields and "by" in fields:  # the -nl-turk variants
        action = {"star": "important"}.get(fields["task"], fields["task"])
        return action, fields["by"], fields.get("message") or fields.get("to") or ""
    for pattern, action in _EMAIL_PATTERNS:
        m = re.fullmatch(pattern, p.utterance)
        if m:
            return action, m.group(1), (m.group(2) if m.lastindex and m.lastindex > 1 else "")
    raise ExpertError(f"cannot parse the email task {p.utterance!r}")


@expert("email-inbox", "email-inbox-delete", "email-inbox-forward-nl", "email-inbox-reply",
        "email-inbox-forward", "email-inbox-important", "email-inbox-noscroll",
        "email-inbox-star-reply", "email-inbox-nl-turk", "email-inbox-forward-nl-turk")
def _email_inbox(p: Page) -> Action:
    action, name, arg = _email_goal(p)
    if p.exists(_sel("#reply")):
        return _fill_then(p, [(_sel("#reply-text"), arg)], _sel("#send-reply"))
    if p.exists(_sel("#forward")):
        return _fill_then(p, [(_sel("#forward .forward-sender"), arg)], _sel("#send-forward"))
    if p.exists(_sel("#email")):
        if p.js("X.text(X.q('#email .email-sender'))") != name:
            return p.act_on(_sel("#close-email"))
        target = {"delete": "#email .trash", "important": "#email .star",
                  "reply": "#email .email-reply", "forward": "#email .email-forward"}[action]  # fmt: skip
        return p.act_on(_sel(target))
    if not p.exists(_sel("#main")):
        return p.act_on(_sel("#search-cancel"))
    thread = (f"X.all('#main .email-thread').find(t => X.text(X.q('.email-sender', t)) === "
              f"{json.dumps(name)})")  # fmt: skip
    if action == "delete":
        return p.act_on(f"X.q('.trash', {thread})")
    if action == "important":
        return p.act_on(f"X.q('.star', {thread})")
    return p.act_on(f"X.q('.email-sender', {thread})")


# -- book-flight -----------------------------------------------------------------------------------


@expert("book-flight", "book-flight-nodelay")
def _book_flight(p: Page) -> Action:
    m = re.search(r"Book the (cheapest|shortest) one-way flight from: (.+) to: (.+) on "
                  r"(\d\d)/(\d\d)/(\d{4})\.", p.utterance)  # fmt: skip
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
    return p.act_on(f"(() => {{ const fs = X.all('#results .flight'); let best = null, bv = "
                    f"Infinity; for (const f of fs) {{ const v = parseInt(X.q('{attr}', f)"
                    f".getAttribute('{key}')); if (v < bv) {{ bv = v; best = f; }} }}"
                    " return X.q('.flight-price', best); })()")  # fmt: skip


def _airport_matches(entry: str, place: str) -> bool:
    city, _, code = entry.rpartition(" (")
    return place in (city, code.rstrip(")"))


def _autocomplete_place(p: Page, field_id: str, place: str) -> Action | None:
    field = _sel(f"#{field_id}")
    value = p.js(f"{field}.value")
    if place in value and p.js(f"DOMESTIC_FLIGHTS.indexOf({json.dumps(value)}) >= 0"):
        return None
    items = p.js("X.all('.ui-autocomplete').filter(u => X.shown(u)).flatMap(u => "
                 "X.all('.ui-menu-item', u)).map(li => X.text(li))")  # fmt: skip
    for i, text in enumerate(items):
        if _airport_matches(text, place):
            return p.act_on(f"X.all('.ui-autocomplete').filter(u => X.shown(u)).flatMap(u => "
                            f"X.all('.ui-menu-item', u))[{i}]")  # fmt: skip
    # an airport code is typed as "(CODE)": as a bare substring it matches many city names
    typed = f"({place})" if re.fullmatch(r"[A-Z]{3}", place) else place
    action = p.fill(field, typed)
    if action is not None:
        return action
    # typed, but the menu does not show a match (yet): retype to reopen the search
    return Action.press("backspace")


# -- verification -----------------------------------------------------------------------------------


def verify(
    task_names: Iterable[str] | None = None,
    seeds: Iterable[int] = range(5),
    *,
    env: WebEnv | None = None,
    log: Callable[[str], None] | None = None,
) -> dict[str, dict[str, Any]]:
    """Run each task's expert on each seed through the env; per task: successes, episodes,
    rate, mean and longest solution (steps), seconds and failures (seed, reason)."""
    from adaroll.envs.base import TaskSpec
    from adaroll.envs.web.env import WebEnv
    from adaroll.envs.web.miniwob import curated_tasks

    names = list(task_names) if task_names is not None else curated_tasks()
    own = env is None
    env = env or WebEnv()
    results: dict[str, dict[str, Any]] = {}
    try:
        for name in names:
            wins, steps, most, failures = 0, 0, 0, []
            t0 = time.perf_counter()
            seed_list = list(seeds)
            for seed in seed_list:
                try:
                    actions, ok = run_expert_episode(env, TaskSpec("web", name, seed))
                    steps += len(actions)
                    most = max(most, len(actions))
                    wins += ok
                    if not ok:
                        failures.append((seed, env.page_status().get("reason") or "no reward"))
                except ExpertError as exc:
                    failures.append((seed, f"expert error: {exc}"))
            n = len(seed_list)
            results[name] = {"successes": wins, "episodes": n, "rate": wins / n if n else 0.0,
                             "mean_steps": steps / n if n else 0.0, "longest": most,
                             "seconds": time.perf_counter() - t0, "failures": failures}  # fmt: skip
            if log:
                r = results[name]
                log(f"{name:28s} {wins}/{n}  rate={r['rate']:.2f}  steps={r['mean_steps']:.1f}"
                    f"  {r['seconds']:.1f}s" + (f"  failures={failures}" if failures else ""))  # fmt: skip
    finally:
        if own:
            env.close()
    return results


def run_expert_episode(env: WebEnv, task: Any) -> tuple[list[Action], bool]:
    """Reset to ``task`` and follow its expert to the end; (actions, success)."""
    env.reset(options={"task": task})
    fn = EXPERTS[task.template]
    actions: list[Action] = []
    while True:
        action = fn(Page(env))
        actions.append(action)
        _, _, terminated, truncated, info = env.step(action)
        if terminated or truncated:
            return actions, bool(info["success"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Verify the scripted MiniWoB++ experts.")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 per task")
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--tasks", nargs="*", help="task names (default: all curated)")
    parser.add_argument("--json", action="store_true", help="print a final JSON line")
    args = parser.parse_args(argv)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    results = verify(args.tasks, seeds, log=print)
    total = sum(r["successes"] for r in results.values())
    episodes = sum(r["episodes"] for r in results.values())
    print(f"overall {total}/{episodes} = {total / max(1, episodes):.3f}")
    if args.json:
        print(json.dumps({k: {"rate": v["rate"], "episodes": v["episodes"],
                              "mean_steps": round(v["mean_steps"], 2),
                              "longest": v["longest"]}
                          for k, v in results.items()}))  # fmt: skip
    return 0 if total == episodes else 1


if __name__ == "__main__":
    sys.exit(main())
