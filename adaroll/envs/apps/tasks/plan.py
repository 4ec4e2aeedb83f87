"""Scripted experts as plans: milestones the databases must reach, each with the UI steps that
reach it, re-planned from the live page and databases at every step.

A template's expert is a tuple of :class:`Milestone` - the same :class:`~.judge.Expect`
objects the judge checks, so the expert and the judge cannot disagree about what "done"
means - each with a sequence of steps: *navigation* (:class:`OpenApp`, :class:`Go`,
:class:`Find`) and *work on a view* (:class:`Fill`, :class:`Choose`, :class:`Pick`,
:class:`Tap`). :func:`next_action` takes the first milestone not yet reached; among its steps
it finds the *last navigation step already done* (navigation describes a path, so a later
place reached means the earlier ones no longer matter: once the message is open, "be in the
inbox" is behind us) and acts on the first step after it that is not done (a form's fields in
order, skipping those that already hold what they should). Nothing is remembered between
calls: the expert takes over any state - a fresh reset, a restored branch, a policy's
half-finished episode - and replans from it.

Taps go to the centre of the target element's visible box (clipped as the element list clips
it), which is where the small policy taps that element: every expert action is one the policy
can produce (``tests/envs/apps/test_experts.py`` checks it on real episodes).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from adaroll.actions import Action
from adaroll.envs.apps.state import State
from adaroll.envs.apps.tasks.judge import Expect, met


class ExpertError(RuntimeError):
    """The expert cannot plan an action from the current page (an unexpected state)."""


PAGE_JS = r"""
(() => {
  if (window.__apx) return true;
  const X = window.__apx = {};
  const norm = (s) => (s || '').replace(/\s+/g, ' ').trim().toLowerCase();
  X.shown = (el) => !!el && el.getClientRects().length > 0 &&
    getComputedStyle(el).visibility !== 'hidden';
  X.find = (loc) => {
    const roots = loc.within ? X.find(loc.within) : [document];
    let els = roots.flatMap((r) => Array.from(r.querySelectorAll(loc.sel))).filter(X.shown);
    const label = (e) => norm(e.tagName === 'INPUT' || e.tagName === 'TEXTAREA'
      ? (e.placeholder || '') : e.textContent);
    if (loc.text != null) els = els.filter((e) => label(e) === norm(loc.text));
    if (loc.has != null) els = els.filter((e) => label(e).includes(norm(loc.has)));
    return els;
  };
  // the element's box clipped by the viewport and every overflow-clipping ancestor (what the
  // element list reports as its bounds)
  X.box = (el) => {
    const r = el.getBoundingClientRect();
    let l = Math.max(r.left, 0), t = Math.max(r.top, 0);
    let rr = Math.min(r.right, innerWidth), b = Math.min(r.bottom, innerHeight);
    for (let p = el.parentElement; p && p !== document.body && p !== document.documentElement;
         p = p.parentElement) {
      const cs = getComputedStyle(p);
      if (cs.overflowX !== 'visible' || cs.overflowY !== 'visible') {
        const pr = p.getBoundingClientRect();
        l = Math.max(l, pr.left); t = Math.max(t, pr.top);
        rr = Math.min(rr, pr.right); b = Math.min(b, pr.bottom);
      }
      if (cs.position === 'fixed') break;
    }
    return (rr - l >= 1 && b - t >= 1) ? [l, t, rr, b] : null;
  };
  X.point = (loc) => {
    const els = X.find(loc);
    if (!els.length) return {missing: 'no such element'};
    if (els.length > 1 && !loc.first) return {missing: `${els.length} elements match`};
    const b = X.box(els[0]);
    if (!b) return {missing: 'element off screen'};
    return {x: (b[0] + b[2]) / 2 / innerWidth, y: (b[1] + b[3]) / 2 / innerHeight};
  };
  X.info = (loc) => {
    const el = X.find(loc)[0];
    if (!el) return null;
    return {value: el.value === undefined ? null : el.value,
            focused: document.activeElement === el,
            all: el.value !== undefined && el.selectionStart === 0 &&
                 el.selectionEnd === el.value.length,
            checked: el.getAttribute('aria-checked'), data: el.dataset.value ?? null,
            disabled: !!el.disabled, text: norm(el.textContent)};
  };
  X.where = () => ({app: window.__app ? window.__app.name : null, hash: location.hash});
  return true;
})()
"""


@dataclass(frozen=True)
class Loc:
    """An element to act on: CSS selector ``sel``, narrowed to elements whose text (a text
    field: its placeholder) equals ``text`` or contains ``has``, inside the elements ``within``
    locates. It must match one shown element (``first``: take the first of several)."""

    sel: str
    text: str | None = None
    has: str | None = None
    first: bool = False
    within: Loc | None = None

    def child(self, sel: str, text: str | None = None) -> Loc:
        """The element ``sel`` (with ``text``) inside this one (a row's "Remove" button)."""
        return Loc(sel, text=text, within=self)

    def as_dict(self) -> dict[str, Any]:
        return {
            "sel": self.sel,
            "text": self.text,
            "has": self.has,
            "first": self.first,
            "within": self.within.as_dict() if self.within else None,
        }

    def js(self) -> str:
        return json.dumps(self.as_dict())


def button(text: str) -> Loc:
    return Loc("button", text=text)


DIALOG_DELETE = Loc(".dialog button", text="Delete")
"""The confirming button of the dialog a Delete button opens."""


def field_(label: str) -> Loc:
    """A text field by its label (the placeholder every field carries)."""
    return Loc("input, textarea", text=label)


class AppPage(Protocol):
    """What the expert needs of an apps env (:class:`~adaroll.envs.apps.env.AppsEnv` is one;
    privileged access): JavaScript evaluated in its page, and every app's database now and at
    the task's start. The env imports its tasks, so the tasks name the env by this seam."""

    def evaluate(self, expression: str) -> Any: ...

    def app_state(self) -> State: ...

    def start_state(self) -> State: ...


class Ctx:
    """What a step sees: the env (privileged page access), the task's parameters and the
    databases (start and now, through the env's reader)."""

    def __init__(self, env: AppPage) -> None:
        self.env = env
        self._where: dict[str, Any] | None = None
        env.evaluate(PAGE_JS)

    def js(self, expr: str) -> Any:
        return self.env.evaluate(expr)

    @property
    def where(self) -> dict[str, Any]:
        if self._where is None:
            self._where = dict(self.js("__apx.where()"))
        return self._where

    @property
    def app(self) -> str | None:
        return self.where["app"]

    @property
    def hash(self) -> str:
        return str(self.where["hash"])

    def at(self, *views: str) -> bool:
        """Whether the page shows one of ``views``: hashes that more query parameters may
        follow, or, ending in ``/``, any hash below (``#/week/`` for every week)."""
        h = self.hash

        def shows(v: str) -> bool:
            if v.endswith("/"):
                return h.startswith(v)
            return h == v or h.startswith(v + ("&" if "?" in v else "?"))

        return any(shows(v) for v in views)

    def info(self, loc: Loc) -> dict[str, Any] | None:
        out = self.js(f"__apx.info({loc.js()})")
        return dict(out) if out else None

    def visible(self, loc: Loc) -> bool:
        return "x" in dict(self.js(f"__apx.point({loc.js()})"))

    def tap(self, loc: Loc) -> Action:
        p = dict(self.js(f"__apx.point({loc.js()})"))
        if "x" not in p:
            raise ExpertError(f"cannot tap {loc}: {p.get('missing')} (at {self.hash})")
        return Action.tap(round(p["x"], 4), round(p["y"], 4))

    def state(self) -> State:
        return self.env.app_state()

    def start(self) -> State:
        return self.env.start_state()


class Step(Protocol):
    @property
    def nav(self) -> bool:
        """A navigation step (a place on the path to the work), not work on a view."""

    def done(self, ctx: Ctx) -> bool: ...

    def act(self, ctx: Ctx) -> Action: ...


@dataclass(frozen=True)
class OpenApp:
    """Be in app ``app`` (its title ``title`` in the app switcher)."""

    nav: ClassVar[bool] = True

    app: str
    title: str

    def done(self, ctx: Ctx) -> bool:
        return ctx.app == self.app

    def act(self, ctx: Ctx) -> Action:
        return ctx.tap(Loc(".switcher a", text=self.title))


@dataclass(frozen=True)
class Go:
    """Be on a view whose hash is one of ``views`` (a query string may follow), by tapping
    ``via``."""

    nav: ClassVar[bool] = True

    views: tuple[str, ...]
    via: Loc

    def done(self, ctx: Ctx) -> bool:
        return ctx.at(*self.views)

    def act(self, ctx: Ctx) -> Action:
        return ctx.tap(self.via)


def pager_page(ctx: Ctx) -> int:
    """The page a list shows (its pager's "Page X of Y"; 1 without a pager)."""
    return int(
        ctx.js(
            "(() => { const t = document.querySelector('.page-no'); "
            "return t ? +t.textContent.split(' ')[1] : 1; })()"
        )
    )


@dataclass(frozen=True)
class Find:
    """Open the item ``target`` of a paged view (a list, a calendar week): tap it when shown,
    else page towards where ``page(ctx)`` says it is (from the live database), comparing with
    ``shown(ctx)``, the page on screen, and tapping ``forward`` or ``back``. Done on a view of
    ``opened``."""

    nav: ClassVar[bool] = True

    target: Loc
    opened: tuple[str, ...]
    page: Callable[[Ctx], int]
    shown: Callable[[Ctx], int] = pager_page
    forward: Loc = Loc("button", text="Next ›")
    back: Loc = Loc("button", text="‹ Previous")

    def done(self, ctx: Ctx) -> bool:
        return ctx.at(*self.opened)

    def act(self, ctx: Ctx) -> Action:
        if ctx.visible(self.target):
            return ctx.tap(self.target)
        want, shown = self.page(ctx), self.shown(ctx)
        if want > shown:
            return ctx.tap(self.forward)
        if want < shown:
            return ctx.tap(self.back)
        raise ExpertError(f"{self.target} is not on page {shown} as expected ({ctx.hash})")


@dataclass(frozen=True)
class Fill:
    """Text field ``target`` holds ``text``: tap it, select what it holds (``ctrl+a``), type."""

    nav: ClassVar[bool] = False

    target: Loc
    text: str

    def done(self, ctx: Ctx) -> bool:
        info = ctx.info(self.target)
        return info is not None and info["value"] == self.text

    def act(self, ctx: Ctx) -> Action:
        info = ctx.info(self.target)
        if info is None:
            raise ExpertError(f"no field {self.target} at {ctx.hash}")
        if not info["focused"]:
            return ctx.tap(self.target)
        if info["value"] and not info["all"]:
            return Action.press("ctrl+a")
        return Action.type_text(self.text)


@dataclass(frozen=True)
class Choose:
    """The radio button or switch ``target`` is checked (``on``) or not: tap it."""

    nav: ClassVar[bool] = False

    target: Loc
    on: bool = True

    def done(self, ctx: Ctx) -> bool:
        info = ctx.info(self.target)
        return info is not None and (info["checked"] == "true") == self.on

    def act(self, ctx: Ctx) -> Action:
        return ctx.tap(self.target)


@dataclass(frozen=True)
class Pick:
    """Dropdown ``name`` (labelled ``label``) holds ``option``: open its menu, tap the option."""

    nav: ClassVar[bool] = False

    name: str
    label: str
    option: str

    def done(self, ctx: Ctx) -> bool:
        info = ctx.info(Loc(f'.dropdown[data-name="{self.name}"]'))
        return info is not None and info["data"] == self.option

    def act(self, ctx: Ctx) -> Action:
        item = Loc(f'.dropdown[data-name="{self.name}"] [role="menuitem"]', text=self.option)
        if ctx.visible(item):
            return ctx.tap(item)
        return ctx.tap(Loc(f'.dropdown[data-name="{self.name}"] button.select'))


@dataclass(frozen=True)
class Tap:
    """Tap ``target``; done when ``until`` says so (default: never - a submit, whose effect
    the milestone checks)."""

    nav: ClassVar[bool] = False

    target: Loc
    until: Callable[[Ctx], bool] | None = None

    def done(self, ctx: Ctx) -> bool:
        return self.until is not None and self.until(ctx)

    def act(self, ctx: Ctx) -> Action:
        return ctx.tap(self.target)


@dataclass(frozen=True)
class Shows:
    """A :class:`Tap`'s ``until``: done once ``target`` is shown (the menu or dialog the tap
    opens). A dataclass, not a closure, so that a template row can hold it with placeholders."""

    target: Loc

    def __call__(self, ctx: Ctx) -> bool:
        return ctx.visible(self.target)


@dataclass(frozen=True)
class Milestone:
    """Database changes (``expects``) and the UI steps that make them."""

    name: str
    expects: tuple[Expect, ...]
    """What the milestone changes. Usually part of the task's goal; a milestone may also
    expect what the judge does not ask for (having opened - read - the message that holds the
    order number before filing its return)."""
    steps: tuple[Step, ...]

    def reached(self, ctx: Ctx) -> bool:
        return met(ctx.start(), ctx.state(), self.expects)


def next_action(env: AppPage, plan: tuple[Milestone, ...]) -> Action:
    """The expert's next action (module docstring)."""
    ctx = Ctx(env)
    for m in plan:
        if m.reached(ctx):
            continue
        last = max((i for i, s in enumerate(m.steps) if s.nav and s.done(ctx)), default=-1)
        for step in m.steps[last + 1 :]:
            if not step.done(ctx):
                return step.act(ctx)
        raise ExpertError(f"milestone {m.name!r}: every step is done but it is not reached")
    return Action.done()
