"""Experts for pages where the answer is one tap (or a short path of them): buttons, links,
dialogs, tabs, collapsibles, widgets, focusable fields, nested menus and colored boxes."""

from __future__ import annotations

import json
import re

from adaroll.actions import Action
from adaroll.envs.web.experts.page import ExpertError, Page, _quoted, _sel, expert

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
        li = (
            f"Array.from({ul}.children).find(li => X.text(X.q(':scope > div', li)) === "
            f"{json.dumps(name)})"
        )
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
