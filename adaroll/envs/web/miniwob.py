"""MiniWoB++ tasks: the registry of every task the ``miniwob`` package ships, the curated set
AdaRoll trains on, and the JavaScript that controls a task page.

Pages are served straight from the installed package as ``file://`` URLs
(``miniwob/html/miniwob/<task>.html``). Page API used (docs/architecture.md, "Platform notes"):
``Math.seedrandom(seed)``, ``core.startEpisodeReal()``, ``core.getUtterance()`` and the globals
``WOB_DONE_GLOBAL``, ``WOB_RAW_REWARD_GLOBAL``, ``WOB_REWARD_REASON``, ``WOB_TASK_READY``.

Episode start (:data:`START_EPISODE_JS`): seed, data mode, ``core.startEpisodeReal()``, then the
episode's wall-clock time limit is lifted - the timeout timer is cancelled and replaced by a
sentinel so that ``core.endEpisode`` still rewards exactly once - and the countdown display is
stopped. Success is ``WOB_RAW_REWARD_GLOBAL > 0`` (the raw reward: the time-scaled one uses
``Date``, which jumps across snapshot restores).

Metadata per task: ``curated`` (AdaRoll trains/evaluates on it and has a verified scripted
expert), ``max_steps`` (the step limit of an episode), ``expert_steps`` (the expert's mean
solution length), ``heldout_template`` (curated, but kept out of training: the
``heldout-templates`` split), ``tags`` (skills: text, picker, scroll, dialog, tabs, slider,
hover, multi) and ``multi_step`` (the expert needs more than one action).
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path

DEFAULT_MAX_STEPS = 10
"""Step limit of non-curated tasks."""


@dataclass(frozen=True)
class MiniWoBTask:
    """Metadata of one MiniWoB++ task (one HTML page of the package)."""

    name: str
    curated: bool = False
    max_steps: int = DEFAULT_MAX_STEPS
    expert_steps: float = 0.0
    """Mean length of the scripted expert's solution (measured on seeds 0-9; 0 = no expert)."""
    heldout_template: bool = False
    tags: tuple[str, ...] = ()
    note: str = ""

    @property
    def multi_step(self) -> bool:
        """The expert needs more than one action."""
        return self.expert_steps > 1.0

    @property
    def url(self) -> str:
        return task_url(self.name)


# Curated tasks: (max_steps, expert_steps, heldout_template, tags, note). Step limits leave
# room for a policy to err: about twice the expert's longest solution, at least 5.
_CURATED: dict[str, tuple[int, float, bool, tuple[str, ...], str]] = {
    "click-button": (5, 1.0, False, (), "click the button with a given label"),
    "click-button-sequence": (6, 2.0, False, ("multi",), "click two buttons in order"),
    "click-link": (5, 1.0, False, (), "click a link in a paragraph"),
    "click-option": (6, 2.0, False, ("multi",), "select a radio option and submit"),
    "click-checkboxes": (16, 3.1, False, ("multi",), "tick the named checkboxes and submit"),
    "click-checkboxes-transfer": (16, 2.6, True, ("multi",), "click-checkboxes, other mix"),
    "click-dialog": (5, 1.0, False, ("dialog",), "close a jQuery dialog"),
    "click-dialog-2": (5, 1.0, False, ("dialog",), "press a named dialog button"),
    "click-tab": (5, 1.0, False, ("tabs",), "click a named tab"),
    "click-tab-2": (10, 1.9, False, ("tabs", "multi"), "switch tabs to find and click a link"),
    "click-collapsible": (6, 2.0, False, ("multi",), "expand a section and submit"),
    "click-collapsible-2": (10, 2.0, False, ("multi",), "expand sections to find a link"),
    "click-widget": (5, 1.0, False, (), "click a widget of a given type"),
    "click-test-2": (5, 1.0, False, (), "click the right one of two buttons"),
    "focus-text": (5, 1.0, False, (), "focus a text field"),
    "focus-text-2": (5, 1.0, False, (), "focus the n-th text field"),
    "enter-text": (8, 3.0, False, ("text", "multi"), "type a given text and submit"),
    "enter-text-2": (8, 3.0, True, ("text", "multi"), "type a transformed text and submit"),
    "enter-password": (10, 5.0, False, ("text", "multi"), "type a password twice, submit"),
    "enter-date": (8, 3.0, False, ("text", "multi"), "type into a date input and submit"),
    "enter-time": (8, 3.0, False, ("text", "multi"), "type into a time input and submit"),
    "login-user": (10, 5.0, False, ("text", "multi"), "fill username and password, log in"),
    "login-user-popup": (12, 6.0, True, ("text", "dialog", "multi"), "log in past a popup"),
    "form-sequence": (10, 3.0, False, ("slider", "multi"), "slider, checkbox, submit"),
    "form-sequence-2": (10, 4.0, False, ("text", "multi"), "radio, number, submit"),
    "use-autocomplete": (10, 4.0, False, ("text", "picker", "multi"), "pick an autocompletion"),
    "choose-date": (20, 8.2, False, ("picker", "multi"), "pick a date in a datepicker, submit"),
    "choose-list": (10, 2.8, False, ("picker", "text", "multi"), "pick from a select, submit"),
    "navigate-tree": (10, 1.2, False, ("multi",), "expand folders to click a file"),
    "search-engine": (12, 4.8, False, ("text", "multi"), "search, page, open the n-th result"),
    "social-media": (8, 2.4, False, ("scroll", "multi"), "click an action on a user's post"),
    "social-media-some": (20, 8.5, True, ("scroll", "multi"), "act on several posts, submit"),
    "email-inbox": (16, 3.7, False, ("scroll", "text", "multi"), "reply/forward/delete/star"),
    "email-inbox-delete": (8, 1.0, False, (), "delete a given email"),
    "email-inbox-forward-nl": (14, 5.0, False, ("text", "multi"), "forward an email (free text)"),
    "email-inbox-reply": (14, 5.0, True, ("text", "multi"), "reply to an email"),
    "book-flight": (
        30,
        14.1,
        False,
        ("text", "picker", "scroll", "multi"),
        "search flights by city/date, book the cheapest/shortest",
    ),
    "book-flight-nodelay": (
        30,
        14.1,
        False,
        ("text", "picker", "scroll", "multi"),
        "book-flight without autocomplete delay",
    ),
    "choose-date-easy": (
        8,
        3.0,
        False,
        ("picker", "multi"),
        "choose-date, a date in the shown month",
    ),
    "choose-date-medium": (
        8,
        3.5,
        False,
        ("picker", "multi"),
        "choose-date, a date a few months away",
    ),
    "choose-date-nodelay": (20, 8.2, False, ("picker", "multi"), "choose-date, no animation"),
    "use-autocomplete-nodelay": (
        10,
        4.0,
        False,
        ("text", "picker", "multi"),
        "use-autocomplete without delay",
    ),
    "click-collapsible-nodelay": (6, 2.0, False, ("multi",), "click-collapsible, no animation"),
    "click-collapsible-2-nodelay": (
        10,
        2.0,
        False,
        ("multi",),
        "click-collapsible-2, no animation",
    ),
    "click-tab-2-easy": (5, 1.0, False, ("tabs",), "click-tab-2 with one tab"),
    "click-tab-2-medium": (6, 1.0, False, ("tabs",), "click-tab-2, or the empty tab if no link"),
    "click-tab-2-hard": (10, 1.6, False, ("tabs", "multi"), "click-tab-2 with 2-6 tabs"),
    "click-test": (5, 1.0, False, (), "click the only button"),
    "click-test-transfer": (5, 1.0, True, (), "click the named one of two buttons"),
    "click-checkboxes-large": (26, 9.7, False, ("multi",), "click-checkboxes, many boxes"),
    "click-menu": (6, 2.1, False, ("hover", "multi"), "hover through nested menus, click a leaf"),
    "click-menu-2": (6, 2.4, False, ("hover", "multi"), "open a menu, find an item by label/icon"),
    "click-color": (5, 1.0, False, (), "click the box of a named colour"),
    "unicode-test": (5, 1.0, False, (), "click a button with a non-ASCII label"),
    "enter-text-dynamic": (8, 3.0, False, ("text", "multi"), "type a random text and submit"),
    "use-spinner": (22, 7.1, False, ("multi",), "step a spinner to a value, submit"),
    "form-sequence-3": (10, 3.5, False, ("picker", "multi"), "custom dropdown, then a button"),
    "multi-orderings": (14, 7.0, False, ("text", "multi"), "fill a form with shuffled rows"),
    "multi-layouts": (14, 7.0, True, ("text", "multi"), "fill a form in one of five layouts"),
    "social-media-all": (26, 9.3, True, ("scroll", "multi"), "act on all posts of a user"),
    "email-inbox-forward": (14, 5.0, False, ("text", "multi"), "forward an email"),
    "email-inbox-important": (8, 1.0, False, (), "star an email"),
    "email-inbox-noscroll": (12, 2.2, False, ("text", "multi"), "email-inbox, short inbox"),
    "email-inbox-star-reply": (12, 2.2, True, ("text", "multi"), "star or reply to an email"),
    "email-inbox-nl-turk": (16, 3.2, False, ("text", "multi"), "email-inbox, crowd-written goals"),
    "email-inbox-forward-nl-turk": (
        16,
        5.2,
        False,
        ("text", "multi"),
        "forward an email, crowd-written goals",
    ),
    "find-word": (8, 3.0, False, ("text", "multi"), "type the n-th word of a paragraph, submit"),
    "text-transform": (8, 3.0, False, ("text", "multi"), "type a distorted captcha text, submit"),
    "read-table": (8, 3.0, False, ("text", "multi"), "type a value read from a table, submit"),
    "simple-arithmetic": (8, 3.0, False, ("text", "multi"), "type the result of a sum, submit"),
    "odd-or-even": (8, 4.0, False, ("multi",), "mark each number odd or even, submit"),
    "click-shades": (14, 5.5, False, ("multi",), "select every shade of a colour, submit"),
}


@functools.cache
def miniwob_html_dir() -> Path:
    """The ``html/miniwob`` directory of the installed ``miniwob`` package."""
    spec = importlib.util.find_spec("miniwob")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(
            "the web environment needs the `miniwob` package: pip install -e '.[web]'"
        )
    root = Path(next(iter(spec.submodule_search_locations)))
    html = root / "html" / "miniwob"
    if not html.is_dir():
        raise FileNotFoundError(f"miniwob package at {root} has no html/miniwob directory")
    return html


def task_url(name: str) -> str:
    """The ``file://`` URL of a task page."""
    path = miniwob_html_dir() / f"{name}.html"
    if not path.is_file():
        raise KeyError(f"unknown MiniWoB++ task {name!r}")
    return path.as_uri()


@functools.cache
def all_tasks() -> dict[str, MiniWoBTask]:
    """Every task page in the package, by name, curated ones with their metadata."""
    names = sorted(p.stem for p in miniwob_html_dir().glob("*.html"))
    tasks = {}
    for name in names:
        if name in _CURATED:
            max_steps, expert_steps, heldout, tags, note = _CURATED[name]
            tasks[name] = MiniWoBTask(name, True, max_steps, expert_steps, heldout, tags, note)
        else:
            tasks[name] = MiniWoBTask(name)
    missing = set(_CURATED) - set(tasks)
    if missing:
        raise RuntimeError(f"curated MiniWoB++ tasks missing from the package: {sorted(missing)}")
    return tasks


def get_task(name: str) -> MiniWoBTask:
    tasks = all_tasks()
    try:
        return tasks[name]
    except KeyError:
        raise KeyError(
            f"unknown MiniWoB++ task {name!r}; {len(tasks)} tasks, e.g. "
            f"{', '.join(list(tasks)[:5])}"
        ) from None


def curated_tasks(*, heldout_template: bool | None = None) -> list[str]:
    """Curated task names (optionally only the held-out-template or only the training ones)."""
    return [
        n
        for n, t in all_tasks().items()
        if t.curated and (heldout_template is None or t.heldout_template == heldout_template)
    ]


# -- page control ---------------------------------------------------------------------------------

PAGE_READY_JS = """
(() => typeof core !== 'undefined' && core.cover_div != null &&
       typeof genProblem === 'function' && document.readyState === 'complete')()
"""

START_EPISODE_JS = """
((seed, mode) => {
  Math.seedrandom(seed);
  core.setDataMode(mode);
  core.startEpisodeReal();
  // lift the wall-clock episode limit: cancel the timeout, keep a non-null sentinel so that
  // core.endEpisode still rewards exactly once, stop the countdown display
  if (core.EP_TIMER !== null) { clearTimeout(core.EP_TIMER); core.EP_TIMER = -1; }
  core.clearTimer();
  return true;
})(%s, %s)
"""

STATUS_JS = """
(() => ({done: !!WOB_DONE_GLOBAL, raw_reward: Number(WOB_RAW_REWARD_GLOBAL) || 0,
         reason: WOB_REWARD_REASON == null ? null : String(WOB_REWARD_REASON),
         ready: WOB_TASK_READY !== false}))()
"""

UTTERANCE_JS = """
(() => { const u = core.getUtterance();
         return typeof u === 'string' ? u : String(u && u.utterance || ''); })()
"""
