"""Experts for pages whose answer is read off the page: a word of a paragraph, a captcha, a
table cell, a sum, the parity of numbers, the shades of a color."""

from __future__ import annotations

import json
import re

from adaroll.actions import Action
from adaroll.envs.web.experts.page import Page, _fill_then, _sel, _toggle_then, expert

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
    value = p.js(
        f"X.text(X.all('#tab tr').find(r => X.text(r.cells[0]) === "
        f"{json.dumps(m.group(1))}).cells[1])"
    )
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
    rows = p.js(
        "X.all('#numbers .row').map(r => [parseInt(X.text(X.q('.display-number', r))), "
        "X.q('button.selected', r) ? X.text(X.q('button.selected', r)) : null])"
    )
    for i, (number, selected) in enumerate(rows):
        want = "Odd" if number % 2 else "Even"
        if selected != want:
            return p.act_on(f"X.q('button.{want.lower()}', X.all('#numbers .row')[{i}])")
    return p.act_on(_sel("#submit"))


@expert("click-shades")
def _click_shades(p: Page) -> Action:
    m = re.search(r"Select all the shades of (\w+)", p.utterance)
    assert m is not None
    return _toggle_then(
        p,
        "#area span",
        "[e.getAttribute('data-color'), e.classList.contains('selected')]",
        lambda color: color == m.group(1),
        _sel("#area button"),
    )
